// File: parallel/train_sim.h
// One training iteration: lowers (model, resolved strategy) to a task graph of ONE pipeline
// (pp stages, each with a compute stream, forward/backward p2p streams and a DP stream) and runs
// it on the sim/ engine. Symmetry: DP replicas, TP and CP ranks of a stage are identical, so each
// is simulated once and every collective is priced for its whole group (TrainCosts): rank 0's,
// or the slowest of those that straddle two NVLink domains (TrainSimOptions).
// Per (stage, chunk) pass: layer operators (compute/) + Megatron TP communication (2 all-reduces
// per layer per pass, or with SP 2 all-gathers + 2 reduce-scatters) + EP all-to-all (dispatch
// and combine per MoE layer) + the exposed CP K/V exchange (ring or all-gather,
// parallel/context_parallel.h);
// recompute adds the forward (full) or the attention core (selective) to the backward; without
// gradient_accumulation_fusion each backward also pays a memory-bound add of its gradients. PP
// activations travel on p2p streams (scatter/gather over the TP ranks' NICs across VMs). DP
// gradients (fp32 for bf16, memory.h GradBytesPerParam) are reduced per layer bucket as the last
// micro-batch's backward produces them
// (all-reduce; ZeRO >= 1: reduce-scatter, then all-gather of the updated weights), then the
// optimizer step (memory-bound: 38 B/param moved, 52 with fp16 loss scaling). Seconds and FLOPs.
#ifndef NDTWIN_PARALLEL_TRAIN_SIM_H_
#define NDTWIN_PARALLEL_TRAIN_SIM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/transformer.h"
#include "parallel/costs.h"
#include "parallel/strategy.h"

namespace ndt {

struct TimeBreakdown {
  // Of pipeline stage 0's step, summing to step_time_s.
  double compute_s = 0;    // forward + backward + recompute kernels
  double tp_comm_s = 0;    // exposed tensor-parallel communication
  double cp_comm_s = 0;    // exposed context-parallel communication
  double ep_comm_s = 0;    // exposed expert-parallel all-to-all
  double pp_bubble_s = 0;  // idle waiting on other stages (incl. p2p)
  double dp_comm_s = 0;    // exposed data-parallel gradient reduction / weight gather
  double optimizer_s = 0;
  double straggler_s = 0;  // waiting for the job's slowest GPU (parallel/variability.h)
};

// One span of the simulated timeline (for a Chrome trace; report/trace.h renders it).
struct StepSpan {
  int stage = 0;
  int stream = 0;        // index into TrainSimResult::stream_names
  std::string name;      // "fwd mb3 c1"
  std::string category;  // "forward", "backward", "pp", "dp", "optimizer", "cp" (exposed CP)
  double start_s = 0;
  double dur_s = 0;
};

struct TrainSimResult {
  double step_time_s = 0;
  double model_flop = 0;     // per iteration, all GPUs, no recompute (6N + attention)
  double hardware_flop = 0;  // per iteration, all GPUs, as executed (with recompute)
  TimeBreakdown breakdown;
  int64_t tasks = 0;
  int64_t events = 0;
  // Filled when asked (TrainSimOptions::want_trace): streams of every stage, then spans.
  std::vector<std::string> stream_names;  // "compute", "pp send fwd", "pp send bwd", "dp comm"
  std::vector<StepSpan> spans;
};

struct TrainSimOptions {
  bool want_trace = false;
  // Megatron DDP bucket size in parameters (default 40M).
  double dp_bucket_params = 40e6;
  // Closed form instead of the task graph (parallel/step_estimate.h): for searches.
  bool closed_form = false;
  // GPUs per NVLink domain (Cluster::nvlink_domain_gpus; rank r in domain r / this). When some
  // TP, CP, EP or DP x CP groups span two domains while rank 0's does not, that group kind's
  // collectives are priced on the slowest straddling group (StraddlingGroups: one per split,
  // each priced), and pipeline sends on a stage boundary that crosses domains
  // (StraddlingPipelineSend) if rank 0's does not: the step waits for the slowest. 0: unknown,
  // rank 0's groups.
  int nvlink_domain_gpus = 0;
};

// REQUIRES: s resolved by ResolveStrategy for `model`.
StatusOr<TrainSimResult> SimulateTrainingStep(const TransformerSpec& model, const Strategy& s,
                                              const TrainCosts& costs, const TrainSimOptions& opt);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_TRAIN_SIM_H_
