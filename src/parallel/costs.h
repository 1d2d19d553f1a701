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

// A communication call priced with what its kernels take from compute kernels that run beside
// it (overlapped): NCCL runs one CTA per channel on SMs the compute kernels then lack, and moves
// its bytes through HBM. sm_share: its CTAs over the GPU's SMs; hbm_share: the HBM bandwidth it
// uses over the achievable. A compute-bound kernel beside it runs at 1 - sm_share of its speed,
// a memory-bound one at 1 - hbm_share (parallel/train_sim.cc applies it).
struct CommPriced {
  double time_s = 0;
  double sm_share = 0;   // [0, 1)
  double hbm_share = 0;  // [0, 1)
};

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
  // The same calls with their footprint on overlapped compute; a model that does not know it
  // (a test's closed form) says it takes nothing.
  virtual CommPriced CommPricedOf(CommKind kind, double bytes, std::span<const int> group) const {
    return {CommTime(kind, bytes, group), 0, 0};
  }
  virtual CommPriced P2pPricedOf(double bytes, int src, int dst) const {
    return {P2pTime(bytes, src, dst), 0, 0};
  }
  // SMs of the GPU (0: unknown), for a userbuffers-style overlap that takes a fixed number.
  virtual int Sms() const { return 0; }
};

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_COSTS_H_
