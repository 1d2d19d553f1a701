// File: parallel/step_estimate.h
// Per-layer and per-chunk costs of a lowered training step (shared by the task-graph simulation
// in train_sim.cc and the closed form below), and the closed form itself: the pipeline runs at
// its slowest stage's pace, W = the forward + backward (and blocking sends) of one micro-batch
// through all of a stage's chunks, for (m + (pp - 1) / vpp) W with the interleaved schedule and
// (m + pp - 1) W with 1F1B and GPipe (Narayanan et al. SC21, eq. 1-2), plus 2 (pp - 1) pipeline
// sends on the fill and drain when they run on their own stream, plus the data-parallel
// reduction the last backward cannot hide, the optimizer, and ZeRO's weight all-gather. No
// events: microseconds per configuration, for the planner's first pass; the task graph
// (SimulateTrainingStep) remains the answer.
#ifndef NDTWIN_PARALLEL_STEP_ESTIMATE_H_
#define NDTWIN_PARALLEL_STEP_ESTIMATE_H_

#include <vector>

#include "parallel/strategy.h"
#include "parallel/train_sim.h"

namespace ndt {

// Times and FLOPs of one layer's forward and backward pass on one GPU.
struct LayerCost {
  double fwd_compute_s = 0, bwd_compute_s = 0;  // bwd includes recompute kernels
  double fwd_tp_s = 0, bwd_tp_s = 0;            // bwd includes recomputed forward comm
  double fwd_ep_s = 0, bwd_ep_s = 0;
  double fwd_cp_s = 0, bwd_cp_s = 0;      // exposed part
  double fwd_zero_s = 0, bwd_zero_s = 0;  // exposed ZeRO-3 weight gather / grad scatter
  double fwd_flop = 0, bwd_flop = 0;
  double params = 0;  // per GPU, for DP buckets
  double fwd_s() const { return fwd_compute_s + fwd_tp_s + fwd_ep_s + fwd_cp_s + fwd_zero_s; }
  double bwd_s() const { return bwd_compute_s + bwd_tp_s + bwd_ep_s + bwd_cp_s + bwd_zero_s; }
};

struct ChunkCost {
  LayerCost sum;                       // all layers + embedding / LM head
  std::vector<double> layer_bwd_s;     // per layer (backward order), embedding/head folded in
  std::vector<double> layer_bwd_cp_s;  // the exposed CP part of each (same order)
  std::vector<double> layer_params;    // same order
};

// What happens after a stage's last backward, per stage.
struct StageTail {
  double dp_full_s = 0;    // reducing all of the stage's gradients at once
  double dp_bucket_s = 0;  // the last bucket alone (what overlap leaves exposed at best)
  double optimizer_s = 0;
  double gather_s = 0;  // ZeRO >= 1: the updated weights' all-gather
  // Overlap slowdown (train_sim.cc Share): how much slower the backward runs beside the
  // gradient reduction, and each pass beside a pipeline send on its own stream.
  double dp_share = 0;
  double p2p_share = 0;
};

// Exposed time of the updated weights' all-gather with Strategy::overlap_param_gather: the first
// bucket's gather (first_bucket_s) before the first forward, then what the rest (full_s -
// first_bucket_s) does not hide under one micro-batch's forward of the stage (first_fwd_s), plus
// the slowdown its hidden part costs that forward (share x the hidden time, the overlap slowdown
// of train_sim.cc Share). E.g. full 1.0 s, first bucket 0.1 s, forward 0.6 s, share 0.1:
// 0.1 + (0.9 - 0.6) + 0.1 x 0.6 = 0.46 s.
double ParamGatherExposedS(double full_s, double first_bucket_s, double first_fwd_s, double share);

// Stage 0's work over all micro-batches into bd (compute, TP, EP, CP, ZeRO-3 parts); returns its
// busy time (everything but the ZeRO-3 gathers, which bd counts as DP).
double StageZeroWork(const std::vector<ChunkCost>& stage0, double micro_batches, TimeBreakdown* bd);
// Hardware FLOPs (as executed, all GPUs) and model FLOPs (no recompute) of the step into r.
void StepFlops(const TransformerSpec& m, const Strategy& s,
               const std::vector<std::vector<ChunkCost>>& chunks, TrainSimResult* r);

// chunks[stage][chunk]; p2p_s: one pipeline message. Fills step time, the stage-0 breakdown and
// the FLOPs, as SimulateTrainingStep does (tasks and events 0).
TrainSimResult EstimateStep(const TransformerSpec& m, const Strategy& s,
                            const std::vector<std::vector<ChunkCost>>& chunks,
                            const std::vector<StageTail>& tails, double p2p_s);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_STEP_ESTIMATE_H_
