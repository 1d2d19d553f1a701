// File: plan/plan.h
// The planning question for training: which VM size, how many, which parallelism, how long, how
// much. For every candidate size it enumerates strategies (tp in powers of two inside the NVLink
// domain dividing the heads, and the domain when the GPUs span several; pp over divisors of the
// layers up to 64, dp = GPUs / (tp * pp) dividing the global batch, sp with tp > 1, the ZeRO
// stages the stack's software runs (SoftwareStack::zero_stages: megatron-core-2024 0 and 1,
// torchtitan-fsdp2-2024 0, 2 and 3), recompute none/selective/full, ep over the divisors
// of the routed experts dividing dp for MoE models, as train checks it (CheckExpertDegree),
// unless given (1 for dense models); cp = 1), leaves the micro-batch and VPP to RunTraining's own
// choice, prunes what does not fit or divide (counted, with the commonest
// reason), scores the rest with the analytical costs, then re-scores the best K at the chosen
// fidelity (DESIGN.md: "score fast, re-score the best with full fidelity"). Sizes go best bound
// first (all GPUs at dense peak, MFU 1); a size whose bound cannot reach the current top K is
// skipped whole. A size's candidates run in parallel (OpenMP) into a pre-sized vector, and the
// skip is decided between sizes, so the result does not depend on the thread count.
// Times in seconds, money in US dollars at the size's pay-as-you-go price.
#ifndef NDTWIN_PLAN_PLAN_H_
#define NDTWIN_PLAN_PLAN_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "core/status.h"
#include "hw/catalog.h"
#include "model/transformer.h"
#include "parallel/memory_reserve.h"
#include "parallel/stack.h"
#include "parallel/strategy.h"
#include "parallel/variability.h"
#include "topo/fabric_params.h"

