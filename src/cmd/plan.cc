// File: cmd/plan.cc
// `ndtwin plan train`: which VM size, how many, which parallelism, how long, how much. Flags into
// a PlanTrainRequest, one call to PlanTraining (plan/plan.h), a table of the best K (or --json).
// Results on stdout; progress, skipped sizes and the wall time on stderr, so stdout is the same
// on every run.
#include "plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "cmd/train_job.h"
#include "fleet/fleet.h"
#include "parallel/cluster_costs.h"
#include "parallel/memory.h"
#include "plan/plan_infer.h"
#include "report/plan_points_json.h"
#include "report/plan_render.h"
#include "serve/request.h"
#include "topo/builders.h"

namespace ndt {
namespace {

struct PlanTrainFlags : CommandRequest {
  SizeArgs size;
  ModelArgs mf;
  FabricArgs fabric;
  int64_t gbs = 0;
  int top = 10, threads = 0;
  std::optional<int> ep;
  double tokens = 0;
  std::string objective = "throughput", fidelity = "flow", stack = kDefaultTrainStack;
  std::optional<std::string> precision;
  PriceArgs prices;
  bool with_failures = false;
  bool gpu_variability = true;
  bool points = false;

  void Declare(OptionList* o) override {
    mf.Declare(o);
    o->Add("gbs", &gbs, "Global batch (sequences per iteration)").Required();
    size.Declare(o);
    o->Add("tokens", &tokens, "Training tokens: time to train and cost");
    o->Add("objective", &objective, "throughput (default) | cost | time");
    o->Add("top", &top, "How many configurations to show (default 10)");
    o->Add("precision", &precision, "bf16 | fp16 | fp8 (default: the stack's)");
    o->Add("ep", &ep,
           "Expert parallel degree every candidate runs with, MoE (default: searched over the "
           "divisors of the experts dividing dp)");
    o->Add("stack", &stack,
           std::string("Software stack every candidate runs with, from data/stacks/ (default ") +
               kDefaultTrainStack + ", as train)");
    o->Add("fidelity", &fidelity, "Re-score the best at analytical | flow (default flow)");
    o->Add("threads", &threads, "Threads (default: all cores)");
    o->Add("with-failures", &with_failures,
           "Rank the best by expected time/cost with interruptions, checkpoints to blob and "
           "restarts (fleet's closed form at Daly's interval)");
    DeclareGpuVariability(o, &gpu_variability);
    fabric.Declare(o);
    prices.Declare(o);
    o->Add("points", &points, "Add every configuration scored to the JSON (the best 2000)")
        .ForReport();
    RangeTrainOptions(o);
  }
};

// The planner's work budget: every candidate simulates each of its micro-batches, so the work
// grows with the sequences per GPU per step (gbs 1,024 on 8 GPUs, 128 per GPU, took 14 s on
// one size; 4,096, 512 per GPU, 83 s). Published runs have 1 to 16 (Megatron's Table 1: 512 on
// 32 GPUs); 256 leaves room for small models on a few GPUs.
constexpr int64_t kMaxPlanSequencesPerGpu = 256;

Status CheckPlanBatch(int64_t gbs, const SizeArgs& size, const std::vector<const SkuSpec*>& skus) {
  int64_t gpus = size.gpus;
  if (gpus == 0 && size.vms > 0) {
    int per_vm = 0;  // the smallest VM searched: its clusters have the fewest GPUs
    for (const SkuSpec* s : skus) per_vm = per_vm == 0 ? s->gpus : std::min(per_vm, s->gpus);
    gpus = static_cast<int64_t>(size.vms) * std::max(per_vm, 1);
  }
  if (gpus <= 0 || gbs <= kMaxPlanSequencesPerGpu * gpus) return Status::Ok();
  return Status::InvalidInput(
      "--gbs " + std::to_string(gbs) + " on " + std::to_string(gpus) + " GPUs is " +
      std::to_string((gbs + gpus - 1) / gpus) + " sequences per GPU per step, more than the " +
      std::to_string(kMaxPlanSequencesPerGpu) +
      " plan train searches (every candidate simulates each micro-batch); lower --gbs, raise "
      "--gpus/--vms, or run train for one configuration");
}

StatusOr<PlanTrainRequest> BuildRequest(const PlanTrainFlags& f, const Context& ctx,
                                        SoftwareStack* stack) {
  PlanTrainRequest req;
  NDT_ASSIGN_OR_RETURN(*stack, FindStack(ctx.stacks, f.stack, StackKind::kTraining));
  NDT_ASSIGN_OR_RETURN(req.model, f.mf.Resolve(ctx));
  NDT_ASSIGN_OR_RETURN(req.skus, f.size.Resolve(ctx.catalog));
  if (f.tokens < 0) return Status::InvalidInput("--tokens must be >= 0");
  NDT_RETURN_IF_ERROR(CheckPlanBatch(f.gbs, f.size, req.skus));
  req.gbs = f.gbs;
  req.gpus = f.size.gpus;
  req.vms = f.size.vms;
  req.tokens = f.tokens;
  req.top_k = f.top;
  req.ep = f.ep;
  NDT_RETURN_IF_ERROR(CheckThreads(f.threads));
  req.threads = f.threads;
  req.fabric = f.fabric.ToSpec();
  if (f.gpu_variability) req.variability = &ctx.variability;
  req.memory_reserve = &ctx.memory_reserve;
  if (!ParsePlanObjective(f.objective, &req.objective)) {
    return Status::InvalidInput("--objective '" + f.objective + "'; use throughput, cost or time");
  }
  const std::string precision =
      f.precision.value_or(stack->knobs.precision ? DtypeName(*stack->knobs.precision) : "bf16");
  if (!ParseDtype(precision, &req.precision) || req.precision == Dtype::kFp32 ||
      req.precision == Dtype::kFp4) {
    return Status::InvalidInput("--precision '" + precision + "'; use bf16, fp16 or fp8");
  }
  if (!ParseFidelity(f.fidelity, &req.fidelity)) {
    return Status::InvalidInput("--fidelity '" + f.fidelity + "'; use analytical or flow");
  }
  return req;
}

// --with-failures: each of the best configurations' goodput (fleet/fleet.h: its cluster's
// interruption rates, a synchronous checkpoint of its model state to blob storage, restarts
// without spares, the closed form at Daly's interval), then the results re-ranked by the
// objective divided by it (stable: ties keep the planner's order). Returns the goodputs in the
// new order.
StatusOr<std::vector<double>> RankWithFailures(const Context& ctx, const PlanTrainFlags& f,
                                               const PlanTrainRequest& req, PlanTrainReport* rep,
                                               Diagnostics* diag) {
  std::vector<std::pair<PlanResult, double>> rows;
  for (const PlanResult& r : rep->results) {
    NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, ctx.catalog.FindSku(r.sku));
    ClusterSpec cs;
    cs.sku = sku;
    cs.gpu = &ctx.catalog.GpuOf(*sku);
    cs.vms = r.vms;
    f.fabric.Apply(&cs);
    NDT_ASSIGN_OR_RETURN(Cluster cluster, BuildCluster(cs, ctx.fabric));
    const FleetCluster fc = DescribeCluster(cluster);
    const double bytes = CheckpointBytesPerGpu(EstimateMemory(req.model, r.strategy), r.strategy);
    StatusOr<CheckpointPlan> ck =
        PlanCheckpoint(ctx.fleet, fc, CheckpointTarget::kBlob, false, bytes,
                       CheckpointTotalBytes(bytes, r.strategy, fc.gpus), std::nullopt);
    if (!ck.ok()) return ck.status();
    const FleetModel m =
        BuildFleetModel(ctx.fleet.reliability, fc, *ck, 1.0, 0, false, r.step_time_s);
    const double daly = EvaluateClosedForm(m, r.step_time_s).daly_interval_s;
    const double tau =
        std::max(1.0, std::round(std::max(daly, ck->write_s) / r.step_time_s)) * r.step_time_s;
    rows.push_back({r, EvaluateClosedForm(m, tau).goodput});
  }
  auto key = [&](const std::pair<PlanResult, double>& x) {
    const double g = std::max(x.second, 1e-12);
    switch (req.objective) {
      case PlanObjective::kTime:
        return x.first.time_to_train_s / g;
      case PlanObjective::kCost:
        return x.first.priced ? x.first.cost_usd / g : 1e300;
      default:
        return -x.first.tokens_per_s * g;
    }
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const auto& a, const auto& b) { return key(a) < key(b); });
  std::vector<double> goodput;
  rep->results.clear();
  for (auto& [r, g] : rows) {
    rep->results.push_back(r);
    goodput.push_back(g);
  }
  diag->Note("plan: with failures: the best " + std::to_string(rows.size()) +
             " re-ranked by their goodput (checkpoints to blob, no spares)");
  return goodput;
}

