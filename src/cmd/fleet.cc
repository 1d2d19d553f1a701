// File: cmd/fleet.cc
// `ndtwin fleet`: a long training run on a real cluster. Takes the training job as `train` does
// (its step time comes from the same simulation) or a given --step-time, a run length (--tokens
// or --days) and a reliability policy (checkpoint target, interval, sync/async, spares), and
// reports interruptions by class, MTBI, checkpoint write/load, restart cost, goodput (closed form
// and Monte Carlo), time to train and cost (p10/p50/p90), lost GPU-hours by cause and Azure
// placement (scale sets, racks). The numbers come from fleet/fleet.h.
#include "fleet/fleet.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "cmd/train_job.h"
#include "core/units.h"
#include "hw/catalog.h"
#include "report/fleet_render.h"
#include "report/intervals.h"
#include "topo/builders.h"

namespace ndt {
namespace {

constexpr int kMaxRuns = 1000000;
// Bounds of the inputs the reliability model reads as given (a value beyond them is a typo, not a
// cluster: --step-time 1e9 ran one checkpoint interval of 11,574 days at 67.6% Monte Carlo
// goodput against a closed form of 0%). A step is a millisecond to a day; a checkpoint interval is
// at most the longest run (--days' 100 years); storage moves 10 MB/s (a throttled share) to
// 100 TB/s (ten times the largest Lustre file systems); a checkpoint holds at most 1 TB per GPU
// (more than any GPU's HBM and its share of host memory).
constexpr double kMaxStepS = 86400;
constexpr double kMaxIntervalS = 36500.0 * 86400;
constexpr double kMinStorageBps = 1e7, kMaxStorageBps = 1e14;
constexpr double kMaxCheckpointBytesPerGpu = 1e12;

struct FleetRequest : CommandRequest {
  TrainJobArgs job;
  std::optional<double> step_time, days;
  std::optional<int> gpus;
  double failure_scale = 1;
  std::string checkpoint_to = "blob", checkpoint_interval = "auto", init = "optimized";
  bool async_checkpoint = false, strict_placement = false;
  std::optional<std::string> storage_bw, checkpoint_size, trace;
  int spares = 0, runs = 1000, threads = 1;
  uint64_t seed = 1;

