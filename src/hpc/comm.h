// File: hpc/comm.h
// MPI-style transfers of the HPC benchmarks priced by the collective model (coll/collective.h)
// on the cluster graph: NVLink inside a VM or an NVL72 rack, InfiniBand between. A CommCurve
// samples one collective on one group at sizes 8 B, 32 B, ... (powers of 4) up to a largest size
// and interpolates linearly in bytes between samples, so that a benchmark pricing thousands of
// messages (HPL's panel broadcasts) calls the collective model a few dozen times.
#ifndef NDTWIN_HPC_COMM_H_
#define NDTWIN_HPC_COMM_H_

#include <vector>

#include "coll/collective.h"
#include "core/status.h"
#include "topo/cluster.h"

namespace ndt {

class CommCurve {
 public:
  // A group of one rank (or none) costs nothing. host_hidden: the benchmark's host runs ahead of
  // the GPU (HPL), so a call costs its device time.
  static StatusOr<CommCurve> Build(const Cluster& c, CollOp op, const std::vector<int>& group,
                                   double max_bytes, const CollOptions& options);
  // Seconds for a message of `bytes` (0 for bytes <= 0 or a group of one).
  double Time(double bytes) const;
  bool trivial() const { return bytes_.empty(); }

 private:
  std::vector<double> bytes_, time_s_;
};

}  // namespace ndt

#endif  // NDTWIN_HPC_COMM_H_
