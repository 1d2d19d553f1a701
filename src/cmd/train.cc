// File: cmd/train.cc
// `ndtwin train`: one training iteration of a transformer on N VMs of a size: step time,
// tokens/s, model and hardware TFLOP/s per GPU, MFU, memory per GPU with its parts, a time
// breakdown, the chosen strategy, and for --tokens the time to train and its cost. Optionally a
// Chrome/Perfetto trace (--trace FILE). The numbers come from parallel/train.h.
#include "parallel/train.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "cmd/train_job.h"
#include "compute/compute.h"
#include "core/files.h"
#include "fleet/fleet.h"
#include "hw/catalog.h"
#include "parallel/cluster_costs.h"
#include "parallel/stack.h"
#include "plan/choose.h"
#include "report/timeline_json.h"
#include "report/train_render.h"
#include "topo/builders.h"

namespace ndt {
namespace {

struct TrainRequest : CommandRequest {
  TrainJobArgs job;
  std::optional<std::string> trace;
  bool timeline = false;

  void Declare(OptionList* o) override {
    job.Declare(o, /*required=*/true);
    o->Add("trace", &trace, "Write a Chrome/Perfetto trace of the step to FILE").LocalFile();
    o->Add("timeline", &timeline, "Add the step's spans per stage to the JSON").ForReport();
    RangeTrainOptions(o);
  }
};

// The document (and, when `text`, the text) of a simulated job: RunTrain's, and a sweep's
// points' through TrainJobJson.
StatusOr<CommandOutput> Render(const Context& ctx, const SimulatedTrainJob& run,
                               const std::string& stack, bool text) {
  const SkuSpec* sku = run.sku;
  const TrainJob& job = run.job;
  const TrainReport& r = run.report;
  // ZeRO-3 gathered per tensor has its own class: its gathers are a mechanism of their own.
  const IntervalClass iv = IntervalFor(ctx, *sku, TrainingIntervalWorkload(r.strategy));
  // Azure's placement limits (fleet/fleet.h): in the JSON for sizes with InfiniBand, in the text
  // where they bind (more VMs than a scale set holds by default, or NVL72 racks).
  const PlacementData& limits = ctx.fleet.placement;
  const int vms = job.num_gpus / job.gpus_per_vm;
  NDT_ASSIGN_OR_RETURN(Placement place, PlanPlacement(limits, *sku, vms, 0, false));
  TrainView v{job, stack, *sku, r, iv, place, limits, run.cluster_ref().fabric_layout().nics};
  v.gpu = &ctx.catalog.GpuOf(*sku);  // the Strategy line names the precision it computes in
  return CommandOutput{TrainJson(v), text ? TrainText(v) : std::string()};
}

StatusOr<CommandOutput> RunTrain(const Context& base, const TrainRequest& f, Diagnostics* diag) {
  std::optional<Context> priced;
  NDT_ASSIGN_OR_RETURN(const Context* c, f.job.prices.Apply(base, &priced));
  const Context& ctx = *c;
  if (f.trace.has_value() && f.trace->empty()) {
    return Status::InvalidInput("--trace needs a file name (e.g. --trace step.json)");
  }
  if (f.trace.has_value()) NDT_RETURN_IF_ERROR(CheckWritablePath(*f.trace, "--trace"));
  NDT_ASSIGN_OR_RETURN(SimulatedTrainJob run,
                       SimulateTrainJob(ctx, f.job, f.trace.has_value() || f.timeline, diag));
  const TrainReport& r = run.report;
  if (f.trace.has_value()) NDT_RETURN_IF_ERROR(WriteTrace(TrainTrace(r), *f.trace));
  NDT_ASSIGN_OR_RETURN(CommandOutput out, Render(ctx, run, f.job.stack, true));
  if (f.timeline) out.json["timeline"] = TrainTimelineJson(r.sim, r.strategy.pp);
  return out;
}

}  // namespace

StatusOr<Json> TrainJobJson(const Context& ctx, const TrainJobArgs& f, Diagnostics* diag,
                            TrainJobCache* cache) {
  NDT_ASSIGN_OR_RETURN(SimulatedTrainJob run, SimulateTrainJob(ctx, f, false, diag, cache));
  NDT_ASSIGN_OR_RETURN(CommandOutput out, Render(ctx, run, f.stack, false));
  return std::move(out.json);
}

Command TrainCommand() {
  return MakeCommand<TrainRequest>(
      "train", "Simulate one training iteration: time, memory, MFU, trace", RunTrain);
}

}  // namespace ndt