  void Declare(OptionList* o) override {
    job.Declare(o, /*required=*/false);
    o->Add("step-time", &step_time,
           "Seconds per iteration, instead of simulating one (with --sku and --gpus or --vms)");
    o->Add("gpus", &gpus, "GPUs, with --step-time (a multiple of the size's GPUs per VM)");
    o->Add("days", &days, "Run length: wall-clock days (instead of --tokens)");
    o->Add("failure-scale", &failure_scale,
           "Multiply every interruption rate (default 1: Llama 3's rates)");
    o->Add("checkpoint-to", &checkpoint_to,
           "nvme | managed-disk | blob (default) | lustre | memory");
    o->Add("storage-bw", &storage_bw,
           "Throughput of the blob account or Lustre file system, e.g. \"2 TB/s\" (default: "
           "data/storage.yaml)");
    o->Add("checkpoint-size", &checkpoint_size,
           "Checkpoint bytes per GPU, e.g. \"4 GB\" (default: the strategy's model state)");
    o->Add("async-checkpoint", &async_checkpoint,
           "Only the device-to-host copy blocks training; the write streams behind");
    o->Add("checkpoint-interval", &checkpoint_interval,
           "auto (default: the simulated optimum) | SECONDS of training between checkpoints");
    o->Add("spares", &spares, "Hot spare VMs in the job's scale set (default 0)");
    o->Add("init", &init,
           "optimized (default; MegaScale's) | unoptimized (default Megatron-LM's) job init");
    o->Add("runs", &runs, "Monte Carlo runs (default 1000)");
    o->Add("seed", &seed, "Monte Carlo seed (default 1)");
    o->Add("threads", &threads, "Threads for the Monte Carlo (default 1; same result for any)");
    o->Add("strict-placement", &strict_placement,
           "Refuse a job whose InfiniBand domain exceeds a customer scale set");
    o->Add("trace", &trace, "Write one simulated run's timeline (Perfetto JSON) to FILE")
        .LocalFile();
    // --gbs is 0 (not given) with --step-time; the rest as train's (cmd/common.h).
    o->Range("gbs", 0, static_cast<double>(kMaxGbs),
             "sequences per iteration; omit with --step-time");
    o->Range("runs", 1, 1e6, "Monte Carlo runs (10,000 take about 0.3 s)");
    o->Range("days", 1e-3, 36500, "wall-clock days, up to 100 years");
    o->Range("step-time", 1e-3, kMaxStepS, "seconds per iteration, a millisecond to a day");
    o->Range("gpus", 1, static_cast<double>(kMaxClusterGpus), "GPUs of the job, with --step-time");
    o->Range("failure-scale", 0, 1e4, "a multiple of the fitted interruption rates");
    // Spares beyond a cluster would overflow VMs + spares (--spares 2147483647 hung).
    o->Range("spares", 0, kMaxVms, "hot spare VMs");
    // Before RangeTrainOptions: fleet's --threads defaults to 1, not to all cores.
    o->Range("threads", 0, kMaxThreads, "Monte Carlo threads (0 runs on one)");
    RangeTrainOptions(o);
  }
};

// The step and the state the fleet needs from the training job.
struct JobFacts {
  const SkuSpec* sku = nullptr;
  std::optional<Cluster> cluster;
  std::string model;  // "" if none
  double step_s = 0;
  double tokens_per_step = 0;  // 0 if unknown
  double ckpt_bytes_per_gpu = 0, ckpt_total_bytes = 0;
  bool simulated = false;
};

StatusOr<JobFacts> FactsFromStepTime(const Context& ctx, const FleetRequest& f,
                                     std::optional<double> ckpt_bytes) {
  JobFacts j;
  if (f.job.sku.empty()) return Status::InvalidInput("--step-time needs --sku");
  NDT_ASSIGN_OR_RETURN(j.sku, ctx.catalog.FindSku(f.job.sku));
  int vms = f.job.vms;
  if (f.gpus.has_value()) {
    if (*f.gpus < 1 || *f.gpus % j.sku->gpus != 0) {
      return Status::InvalidInput("--gpus " + std::to_string(*f.gpus) + ": use a multiple of " +
                                  j.sku->name + "'s " + std::to_string(j.sku->gpus) +
                                  " GPUs per VM");
    }
    vms = *f.gpus / j.sku->gpus;
    // --vms is 1 unless given: another count contradicts --gpus.
    if (f.job.vms != 1 && f.job.vms != vms) {
      return Status::InvalidInput("--gpus " + std::to_string(*f.gpus) + " is " +
                                  std::to_string(vms) + " VMs of " + j.sku->name + ", but --vms " +
                                  std::to_string(f.job.vms) + "; give one of them");
    }
  }
  if (vms < 1) return Status::InvalidInput("--vms must be >= 1");
  if (vms > 1 && !j.sku->infiniband && j.sku->nvlink_domain_gpus <= j.sku->gpus) {
    return Status::InvalidInput(j.sku->name +
                                " has no InfiniBand: training across VMs needs a scale-out "
                                "network; use --vms 1 or a size with InfiniBand");
  }
  const GpuSpec& gpu = ctx.catalog.GpuOf(*j.sku);
  ClusterSpec cs;
  cs.sku = j.sku;
  cs.gpu = &gpu;
  cs.vms = vms;
  f.job.fabric.Apply(&cs);
  NDT_ASSIGN_OR_RETURN(Cluster cluster, BuildCluster(cs, ctx.fabric));
  j.step_s = *f.step_time;
  const ModelArgs& m = f.job.model;
  const bool has_model = !m.model.empty() || !m.model_file.empty() || !m.hf_config.empty() ||
                         m.arch.has_value() || m.layers.has_value();
  if (has_model) {
    NDT_ASSIGN_OR_RETURN(TransformerSpec model, m.Resolve(ctx));
    j.model = model.name;
    if (f.job.gbs > 0) j.tokens_per_step = static_cast<double>(f.job.gbs) * model.seq_len;
    // No strategy: the state (16-bit weights and mixed-precision Adam) spread over every GPU,
    // as a distributed optimizer keeps it.
    const double per_param = 2 + OptimizerStateBytesPerParam(Dtype::kBf16);
    j.ckpt_total_bytes = CountParams(model).total * per_param;
    j.ckpt_bytes_per_gpu = j.ckpt_total_bytes / cluster.num_gpus();
  }
  if (ckpt_bytes.has_value()) {
    j.ckpt_bytes_per_gpu = *ckpt_bytes;
    j.ckpt_total_bytes = *ckpt_bytes * cluster.num_gpus();
  }
  if (j.ckpt_bytes_per_gpu <= 0) {
    return Status::InvalidInput(
        "--step-time: give --model (its state sets the checkpoint size) or --checkpoint-size");
  }
  j.cluster = std::move(cluster);
  return j;
}

StatusOr<JobFacts> FactsFromTraining(const Context& ctx, const FleetRequest& f,
                                     std::optional<double> ckpt_bytes, Diagnostics* diag) {
  if (f.gpus.has_value()) return Status::InvalidInput("--gpus goes with --step-time; use --vms");
  if (f.job.gbs < 1) {
    return Status::InvalidInput(
        "--gbs (global batch, sequences) is required to simulate the step; or give --step-time");
  }
  NDT_ASSIGN_OR_RETURN(SimulatedTrainJob run, SimulateTrainJob(ctx, f.job, false, diag));
  JobFacts j;
  j.sku = run.sku;
  j.model = run.job.model.name;
  j.step_s = run.report.sim.step_time_s;
  j.tokens_per_step = static_cast<double>(run.report.strategy.gbs) * run.job.model.seq_len;
  j.simulated = true;
  j.ckpt_bytes_per_gpu =
      ckpt_bytes.value_or(CheckpointBytesPerGpu(run.report.memory, run.report.strategy));
  j.ckpt_total_bytes =
      CheckpointTotalBytes(j.ckpt_bytes_per_gpu, run.report.strategy, run.cluster.num_gpus());
  j.cluster = std::move(run.cluster);
  return j;
}

std::string Fmt(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

// The Monte Carlo's work budget: every run simulates each interruption, so the work is the
// interruptions per run times the runs (those of the interval search included). The expected wall
// time comes from the closed form at the shortest interval allowed (a lower bound of the goodput
// the search can reach); a job that would spend more than 99% of its time restarting never finishes
// and is refused.
constexpr double kMaxFleetEvents = 2e8;  // ~20 s on one core (10,000 Llama 3 runs: 4.6M, 0.3 s)

Status CheckFleetWork(const FleetModel& m, const RunLength& len, double min_interval, int runs) {
  const double goodput = EvaluateClosedForm(m, min_interval).goodput;
  if (len.work_s > 0 && !(goodput > 0.01)) {
    return Status::InvalidInput(
        "at this size and failure rate the job would spend over 99% of its time restarting "
        "(goodput " +
        Fmt("%.2g", goodput) +
        "); lower --failure-scale, use fewer GPUs or faster "
        "restarts (--spares)");
  }
  const double wall = len.wall_s > 0 ? len.wall_s : len.work_s / goodput;
  // The interval search (OptimizeInterval) scores 24 intervals on min(runs, 200) runs each.
  const double all_runs = runs + 24.0 * std::min(runs, 200);
  const double events = (m.unexpected_per_s + m.planned_per_s) * wall * all_runs;
  if (events > kMaxFleetEvents) {
    return Status::InvalidInput("the Monte Carlo would simulate about " + Fmt("%.3g", events) +
                                " interruptions (runs x interruptions per run), more than " +
                                Fmt("%.0e", kMaxFleetEvents) +
                                "; lower --runs or the run length (--days, --tokens)");
  }
  return Status::Ok();
}

StatusOr<CommandOutput> RunFleet(const Context& base, const FleetRequest& f, Diagnostics* diag) {
  std::optional<Context> priced;
  NDT_ASSIGN_OR_RETURN(const Context* c, f.job.prices.Apply(base, &priced));
  const Context& ctx = *c;
  // Run length and policy first: one line per bad input.
  if (f.days.has_value() && !(*f.days > 0)) {
    return Status::InvalidInput("--days must be > 0 (got " + Fmt("%g", *f.days) + ")");
  }
  if (f.job.tokens < 0) return Status::InvalidInput("--tokens must be > 0");
  if (f.days.has_value() == (f.job.tokens > 0)) {
    return Status::InvalidInput("give the run length: exactly one of --tokens or --days");
  }
  if (!(f.failure_scale >= 0) || !std::isfinite(f.failure_scale)) {
    return Status::InvalidInput("--failure-scale must be >= 0");
  }
  if (f.spares < 0) return Status::InvalidInput("--spares must be >= 0");
  if (f.runs < 1 || f.runs > kMaxRuns) {
    return Status::InvalidInput("--runs must be 1.." + std::to_string(kMaxRuns));
  }
  NDT_RETURN_IF_ERROR(CheckThreads(f.threads));
  CheckpointTarget target;
  if (!ParseCheckpointTarget(f.checkpoint_to, &target)) {
    return Status::InvalidInput("--checkpoint-to '" + f.checkpoint_to +
                                "'; use nvme, managed-disk, blob, lustre or memory");
  }
  if (f.init != "optimized" && f.init != "unoptimized") {
    return Status::InvalidInput("--init '" + f.init + "'; use optimized or unoptimized");
  }
  std::optional<double> interval_given;
  if (f.checkpoint_interval != "auto") {
    char* end = nullptr;
    const double v = std::strtod(f.checkpoint_interval.c_str(), &end);
    if (end == f.checkpoint_interval.c_str() || *end != '\0' || !(v > 0) || !(v <= kMaxIntervalS)) {
      return Status::InvalidInput("--checkpoint-interval '" + f.checkpoint_interval +
                                  "'; use auto or a number of seconds in (0, " +
                                  Fmt("%.0f", kMaxIntervalS) + "] (up to 100 years)");
    }
    interval_given = v;
  }
  std::optional<double> storage_Bps, ckpt_bytes;
  if (f.storage_bw.has_value()) {
    StatusOr<double> v = ParseQuantity(*f.storage_bw, Dim::kBandwidth);
    if (!v.ok() || !(*v >= kMinStorageBps && *v <= kMaxStorageBps)) {
      return Status::InvalidInput(
          "--storage-bw '" + *f.storage_bw +
          "'; write a throughput from 10 MB/s to 100 TB/s, e.g. \"2 TB/s\"");
    }
    storage_Bps = *v;
    // It sets the shared service's throughput (PlanCheckpoint reads it for blob and Lustre
    // only): a node-local target or host memory would take it silently.
    if (target != CheckpointTarget::kBlob && target != CheckpointTarget::kLustre) {
      diag->Warn(std::string("--storage-bw is ignored with --checkpoint-to ") +
                 CheckpointTargetName(target) +
                 ": it sets the blob account's or Lustre's throughput");
    }
  }
  if (f.checkpoint_size.has_value()) {
    StatusOr<double> v = ParseQuantity(*f.checkpoint_size, Dim::kBytes);
    if (!v.ok() || !(*v > 0 && *v <= kMaxCheckpointBytesPerGpu)) {
      return Status::InvalidInput("--checkpoint-size '" + *f.checkpoint_size +
                                  "'; write bytes per GPU above 0 and up to 1 TB, e.g. \"4 GB\"");
    }
    ckpt_bytes = *v;
  }
  if (f.trace.has_value() && f.trace->empty()) {
    return Status::InvalidInput("--trace needs a file name (e.g. --trace run.json)");
  }

  JobFacts j;
  if (f.step_time.has_value()) {
    NDT_ASSIGN_OR_RETURN(j, FactsFromStepTime(ctx, f, ckpt_bytes));
  } else {
    NDT_ASSIGN_OR_RETURN(j, FactsFromTraining(ctx, f, ckpt_bytes, diag));
  }
  if (f.job.tokens > 0 && j.tokens_per_step <= 0) {
    return Status::InvalidInput("--tokens with --step-time needs --model and --gbs");
  }
  const SkuSpec& sku = *j.sku;
  const FleetCluster fc = DescribeCluster(*j.cluster);
  NDT_ASSIGN_OR_RETURN(Placement place, PlanPlacement(ctx.fleet.placement, sku, fc.vms, f.spares,
                                                      f.strict_placement));
  for (const std::string& w : place.warnings) diag->Warn(w);
  NDT_ASSIGN_OR_RETURN(CheckpointPlan ckpt,
                       PlanCheckpoint(ctx.fleet, fc, target, f.async_checkpoint,
                                      j.ckpt_bytes_per_gpu, j.ckpt_total_bytes, storage_Bps));
  for (const std::string& w : ckpt.warnings) diag->Warn(w);
  const FleetModel model = BuildFleetModel(ctx.fleet.reliability, fc, ckpt, f.failure_scale,
                                           f.spares, f.init == "unoptimized", j.step_s);
  // Fewer tokens than one step: --tokens 1e4 of a 2M-token step printed "0.00 days" and "$0" as
  // if a job were done. (A --days window may end inside a step: the Monte Carlo counts work as
  // continuous.)
  if (f.job.tokens > 0 && f.job.tokens < j.tokens_per_step) {
    return Status::InvalidInput("--tokens " + Fmt("%g", f.job.tokens) + " is less than one step (" +
                                Fmt("%.0f", j.tokens_per_step) +
                                " tokens: gbs x seq); give at least that");
  }
  RunLength len;
  if (f.days.has_value()) {
    len.wall_s = *f.days * 86400;
  } else {
    len.work_s = f.job.tokens / j.tokens_per_step * j.step_s;
  }
  // Checkpoints no closer than one write (and one step) apart.
  const double min_interval = std::max(j.step_s, ckpt.write_s);
  NDT_RETURN_IF_ERROR(CheckFleetWork(model, len, min_interval, f.runs));
  double interval = 0;
  if (interval_given.has_value()) {
    if (*interval_given < ckpt.write_s) {
      return Status::InvalidInput(
          "--checkpoint-interval " + f.checkpoint_interval +
          " s is shorter than one checkpoint write (" + Fmt("%.1f", ckpt.write_s) + " s to " +
          f.checkpoint_to + "); use auto or at least " + Fmt("%.0f", std::ceil(ckpt.write_s)));
    }
    interval = std::max(1.0, std::round(*interval_given / j.step_s)) * j.step_s;
  } else {
    interval = OptimizeInterval(model, len, min_interval, std::min(f.runs, 200), f.seed, f.threads);
  }
  const MonteCarloResult mc = RunMonteCarlo(model, interval, len, f.runs, f.seed, f.threads);
  const ClosedForm cf = EvaluateClosedForm(model, interval);

  if (f.trace.has_value()) {
    std::vector<FleetSpan> spans;
    (void)SimulateRun(model, interval, len, f.seed, &spans);
    NDT_RETURN_IF_ERROR(WriteTrace(FleetTrace(spans, f.seed), *f.trace));
  }

  const FleetView v{.sku = sku,
                    .model_name = j.model,
                    .cluster = fc,
                    .spares = f.spares,
                    .step_s = j.step_s,
                    .step_simulated = j.simulated,
                    .tokens_per_step = j.tokens_per_step,
                    .tokens = f.job.tokens,
                    .days = f.days.value_or(0),
                    .runs = f.runs,
                    .seed = f.seed,
                    .failure_scale = f.failure_scale,
                    .target = target,
                    .async_checkpoint = f.async_checkpoint,
                    .length = len,
                    .model = model,
                    .checkpoint = ckpt,
                    .monte_carlo = mc,
                    .closed_form = cf,
                    .interval_s = interval,
                    .interval_given = interval_given.has_value(),
                    .placement = place,
                    .arch = ArchClassName(ctx.catalog.GpuOf(sku).arch),
                    .fitted = ctx.fleet.reliability.hardware_generation};
  return CommandOutput{FleetJson(v), FleetText(v)};
}

}  // namespace

Command FleetCommand() {
  return MakeCommand<FleetRequest>(
      "fleet",
      "A long run: failures, checkpoints, restarts, placement; goodput, time to train, cost",
      RunFleet);
}

}  // namespace ndt