// `train`'s options that run result `r` of this plan as plan scored it (the same step time, bit
// for bit): the plan's options train also takes where they differ from train's defaults (the
// model, --stack, --tokens, the fabric, the prices, --gpu-variability), then the size and every
// knob of the pick. --uneven-stages is there when the pick's stages do not divide the layers:
// the planners allow them, train only when asked. Keys as Python spells them (BindJson takes
// underscores or dashes).
Json TrainArgsOf(const PlanTrainFlags& f, const PlanResult& r, const TransformerSpec& model) {
  PlanTrainFlags plan = f;
  OptionList plan_options;
  plan.Declare(&plan_options);
  TrainPointRequest train;
  OptionList train_options;
  train.Declare(&train_options);
  const Json given = OptionValues(plan_options);
  const Json defaults = OptionValues(train_options);
  Json args = Json::object();
  auto put = [&args](std::string key, Json v) {
    std::replace(key.begin(), key.end(), '-', '_');
    args[key] = std::move(v);
  };
  // Set from the pick below, or plan's own (--fidelity re-scores; train's is the pick's).
  const std::vector<std::string> pick = {"sku", "vms", "precision", "fidelity", "ep"};
  put("sku", r.sku);
  put("vms", r.vms);
  for (const auto& [key, v] : given.items()) {
    if (std::find(pick.begin(), pick.end(), key) != pick.end() || v.is_null()) continue;
    auto d = defaults.find(key);
    if (d != defaults.end() && *d != v) put(key, v);
  }
  const Strategy& s = r.strategy;
  put("tp", s.tp);
  put("pp", s.pp);
  if (s.uneven_stages) put("uneven-stages", true);
  put("dp", s.dp);
  if (s.cp != 1) put("cp", s.cp);
  if (model.is_moe() || s.ep != 1) put("ep", s.ep);
  put("vpp", s.vpp);
  put("mbs", s.mbs);
  put("sp", s.sp);
  put("tp-overlap", s.tp_overlap);
  put("zero", s.zero);
  put("recompute", RecomputeName(s.recompute));
  put("precision", DtypeName(s.precision));
  put("fidelity", r.fidelity == Fidelity::kFlow ? "flow" : "analytical");
  return args;
}

