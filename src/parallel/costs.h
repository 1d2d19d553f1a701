// File: parallel/costs.h
// What the training lowering needs priced, as a small interface: time of a list of operators on
// one GPU (compute/), and time of a collective or point-to-point transfer over a group of global
// ranks (coll/ on a Cluster). The lowering never knows how times are computed, so tests plug in
// closed-form fakes and the command plugs in the calibrated models (parallel/cluster_costs.h).
// Bytes are the buffer size as nccl-tests counts it (the full all-reduce / all-gather output,
// the per-rank send buffer of an all-to-all). Seconds out.
#ifndef NDTWIN_PARALLEL_COSTS_H_
#define NDTWIN_PARALLEL_COSTS_H_

#include <span>
#include <vector>

#include "model/ops.h"

namespace ndt {

enum class CommKind { kAllReduce, kReduceScatter, kAllGather, kAllToAll };

class TrainCosts {
 public:
  virtual ~TrainCosts() = default;
  // Kernels run back to back on one GPU's compute stream.
  virtual double OpsTime(const std::vector<Op>& ops) const = 0;
  // One collective over `group` (global ranks, size >= 2).
  virtual double CommTime(CommKind kind, double bytes, std::span<const int> group) const = 0;
  // One message from rank src to rank dst (src != dst).
  virtual double P2pTime(double bytes, int src, int dst) const = 0;
  // Dense peak FLOP/s of one GPU for the job's precision (for MFU).
  virtual double PeakFlops() const = 0;
};

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_COSTS_H_
