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
#include "cmd/text.h"
#include "cmd/train_job.h"
#include "core/units.h"
#include "hw/catalog.h"
#include "report/intervals.h"
#include "report/trace.h"
#include "topo/builders.h"

namespace ndt {
namespace {

constexpr int kMaxRuns = 1000000;

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
    o->Range("failure-scale", 0, 1e4, "a multiple of the fitted interruption rates");
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
  if (!(*f.step_time > 0)) return Status::InvalidInput("--step-time must be > 0 seconds");
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

std::string Bytes(double b) {
  if (b >= 1e12) return Fmt("%.2f TB", b / 1e12);
  if (b >= 1e9) return Fmt("%.2f GB", b / 1e9);
  return Fmt("%.1f MB", b / 1e6);
}

std::string Duration(double s) {
  if (s >= 86400) return Fmt("%.2f d", s / 86400);
  if (s >= 3600) return Fmt("%.2f h", s / 3600);
  if (s >= 60) return Fmt("%.1f min", s / 60);
  return Fmt("%.3g s", s);
}

Json Q(const Quantiles& q, double scale) {
  return Json{{"p10", q.p10 * scale}, {"p50", q.p50 * scale}, {"p90", q.p90 * scale}};
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
    if (end == f.checkpoint_interval.c_str() || *end != '\0' || !(v > 0) || !std::isfinite(v)) {
      return Status::InvalidInput("--checkpoint-interval '" + f.checkpoint_interval +
                                  "'; use auto or a number of seconds > 0");
    }
    interval_given = v;
  }
  std::optional<double> storage_Bps, ckpt_bytes;
  if (f.storage_bw.has_value()) {
    StatusOr<double> v = ParseQuantity(*f.storage_bw, Dim::kBandwidth);
    if (!v.ok() || !(*v > 0)) {
      return Status::InvalidInput("--storage-bw '" + *f.storage_bw + "'; write e.g. \"2 TB/s\"");
    }
    storage_Bps = *v;
  }
  if (f.checkpoint_size.has_value()) {
    StatusOr<double> v = ParseQuantity(*f.checkpoint_size, Dim::kBytes);
    if (!v.ok() || !(*v > 0)) {
      return Status::InvalidInput("--checkpoint-size '" + *f.checkpoint_size +
                                  "'; write e.g. \"4 GB\"");
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
    Trace t;
    t.title = "ndtwin fleet (one simulated run, seed " + std::to_string(f.seed) + ")";
    t.tracks.push_back({0, 0, "job", "timeline"});
    t.tracks.push_back({0, 1, "job", "interruptions"});
    for (const FleetSpan& s : spans) {
      t.spans.push_back({s.track, s.name, s.category, s.start_s, s.dur_s});
    }
    NDT_RETURN_IF_ERROR(WriteTrace(t, *f.trace));
  }

  const std::string arch = ArchClassName(ctx.catalog.GpuOf(sku).arch);
  const std::string fitted = ctx.fleet.reliability.hardware_generation;
  const std::string rates_note =
      arch == fitted ? ""
                     : arch + " uses " + fitted +
                           "'s interruption rates (data/reliability.yaml: fitted on Llama 3's "
                           "H100 run; no per-class data for " +
                           arch + ")";
  const double price = sku.price ? sku.price->usd_per_hour : 0;
  const double usd_per_s = price * (fc.vms + f.spares) / 3600;
  const bool tokens_mode = len.work_s > 0;
  const double tokens_per_s = j.tokens_per_step > 0 ? j.tokens_per_step / j.step_s : 0;

  Json js;
  js["schema"] = "ndtwin.fleet/1";
  js["ndtwin_version"] = NDT_VERSION;
  js["sku"] = sku.name;
  js["model"] = j.model.empty() ? Json(nullptr) : Json(j.model);
  js["gpus"] = fc.gpus;
  js["vms"] = fc.vms;
  js["spares"] = f.spares;
  js["step_time_s"] = j.step_s;
  js["step_time_source"] = j.simulated ? "simulated" : "given";
  js["tokens"] = tokens_mode ? Json(f.job.tokens) : Json(nullptr);
  js["days"] = tokens_mode ? Json(nullptr) : Json(*f.days);
  js["failure_free_days"] = tokens_mode ? Json(len.work_s / 86400) : Json(nullptr);
  js["runs"] = f.runs;
  js["seed"] = f.seed;
  js["failure_scale"] = f.failure_scale;
  js["rates"] = Json{{"fitted_on", fitted},
                     {"architecture", arch},
                     {"note", rates_note.empty() ? Json(nullptr) : Json(rates_note)}};
  Json by_class = Json::object();
  for (size_t i = 0; i < model.classes.size(); ++i) {
    const ClassRate& c = model.classes[i];
    by_class[c.name] = Json{
        {"per_hour", c.per_s * 3600}, {"planned", c.planned}, {"mean", mc.interruptions_mean[i]}};
  }
  js["interruptions"] = Json{{"unexpected_mean", mc.unexpected_mean},
                             {"planned_mean", mc.planned_mean},
                             {"by_class", by_class}};
  js["mtbi_hours"] = cf.mtbi_s / 3600;
  js["checkpoint"] = Json{{"target", CheckpointTargetName(target)},
                          {"async", f.async_checkpoint},
                          {"bytes_per_gpu", ckpt.bytes_per_gpu},
                          {"total_bytes", ckpt.total_bytes},
                          {"write_s", ckpt.write_s},
                          {"block_s", ckpt.block_s},
                          {"load_s", ckpt.load_s},
                          {"write_limit", ckpt.write_limit},
                          {"load_limit", ckpt.load_limit},
                          {"interval_s", interval},
                          {"interval_steps", std::round(interval / j.step_s)},
                          {"interval_choice", interval_given ? "given" : "simulated optimum"},
                          {"daly_interval_s", cf.daly_interval_s},
                          {"young_interval_s", cf.young_interval_s}};
  js["restart"] = Json{{"detection_s", model.detection_s},
                       {"replacement_s", f.spares > 0 ? model.spare_swap_s : model.new_vm_s},
                       {"replacement", f.spares > 0 ? "hot spare" : "new VM"},
                       {"init_s", model.init_s},
                       {"load_s", model.load_s},
                       {"mean_unexpected_s", MeanUnexpectedRestartS(model)},
                       {"mean_planned_s", MeanPlannedRestartS(model)}};
  js["goodput"] = mc.goodput.mean;
  js["goodput_quantiles"] = Q(mc.goodput, 1);
  js["goodput_closed_form"] = cf.goodput;
  js["time_to_train_days"] = tokens_mode ? Q(mc.wall_s, 1.0 / 86400) : Json(nullptr);
  js["trained_tokens"] =
      !tokens_mode && tokens_per_s > 0 ? Q(mc.work_s, tokens_per_s) : Json(nullptr);
  js["cost_usd"] = price > 0 ? Q(mc.wall_s, usd_per_s) : Json(nullptr);
  Json lost = Json::object();
  double lost_total = 0;
  for (size_t i = 0; i <= model.classes.size(); ++i) {
    const std::string name = i < model.classes.size() ? model.classes[i].name : "checkpoint";
    lost[name] = mc.lost_gpu_hours_mean[i];
    lost_total += mc.lost_gpu_hours_mean[i];
  }
  js["lost_gpu_hours"] = lost_total;
  js["lost_gpu_hours_by_cause"] = lost;
  Json warns = Json::array();
  for (const std::string& w : place.warnings) warns.push_back(w);
  js["placement"] = Json{{"scale_sets", place.scale_sets},
                         {"racks", place.racks},
                         {"azure_arranged", place.azure_arranged},
                         {"warnings", warns}};

  TextOut p;
  p("Job:            %s%s%d x %s (%d GPUs)", j.model.c_str(), j.model.empty() ? "" : " on ", fc.vms,
    sku.name.c_str(), fc.gpus);
  if (f.spares > 0) p(" + %d hot spare VM%s", f.spares, f.spares == 1 ? "" : "s");
  p("\nStep time:      %.4f s (%s)\n", j.step_s, j.simulated ? "simulated, as train" : "given");
  if (tokens_mode) {
    p("Run:            %.3g tokens = %.2f days of failure-free training\n", f.job.tokens,
      len.work_s / 86400);
  } else {
    p("Run:            %.4g days of wall clock\n", *f.days);
  }
  p("Failure rates:  fitted on %s (Llama 3: 16,384 H100, 54 days), x%g%s\n", fitted.c_str(),
    f.failure_scale, rates_note.empty() ? "" : "; see note");
  p("Interruptions:  %.1f unexpected (MTBI %.2f h), %.1f planned; mean of %d runs\n",
    mc.unexpected_mean, cf.mtbi_s / 3600, mc.planned_mean, f.runs);
  std::string cls;
  for (size_t i = 0; i < model.classes.size(); ++i) {
    cls += (i ? ", " : "") + model.classes[i].name + " " + Fmt("%.1f", mc.interruptions_mean[i]);
  }
  p("  by class:     %s\n", cls.c_str());
  p("Checkpoint:     %s per GPU (%s in all) to %s, %s: blocks %s, written in %s (%s); load %s\n",
    Bytes(ckpt.bytes_per_gpu).c_str(), Bytes(ckpt.total_bytes).c_str(),
    CheckpointTargetName(target), f.async_checkpoint ? "async" : "sync",
    Duration(ckpt.block_s).c_str(), Duration(ckpt.write_s).c_str(), ckpt.write_limit.c_str(),
    Duration(ckpt.load_s).c_str());
  p("Interval:       %s (%.0f steps), %s; Daly %s, Young %s\n", Duration(interval).c_str(),
    std::round(interval / j.step_s), interval_given ? "given" : "simulated optimum",
    Duration(cf.daly_interval_s).c_str(), Duration(cf.young_interval_s).c_str());
  p("Restart:        %s mean (unexpected): detection %s, %s %s (VM classes), init %s, load %s\n",
    Duration(MeanUnexpectedRestartS(model)).c_str(), Duration(model.detection_s).c_str(),
    f.spares > 0 ? "hot spare" : "new VM",
    Duration(f.spares > 0 ? model.spare_swap_s : model.new_vm_s).c_str(),
    Duration(model.init_s).c_str(), Duration(model.load_s).c_str());
  p("Goodput:        %.1f%% (p10–p90 %.1f–%.1f%%; closed form %.1f%%)\n", 100 * mc.goodput.mean,
    100 * mc.goodput.p10, 100 * mc.goodput.p90, 100 * cf.goodput);
  if (tokens_mode) {
    p("Time to train:  %.2f days (p10–p90 %.2f–%.2f)\n", mc.wall_s.p50 / 86400,
      mc.wall_s.p10 / 86400, mc.wall_s.p90 / 86400);
  } else if (tokens_per_s > 0) {
    p("Trained:        %.3g tokens (p10–p90 %.3g–%.3g)\n", mc.work_s.p50 * tokens_per_s,
      mc.work_s.p10 * tokens_per_s, mc.work_s.p90 * tokens_per_s);
  }
  if (price > 0 && tokens_mode) {
    p("Cost:           $%.0f (p10–p90 $%.0f–%.0f) at $%.2f per VM-hour, spares included\n",
      mc.wall_s.p50 * usd_per_s, mc.wall_s.p10 * usd_per_s, mc.wall_s.p90 * usd_per_s, price);
  } else if (price > 0) {
    p("Cost:           $%.0f for the %.4g days at $%.2f per VM-hour, spares included\n",
      mc.wall_s.p50 * usd_per_s, *f.days, price);
  } else {
    p("Cost:           no price for this size\n");
  }
  std::string causes;
  for (size_t i = 0; i <= model.classes.size(); ++i) {
    const double h = mc.lost_gpu_hours_mean[i];
    if (h <= 0) continue;
    const std::string name = i < model.classes.size() ? model.classes[i].name : "checkpoint";
    causes += (causes.empty() ? "" : ", ") + name + " " +
              Fmt("%.0f%%", lost_total > 0 ? 100 * h / lost_total : 0);
  }
  p("Lost GPU-hours: %.0f: %s\n", lost_total, causes.c_str());
  p("Placement:      %d scale set%s%s", place.scale_sets, place.scale_sets == 1 ? "" : "s",
    place.azure_arranged ? " (beyond a customer scale set: Azure-arranged)" : "");
  if (place.racks > 0) p(", %d NVL72 rack%s", place.racks, place.racks == 1 ? "" : "s");
  p("\n");
  if (!rates_note.empty()) p("Note:           %s\n", rates_note.c_str());
  return CommandOutput{js, p.take()};
}

}  // namespace

Command FleetCommand() {
  return MakeCommand<FleetRequest>(
      "fleet",
      "A long run: failures, checkpoints, restarts, placement; goodput, time to train, cost",
      RunFleet);
}

}  // namespace ndt