// `args` (TrainArgsOf) as one shell line: "ndtwin train --sku ... --sp --tp-overlap=false ...".
std::string TrainCommandLine(const Json& args) {
  auto quote = [](const std::string& v) {
    const bool plain = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("._/=:,+-", c) != nullptr;
    });
    if (plain) return v;
    std::string q = "'";
    for (char c : v) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string line = "ndtwin train";
  for (const auto& [key, v] : args.items()) {
    std::string flag = "--" + key;
    std::replace(flag.begin(), flag.end(), '_', '-');
    if (v.is_boolean()) {
      line += " " + flag + (v.get<bool>() ? "" : "=false");
    } else if (v.is_string()) {
      line += " " + flag + " " + quote(v.get<std::string>());
    } else if (v.is_array()) {
      for (const Json& x : v) line += " " + flag + " " + quote(x.get<std::string>());
    } else if (v.is_number_float()) {
      line += " " + flag + " " + fmt::format("{}", v.get<double>());  // shortest: 1e+11
    } else {
      line += " " + flag + " " + v.dump();
    }
  }
  return line;
}

StatusOr<CommandOutput> RunPlanTrain(const Context& base, const PlanTrainFlags& f,
                                     Diagnostics* diag) {
  std::optional<Context> priced;
  NDT_ASSIGN_OR_RETURN(const Context* c, f.prices.Apply(base, &priced));
  const Context& ctx = *c;
  const auto start = std::chrono::steady_clock::now();
  SoftwareStack stack;
  NDT_ASSIGN_OR_RETURN(PlanTrainRequest req, BuildRequest(f, ctx, &stack));
  req.stack = &stack;
  req.keep_scored = f.points;
  auto progress = [diag](const std::string& line) { diag->Progress(line); };
  StatusOr<PlanTrainReport> rep =
      PlanTraining(ctx.catalog, ctx.fabric, ctx.nccl, ctx.compute, req, progress);
  if (!rep.ok()) return rep.status();
  for (const std::string& n : rep->notes) diag->Note("plan: note: " + n);
  if (const std::string n = ZeroStagesNote(stack, ctx.stacks); !n.empty()) {
    diag->Note("plan: note: " + n);
  }
  std::vector<double> goodput;
  if (f.with_failures) {
    NDT_ASSIGN_OR_RETURN(goodput, RankWithFailures(ctx, f, req, &*rep, diag));
  }
  const std::vector<double>* g = f.with_failures ? &goodput : nullptr;
  const PlanTrainView v{req, *rep, g};
  CommandOutput out{PlanTrainJson(v), PlanTrainText(v)};
  // Each pick as train's options, and the best as the line to paste (every knob, --uneven-stages
  // included where the stages are uneven).
  for (size_t i = 0; i < rep->results.size(); ++i) {
    out.json["results"][i]["train_args"] = TrainArgsOf(f, rep->results[i], req.model);
  }
  if (!rep->results.empty()) {
    out.text +=
        "Run the best with train: " + TrainCommandLine(out.json["results"][0]["train_args"]) + "\n";
  }
  if (f.points) out.json["points"] = PlanTrainPointsJson(*rep, req.tokens > 0);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  diag->Progress(fmt::format("plan: {} configurations scored in {:.2f} s wall ({:.0f}/s){}",
                             rep->evaluated, wall_s, rep->evaluated / wall_s,
                             f.threads > 0 ? "" : ", all cores"));
  return out;
}

