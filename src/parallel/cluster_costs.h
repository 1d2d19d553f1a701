// File: parallel/cluster_costs.h
// TrainCosts on a real Cluster: operator times from compute/ (calibrated roofline), collective
// and p2p times from the Cluster's links. Communication is priced by a ring model over the
// group's placement: inside one NVLink domain at the GPU's NVLink bandwidth; across VMs, each
// VM's ranks drive their own rail NICs (GPUDirect RDMA), so the bus bandwidth is
// min(NVLink, k * NIC) for k ranks of the group per VM; all-to-all splits into NVLink and NIC
// parts; latency per ring step from the link latencies. Peak link rates, no protocol
// efficiency: coll/ replaces this once it lands (see the lead's report). Seconds.
#ifndef NDTWIN_PARALLEL_CLUSTER_COSTS_H_
#define NDTWIN_PARALLEL_CLUSTER_COSTS_H_

#include <string>

#include "coll/collective.h"
#include "compute/compute.h"
#include "parallel/costs.h"
#include "topo/cluster.h"

namespace ndt {

// "analytical" | "flow" into coll/'s Fidelity.
bool ParseFidelity(const std::string& s, Fidelity* out);

// Holds references: `cluster` and `cal` must outlive it.
class ClusterCosts : public TrainCosts {
 public:
  ClusterCosts(const Cluster& cluster, const ComputeCalibration& cal, Dtype precision,
               Fidelity fidelity);
  double OpsTime(const std::vector<Op>& ops) const override;
  double CommTime(CommKind kind, double bytes, std::span<const int> group) const override;
  double P2pTime(double bytes, int src, int dst) const override;
  double PeakFlops() const override;

 private:
  const Cluster& cluster_;
  const ComputeCalibration& cal_;
  Dtype precision_;
  Fidelity fidelity_;
  double nvlink_Bps_ = 0;   // per GPU per direction
  double nic_Bps_ = 0;      // per GPU per direction (its rail NIC)
  double nvlink_lat_s_ = 0;
  double net_lat_s_ = 0;    // GPU to GPU across the fabric, one way
};

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_CLUSTER_COSTS_H_
