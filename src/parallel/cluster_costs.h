// File: parallel/cluster_costs.h
// TrainCosts on a real Cluster: operator times from compute/ (calibrated roofline), collective
// and p2p times from coll/ (NCCL's algorithms and protocols on the Cluster, analytical or flow
// fidelity). A group coll/ refuses is our bug (NDT_CHECK), never priced by another model.
// Seconds.
#ifndef NDTWIN_PARALLEL_CLUSTER_COSTS_H_
#define NDTWIN_PARALLEL_CLUSTER_COSTS_H_

#include <string>

#include "coll/collective.h"
#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "parallel/costs.h"
#include "topo/cluster.h"

namespace ndt {

// "analytical" | "flow" into coll/'s Fidelity.
bool ParseFidelity(const std::string& s, Fidelity* out);

// Holds references: `cluster`, `cal` and `nccl` must outlive it.
class ClusterCosts : public TrainCosts {
 public:
  ClusterCosts(const Cluster& cluster, const ComputeCalibration& cal,
               const NcclCalibrationSet& nccl, Dtype precision, Fidelity fidelity);
  double OpsTime(const std::vector<Op>& ops) const override;
  double CommTime(CommKind kind, double bytes, std::span<const int> group) const override;
  double P2pTime(double bytes, int src, int dst) const override;
  double PeakFlops() const override;
  // sm_share = channels (the tuner's ring/tree channels x the run-time duplication, or NVLS's
  // CTAs) x CTAs per channel (data/nccl.yaml) / SMs; hbm_share = the bytes the
  // call moves through the GPU's memory per second over the achievable HBM bandwidth (memory_Bps
  // x the calibrated hbm_fraction). Memory traffic of a ring-style step: every byte a rank sends
  // is read from its buffer, and every byte it receives is written into its receive buffer and
  // read out of it again (to reduce or forward), so 3 x the bytes each rank sends (nccl-tests'
  // bus bytes: busbw factor x bytes). Both are capped below 1.
  CommPriced CommPricedOf(CommKind kind, double bytes, std::span<const int> group) const override;
  CommPriced P2pPricedOf(double bytes, int src, int dst) const override;
  int Sms() const override;

 private:
  const Cluster& cluster_;
  const ComputeCalibration& cal_;
  const NcclCalibrationSet& nccl_;
  Dtype precision_;
  Fidelity fidelity_;
  CommPriced Footprint(const CollResult& r, CollOp op, double bytes, int n) const;
};

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_CLUSTER_COSTS_H_