struct PlanInferFlags : CommandRequest {
  SizeArgs size;
  std::string weights, scenario = "offline", objective = "throughput";
  ModelArgs mf;
  int top = 10, threads = 0, requests = 0;
  LengthArgs lengths;
  PriceArgs prices;
  bool points = false;

  void Declare(OptionList* o) override {
    mf.Declare(o);
    size.Declare(o);
    o->Add("weights", &weights,
           "Comma-separated precisions (default: each GPU's native fp16/fp8/fp4)");
    o->Add("scenario", &scenario, "offline (default) | server | interactive");
    lengths.Declare(o);
    o->Add("requests", &requests, "Requests to simulate (default: automatic)");
    o->Add("objective", &objective, "throughput (default) | cost ($/M tokens)");
    o->Add("top", &top, "How many results to show (default 10)");
    o->Add("threads", &threads, "Threads (default: all cores)");
    prices.Declare(o);
    o->Add("points", &points, "Add every (size, precision) pair scored to the JSON").ForReport();
    RangeTrainOptions(o);  // --top, --threads; PlanInference bounds --requests
  }
};

StatusOr<PlanInferRequest> BuildInferRequest(const PlanInferFlags& f, const Context& ctx) {
  PlanInferRequest req;
  NDT_ASSIGN_OR_RETURN(req.model, f.mf.Resolve(ctx));
  NDT_ASSIGN_OR_RETURN(req.skus, f.size.Resolve(ctx.catalog));
  req.gpus = f.size.gpus;
  req.vms = f.size.vms;
  req.top_k = f.top;
  NDT_RETURN_IF_ERROR(CheckThreads(f.threads));
  req.threads = f.threads;
  if (f.objective == "cost") {
    req.objective = PlanInferObjective::kCost;
  } else if (f.objective != "throughput") {
    return Status::InvalidInput("--objective '" + f.objective + "'; use throughput or cost");
  }
  for (const std::string& w : SplitCommas(f.weights)) {
    Dtype d;
    if (!ParseDtype(w, &d) || d == Dtype::kFp32) {
      return Status::InvalidInput("--weights '" + w + "'; use a list of fp16, bf16, fp8, fp4");
    }
    // A precision named twice is searched once (fp16 and bf16 stay distinct names).
    if (std::find(req.weights.begin(), req.weights.end(), d) == req.weights.end()) {
      req.weights.push_back(d);
    }
  }
  InferOptions& o = req.base;
  if (!ParseScenario(f.scenario, &o.scenario)) {
    return Status::InvalidInput("--scenario '" + f.scenario +
                                "' is not one of offline, server, interactive");
  }
  o.requests = f.requests;  // PlanInference checks its range
  NDT_ASSIGN_OR_RETURN(o.lengths, f.lengths.Resolve(ctx, req.model.name));
  if (o.scenario != Scenario::kOffline) {
    // The dataset's own benchmark limits (MLPerf), as infer takes them.
    NDT_ASSIGN_OR_RETURN(
        LatencyLimits l,
        f.lengths.BenchmarkLimits(ctx, o.scenario == Scenario::kInteractive, req.model.name));
    o.ttft_p99_s = l.ttft_s;
    o.tpot_p99_s = l.tpot_s;
  }
  return req;
}

