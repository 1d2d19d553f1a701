// File: parallel/schedule.h
// Pipeline schedules as Megatron-LM runs them: the order of forward and backward passes of
// (model chunk, micro-batch) on one pipeline stage. GPipe: all forwards, then all backwards.
// 1F1B: pp - stage - 1 warm-up forwards, then one forward / one backward, then cool-down
// backwards. Interleaved 1F1B (vpp chunks per stage, Narayanan et al. SC21 §2.2.2): warm-up of
// (pp - stage - 1) * 2 + (vpp - 1) * pp chunk passes; pass k runs chunk (k mod pp*vpp) / pp
// (reversed for backward) of micro-batch (k / (pp*vpp)) * pp + k mod pp.
#ifndef NDTWIN_PARALLEL_SCHEDULE_H_
#define NDTWIN_PARALLEL_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "parallel/strategy.h"

namespace ndt {

struct PipeStep {
  bool forward = true;
  int chunk = 0;
  int64_t micro_batch = 0;
};

// The passes of `stage` in execution order (2 * m * vpp of them).
// REQUIRES: interleaved needs m % pp == 0.
std::vector<PipeStep> StageSchedule(PipeSchedule sched, int pp, int vpp, int64_t m, int stage);

// The peak of what a stage holds over its schedule: the running sum from 0, each forward pass
// of chunk c adding bytes[c] and each backward subtracting it, in StageSchedule's order, peak
// taken after every pass (at least 0). Bit for bit what walking StageSchedule's list gives, in
// O(pp * vpp) instead of O(m * vpp) for the 1F1B schedules: once a steady-state period (the
// passes repeat every pp * vpp pairs) leaves the sum exactly where it found it, the next ones
// would too, and they are skipped. REQUIRES: bytes.size() >= vpp, every bytes[c] >= 0.
double StagePeakHeld(PipeSchedule sched, int pp, int vpp, int64_t m, int stage,
                     const std::vector<double>& bytes);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_SCHEDULE_H_
