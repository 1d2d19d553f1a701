// File: cmd/train_job.h
// The training job as `train` takes it (size, VMs, model, strategy flags, stack, fabric,
// --tokens), declared once and shared by the commands that start from a training job (`train`,
// `fleet`): its options, the strategy they make, and one simulated iteration on the cluster
// they describe.
#ifndef NDTWIN_CMD_TRAIN_JOB_H_
#define NDTWIN_CMD_TRAIN_JOB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/context.h"
#include "parallel/stack.h"
#include "parallel/train.h"
#include "topo/cluster.h"

namespace ndt {

struct TrainJobArgs {
  std::string sku;
  ModelArgs model;
  FabricArgs fabric;
  int vms = 1;
  int64_t gbs = 0;
  std::optional<int64_t> mbs;
  int cp = 1, ep = 1;
  std::optional<int> tp, pp, dp, vpp;  // omitted tp/pp/dp: the best feasible (plan/choose.h)
  bool uneven_stages = false;
  // Knobs a software stack sets unless given (parallel/stack.h).
  std::optional<bool> sp, tp_overlap, no_dp_overlap, no_flash_attn, no_grad_accum_fusion;
  std::optional<int> zero;
  std::optional<std::string> recompute, precision;
  std::string stack = kDefaultTrainStack, fidelity = "analytical";
  std::optional<std::string> schedule;
  std::string order, cp_comm = "ring";
  double tokens = 0;
  PriceArgs prices;  // applied by the caller to its Context (PriceArgs::Apply)

  // Declares the options; `required` marks --sku and --gbs required (train), otherwise the
  // caller checks them (fleet, which also takes --step-time instead).
  void Declare(OptionList* o, bool required);
};

// What one simulated iteration of a job gives: the size, the cluster it ran on, the job with
// its strategy, and the report (parallel/train.h).
struct SimulatedTrainJob {
  const SkuSpec* sku = nullptr;
  Cluster cluster;
  TrainJob job;
  TrainReport report;
};

// Builds the cluster and the strategy the options name and simulates one iteration. Omitted
// knobs (tp, pp, dp; ZeRO and recompute beyond the stack's when nothing fits) are chosen with
// the planner's machinery (plan/choose.h) and listed first in report.chosen. Warnings go to
// `diag`. Errors: the options' (kInvalidInput, kNotFound) and the strategy's (kInfeasible,
// kDoesNotFit).
StatusOr<SimulatedTrainJob> SimulateTrainJob(const Context& ctx, const TrainJobArgs& f,
                                             bool want_trace, Diagnostics* diag);

}  // namespace ndt

#endif  // NDTWIN_CMD_TRAIN_JOB_H_