StatusOr<CommandOutput> RunPlanInfer(const Context& base, const PlanInferFlags& f,
                                     Diagnostics* diag) {
  std::optional<Context> priced;
  NDT_ASSIGN_OR_RETURN(const Context* c, f.prices.Apply(base, &priced));
  const Context& ctx = *c;
  const auto start = std::chrono::steady_clock::now();
  NDT_ASSIGN_OR_RETURN(PlanInferRequest req, BuildInferRequest(f, ctx));
  auto progress = [diag](const std::string& line) { diag->Progress(line); };
  const ServeData data{&ctx.catalog, &ctx.fabric, &ctx.compute,
                       &ctx.engine,  &ctx.nccl,   ctx.data_dir};
  NDT_ASSIGN_OR_RETURN(PlanInferReport rep, PlanInference(data, req, progress));
  for (const std::string& n : rep.notes) diag->Note("plan: note: " + n);
  NDT_ASSIGN_OR_RETURN(std::string dataset, f.lengths.Dataset(ctx, req.model.name));
  const PlanInferView v{f.objective, req.base.scenario, rep, req.model.name, dataset};
  CommandOutput out{PlanInferJson(v), PlanInferText(v)};
  if (f.points) out.json["points"] = PlanInferPointsJson(rep);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  diag->Progress(fmt::format("plan: {} runs in {:.2f} s wall", rep.evaluated, wall_s));
  return out;
}

}  // namespace

Command PlanTrainCommand() {
  return MakeCommand<PlanTrainFlags>(
      "plan train", "Search sizes and strategies to train on a given --gpus or --vms count",
      RunPlanTrain);
}

Command PlanInferCommand() {
  return MakeCommand<PlanInferFlags>(
      "plan infer", "Search sizes and weight precisions to serve on a given --gpus or --vms count",
      RunPlanInfer);
}

}  // namespace ndt