namespace ndt {

// What "best" means. kThroughput: most tokens/s; kTime: least time to train `tokens` (needs
// tokens); kCost: least dollars to train `tokens` (needs tokens; sizes without a price skipped).
enum class PlanObjective { kThroughput, kTime, kCost };
const char* PlanObjectiveName(PlanObjective o);  // "throughput", "time", "cost"
bool ParsePlanObjective(const std::string& s, PlanObjective* out);

struct PlanTrainRequest {
  TransformerSpec model;
  int64_t gbs = 0;                   // global batch (sequences)
  std::vector<const SkuSpec*> skus;  // sizes to consider, from one Catalog, in output order
  int gpus = 0;                      // total GPUs; sizes whose GPUs per VM do not divide it
                                     // are skipped. 0: use vms
  int vms = 0;                       // VMs of each size (when gpus == 0)
  double tokens = 0;                 // training tokens; 0: no time or cost to train
  PlanObjective objective = PlanObjective::kThroughput;
  // Expert-parallel degree every candidate runs with (--ep); nullopt: searched (MoE models).
  std::optional<int> ep;
  int top_k = 10;                       // results kept and re-scored
  Dtype precision = Dtype::kBf16;       // bf16, fp16 or fp8
  Fidelity fidelity = Fidelity::kFlow;  // for re-scoring the best top_k
  int threads = 0;                      // OpenMP threads; 0: the runtime's default
  // The assumed fat tree; tiers 0: the fewest that fit; default_radix: raised where needed.
  FabricSpec fabric{.tiers = 0, .default_radix = true};
  // The software stack (parallel/stack.h) every candidate runs with: its knobs the search does
  // not choose (FlashAttention, gradient-accumulation fusion, DP and PP overlap, TP overlap where
  // SP and tp > 1 allow it) and its ZeRO-3 traits. nullptr: Strategy's defaults (no TP overlap).
  const SoftwareStack* stack = nullptr;
  // How each size's GPUs spread in speed (parallel/variability.h): every candidate's step waits
  // for the slowest of its GPUs, as RunTraining adds it for `train`. nullptr: every GPU at the
  // median's speed (--gpu-variability=false).
  const GpuVariabilityTable* variability = nullptr;
  // What each size's GPUs reserve besides model state and activations (parallel/memory_reserve.h,
  // data/memory_reserve.yaml). Required: a size whose architecture has no entry is skipped with
  // a note.
  const MemoryReserveTable* memory_reserve = nullptr;
  // Skip a whole size when even its GPUs at dense peak (MFU 1) cannot reach the current top K.
  // Never changes the results; false scores every configuration.
  bool prune_by_bound = true;
  // Keep every feasible configuration's first-pass score in PlanTrainReport::scored; no size is
  // skipped by the bound then (a size that cannot win the objective may still be on the
  // time-cost frontier).
  bool keep_scored = false;
};

// One evaluated configuration (a size, a VM count and a resolved strategy).
struct PlanResult {
  size_t index = 0;  // position in the enumeration: the tie-breaker
  std::string sku;
  int vms = 0;
  int gpus = 0;
  Strategy strategy;  // resolved: mbs and vpp as RunTraining chose them
  double step_time_s = 0;
  double straggler_s = 0;  // of step_time_s: waiting for the slowest GPU (0: no variability)
  double tokens_per_s = 0;
  double mfu = 0;                             // fraction of dense peak
  double memory_bytes = 0;                    // peak per GPU
  double time_to_train_s = 0;                 // for request.tokens (0 without)
  double cost_usd = 0;                        // for request.tokens at the size's price (0 without)
  bool priced = false;                        // the size has a price
  Fidelity fidelity = Fidelity::kAnalytical;  // how the numbers above were computed
  int fabric_tiers = 0, fabric_radix = 0;     // the fat tree assumed (0: one VM, none)
};

struct PlanTrainReport {
  PlanObjective objective = PlanObjective::kThroughput;
  int64_t evaluated = 0;            // configurations scored (feasible or not)
  int64_t infeasible = 0;           // of those, ones that do not fit or divide
  int64_t bounded = 0;              // not scored: their size's bound could not reach the top K
  std::vector<PlanResult> results;  // best first, at most top_k
  std::vector<std::string> notes;   // sizes skipped and why, precision notes, simulator
                                    // failures (skipped; in evaluated, not infeasible; stderr)
  // Sizes whose fabric departs from the default (a larger radix to wire the VMs), one line
  // each: part of the result, so a default never decides the ranking unseen.
  std::vector<std::string> fabric_assumed;
  std::vector<std::string> unpriced;  // objective cost: sizes left out for want of a price
  // keep_scored: every feasible configuration as the first pass scored it (the closed form,
  // analytical costs), best first; `index` ties it to `results`.
  std::vector<PlanResult> scored;
};

// Progress callback: one line per size as it is scored (for stderr). May be empty.
using PlanProgress = std::function<void(const std::string& line)>;

// The knobs a caller fixed; nullopt: searched. Searched ranges: tp over powers of two inside
// the NVLink domain dividing the heads (and the domain, when the GPUs span more than one); pp
// over 1..64 (not dividing the layers only with allow_uneven: then uneven stages);
// dp = GPUs / (tp * pp * cp), dividing the global batch; ep
// over the divisors of the experts dividing dp (MoE); zero over zero_stages (empty: 0..max_zero);
// recompute none,
// selective, full; sp on where tp > 1 (it never costs time: the same bytes as TP's all-reduce in
// two halves, and less activation memory).
struct TrainSearchSpace {
  std::optional<int> tp, pp, dp, ep, zero;
  std::optional<Recompute> recompute;
  std::optional<bool> sp, tp_overlap;
  int max_zero = 1;
  std::vector<int> zero_stages;  // ascending; empty: 0..max_zero
  bool allow_uneven = true;
};

// The strategies of `space` for `gpus` GPUs (see TrainSearchSpace), each a copy of `base` (its
// gbs, cp, precision, schedule, order, overlaps and ZeRO-3 traits kept) with the searched knobs
// set, in a fixed order: tp, pp, ep, zero, recompute, each ascending. mbs and vpp are base's
// (RunTraining chooses them when the job leaves them out).
std::vector<Strategy> EnumerateTrainStrategies(const TransformerSpec& model, int gpus,
                                               int nvlink_domain_gpus, const Strategy& base,
                                               const TrainSearchSpace& space);
// The ZeRO stages the planners search under `stack` (nullptr: Strategy's defaults): its
// zero_stages, else 0 up to its own stage (at least 1).
std::vector<int> StackZeroStages(const SoftwareStack* stack);
// One line for the plan's notes when `stack` cannot run every ZeRO stage ("stack megatron-core-2024
// runs ZeRO 0 and 1 only ...: ZeRO 2 and 3 not searched; ..."), naming the stacks of `stacks`
// that run one of the others; "" when it runs them all or states none.
std::string ZeroStagesNote(const SoftwareStack& stack, const std::vector<SoftwareStack>& stacks);

// The planner's space (every knob searched, ZeRO 0 or 1) for `gbs` at `precision`.
std::vector<Strategy> EnumerateTrainStrategies(const TransformerSpec& model, int gpus,
                                               int nvlink_domain_gpus, int64_t gbs,
                                               Dtype precision);

// Shared by the planners: the OpenMP thread count for `requested` (0: the runtime's default; 1
// without OpenMP), and the one-line kInfeasible when every candidate failed: the commonest
// reason ("does not fit in GPU memory", else a message up to its advice) and a hint.
int PlanThreads(int requested);
Status NoneFeasible(const std::vector<Status>& failures);

// Runs the search. Fails with kInvalidInput on a bad request (gbs < 1, top_k < 1, no GPUs or
// VMs, time/cost without tokens, no size left to try) and kInfeasible, naming the commonest
// reason and a fix, when no configuration is feasible. Catalog and calibration are read-only.
StatusOr<PlanTrainReport> PlanTraining(const Catalog& catalog, const FabricParams& fabric,
                                       const NcclCalibrationSet& nccl,
                                       const ComputeCalibration& cal, const PlanTrainRequest& req,
                                       const PlanProgress& progress = {});

}  // namespace ndt

#endif  // NDTWIN_PLAN_PLAN_H_
