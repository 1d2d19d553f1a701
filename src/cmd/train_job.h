// File: cmd/train_job.h
// The training job as `train` takes it (size, VMs, model, strategy flags, stack, fabric,
// --tokens), declared once and shared by the commands that start from a training job (`train`,
// `fleet`): its options, the strategy they make, and one simulated iteration on the cluster
// they describe.
#ifndef NDTWIN_CMD_TRAIN_JOB_H_
#define NDTWIN_CMD_TRAIN_JOB_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
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
  int cp = 1;
  // Omitted tp/pp/dp: the best feasible (plan/choose.h); omitted ep: 1, or the best feasible
  // for an MoE model when the strategy is searched.
  std::optional<int> tp, pp, dp, ep, vpp;
  // Knobs a software stack sets unless given (parallel/stack.h).
  std::optional<bool> uneven_stages, sp, tp_overlap, no_dp_overlap, no_flash_attn,
      no_grad_accum_fusion;
  std::optional<int> zero;
  std::optional<std::string> recompute, precision, attention_kernel, cp_comm;
  std::string stack = kDefaultTrainStack, fidelity = "analytical";
  std::optional<std::string> schedule;
  std::string order;
  bool gpu_variability = true;  // the step waits for the slowest GPU (data/variability.yaml)
  double tokens = 0;
  PriceArgs prices;  // applied by the caller to its Context (PriceArgs::Apply)

  // Declares the options; `required` marks --sku and --gbs required (train), otherwise the
  // caller checks them (fleet, which also takes --step-time instead).
  void Declare(OptionList* o, bool required);
};

// --gpu-variability, as train, fleet and plan train declare it (one name, default, help).
void DeclareGpuVariability(OptionList* o, bool* on);

// train's options as cmd/train.cc's request declares them (the job, --trace, the ranges), for a
// door that runs train's steps itself (sweep's --store summary path). SameOptions checks that
// the two agree before that door uses it.
struct TrainPointRequest : CommandRequest {
  TrainJobArgs job;
  std::optional<std::string> trace;
  void Declare(OptionList* o) override;
};

// Two requests declare the same options: names, kinds, flags, ranges and defaults, in order.
bool SameOptions(CommandRequest& a, CommandRequest& b);

// What one simulated iteration of a job gives: the size, the cluster it ran on, the job with
// its strategy, and the report (parallel/train.h).
struct SimulatedTrainJob {
  const SkuSpec* sku = nullptr;
  Cluster cluster;  // left empty when a TrainJobCache built it: see shared_cluster
  std::shared_ptr<const Cluster> shared_cluster;  // the cache's, when one was given
  TrainJob job;
  TrainReport report;
  const Cluster& cluster_ref() const { return shared_cluster ? *shared_cluster : cluster; }
};

// What the points of a sweep share (issue 21): the models the options resolve to and the
// clusters (size x VMs x fabric) they build, each made once by the first point that needs it and
// kept for the run. Each is a pure function of its key and the Context, so every thread and
// every order of points gets the same, and a run with the cache gives the same results as one
// without. Errors are kept too (the same Status every time). Thread-safe; one per Context.
class TrainJobCache {
 public:
  StatusOr<std::shared_ptr<const TransformerSpec>> Model(const Context& ctx, const ModelArgs& m);
  // ctx.catalog.FindSku(name), kept; with `gpu`, also ctx.catalog.GpuOf of it (a search by name
  // that allocates: 2% of a sweep's CPU when done per point).
  StatusOr<const SkuSpec*> Sku(const Context& ctx, const std::string& name,
                               const GpuSpec** gpu = nullptr);
  struct BuiltCluster {
    std::string note;  // FabricArgs::Apply's assumption, or ""
    Status status;     // BuildCluster's error
    std::shared_ptr<const Cluster> cluster;
  };
  // REQUIRES: cs.sku, cs.gpu and cs.vms set (the fabric comes from `fabric`).
  std::shared_ptr<const BuiltCluster> ClusterFor(const Context& ctx, const ClusterSpec& cs,
                                                 const FabricArgs& fabric);
  size_t models() const;
  size_t clusters() const;

 private:
  struct ModelEntry {
    Status status;
    std::shared_ptr<const TransformerSpec> model;
  };
  struct SkuEntry {
    Status status;
    const SkuSpec* sku = nullptr;
    const GpuSpec* gpu = nullptr;
  };
  mutable std::mutex mu_;
  std::map<std::pair<const Context*, std::string>, SkuEntry> skus_;
  std::map<std::string, ModelEntry> models_;
  std::map<std::string, std::shared_ptr<const BuiltCluster>> clusters_;
  int64_t cluster_gpus_ = 0;  // in clusters_, to bound its memory
};

// Builds the cluster and the strategy the options name and simulates one iteration. Omitted
// knobs (tp, pp, dp; ZeRO and recompute beyond the stack's when nothing fits) are chosen with
// the planner's machinery (plan/choose.h) and listed first in report.chosen. Warnings go to
// `diag`. Errors: the options' (kInvalidInput, kNotFound) and the strategy's (kInfeasible,
// kDoesNotFit). With `cache`, the model and the cluster come from it (the result is the same;
// the cluster is then in shared_cluster).
StatusOr<SimulatedTrainJob> SimulateTrainJob(const Context& ctx, const TrainJobArgs& f,
                                             bool want_trace, Diagnostics* diag,
                                             TrainJobCache* cache = nullptr);

// train's --json document for the job `f` on `ctx` (its --price-per-hour already applied), as
// `ndtwin train --json` prints it without --trace or --timeline, the model and cluster from
// `cache`: what a sweep stores for a train point with --store full. Defined in cmd/train.cc
// beside the command, which renders through the same code.
StatusOr<Json> TrainJobJson(const Context& ctx, const TrainJobArgs& f, Diagnostics* diag,
                            TrainJobCache* cache);

}  // namespace ndt

#endif  // NDTWIN_CMD_TRAIN_JOB_H_
