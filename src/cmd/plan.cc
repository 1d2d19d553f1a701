// File: cmd/plan.cc
// `ndtwin plan train`: which VM size, how many, which parallelism, how long, how much. Flags into
// a PlanTrainRequest, one call to PlanTraining (plan/plan.h), a table of the best K (or --json).
// Results on stdout; progress, skipped sizes and the wall time on stderr, so stdout is the same
// on every run.
#include "plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "cmd/text.h"
#include "fleet/fleet.h"
#include "parallel/cluster_costs.h"
#include "parallel/memory.h"
#include "plan/plan_infer.h"
#include "report/plan_points_json.h"
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
  double tokens = 0;
  std::string objective = "throughput", fidelity = "flow", stack = kDefaultTrainStack;
  std::optional<std::string> precision;
  PriceArgs prices;
  bool with_failures = false;
  bool points = false;

  void Declare(OptionList* o) override {
    mf.Declare(o);
    o->Add("gbs", &gbs, "Global batch (sequences per iteration)").Required();
    size.Declare(o);
    o->Add("tokens", &tokens, "Training tokens: time to train and cost");
    o->Add("objective", &objective, "throughput (default) | cost | time");
    o->Add("top", &top, "How many configurations to show (default 10)");
    o->Add("precision", &precision, "bf16 | fp16 | fp8 (default: the stack's)");
    o->Add("stack", &stack,
           std::string("Software stack every candidate runs with, from data/stacks/ (default ") +
               kDefaultTrainStack + ", as train)");
    o->Add("fidelity", &fidelity, "Re-score the best at analytical | flow (default flow)");
    o->Add("threads", &threads, "Threads (default: all cores)");
    o->Add("with-failures", &with_failures,
           "Rank the best by expected time/cost with interruptions, checkpoints to blob and "
           "restarts (fleet's closed form at Daly's interval)");
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
  NDT_RETURN_IF_ERROR(CheckThreads(f.threads));
  req.threads = f.threads;
  req.fabric = f.fabric.ToSpec();
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

double GiB(double b) { return b / (1024.0 * 1024 * 1024); }

// The sizes a cost ranking left out for want of a price, and how to price them; "" for none.
std::string UnpricedText(const std::vector<std::string>& unpriced) {
  if (unpriced.empty()) return "";
  std::string list;
  for (const std::string& n : unpriced) list += (list.empty() ? "" : ", ") + n;
  return "Not ranked (no price in data/prices.yaml; give --price-per-hour SIZE=USD): " + list +
         "\n";
}

const char* FidelityName(Fidelity f) { return f == Fidelity::kFlow ? "flow" : "analytical"; }

// `goodput` (one per result, --with-failures): a goodput column, and days and $ divided by it.
std::string PlanTrainText(const PlanTrainRequest& req, const PlanTrainReport& rep,
                          const std::vector<double>* goodput) {
  TextOut p;
  const bool tokens = req.tokens > 0;
  const bool moe = req.model.is_moe();
  p("%-4s  %-30s  %4s  %5s  %3s  %3s  %4s", "Rank", "Size", "VMs", "GPUs", "tp", "pp", "dp");
  if (moe) p("  %3s", "ep");
  p("  %3s  %3s  %-3s  %-3s  %4s  %-9s  %8s  %10s  %5s  %7s", "vpp", "mbs", "sp", "tpo", "zero",
    "recompute", "step s", "tokens/s", "MFU", "GiB/GPU");
  if (goodput) p("  %7s", "goodput");
  if (tokens) p("  %8s  %12s", "days", "$");
  p("\n");
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const PlanResult& r = rep.results[i];
    const Strategy& s = r.strategy;
    p("%4zu  %-30s  %4d  %5d  %3d  %3d  %4d", i + 1, r.sku.c_str(), r.vms, r.gpus, s.tp, s.pp,
      s.dp);
    if (moe) p("  %3d", s.ep);
    p("  %3d  %3lld  %-3s  %-3s  %4d  %-9s  %8.4f  %10.0f  %4.1f%%  %7.1f", s.vpp,
      static_cast<long long>(s.mbs), s.sp ? "on" : "off", s.tp_overlap ? "on" : "off", s.zero,
      RecomputeName(s.recompute), r.step_time_s, r.tokens_per_s, 100 * r.mfu, GiB(r.memory_bytes));
    const double g = goodput ? (*goodput)[i] : 1.0;
    if (goodput) p("  %6.1f%%", 100 * g);
    if (tokens) {
      p("  %8.2f  %12s", r.time_to_train_s / g / 86400,
        r.priced ? std::to_string(static_cast<long long>(r.cost_usd / g + 0.5)).c_str() : "-");
    }
    p("\n");
  }
  p("\n%lld configurations evaluated, %lld infeasible", static_cast<long long>(rep.evaluated),
    static_cast<long long>(rep.infeasible));
  if (rep.bounded > 0) {
    p(", %lld skipped (their size cannot reach the top %d even at peak FLOP/s)",
      static_cast<long long>(rep.bounded), req.top_k);
  }
  if (req.stack != nullptr) p("; stack %s", req.stack->name.c_str());
  p("; objective %s", PlanObjectiveName(rep.objective));
  if (tokens) p(" for %.3g tokens", req.tokens);
  if (goodput) p(", with failures (days and $ divided by the goodput)");
  if (req.fidelity == Fidelity::kAnalytical) {
    p("; analytical fidelity\n");
  } else {
    p("; best %zu re-scored at %s fidelity\n", rep.results.size(), FidelityName(req.fidelity));
  }
  for (const std::string& a : rep.fabric_assumed) p("Fabric assumed: %s\n", a.c_str());
  p("%s", UnpricedText(rep.unpriced).c_str());
  return p.take();
}

nlohmann::ordered_json ToJson(const PlanTrainRequest& req, const PlanTrainReport& rep,
                              const std::vector<double>* goodput) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["schema"] = "ndtwin.plan_train/1";
  j["ndtwin_version"] = NDT_VERSION;
  j["model"] = req.model.name;
  j["gbs"] = req.gbs;
  j["objective"] = PlanObjectiveName(rep.objective);
  if (req.stack != nullptr) j["stack"] = req.stack->name;
  if (req.tokens > 0) j["tokens"] = req.tokens;
  j["evaluated"] = rep.evaluated;
  j["infeasible"] = rep.infeasible;
  j["skipped_by_bound"] = rep.bounded;
  Json results = Json::array();
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const PlanResult& r = rep.results[i];
    const Strategy& s = r.strategy;
    Json x;
    x["rank"] = i + 1;
    x["sku"] = r.sku;
    x["vms"] = r.vms;
    x["gpus"] = r.gpus;
    x["tp"] = s.tp;
    x["pp"] = s.pp;
    x["dp"] = s.dp;
    x["cp"] = s.cp;
    x["ep"] = s.ep;
    x["vpp"] = s.vpp;
    x["mbs"] = s.mbs;
    x["sp"] = s.sp;
    x["tp_overlap"] = s.tp_overlap;
    x["zero"] = s.zero;
    x["recompute"] = RecomputeName(s.recompute);
    x["precision"] = DtypeName(s.precision);
    x["step_time_s"] = r.step_time_s;
    x["tokens_per_s"] = r.tokens_per_s;
    x["mfu"] = r.mfu;
    x["memory_bytes_per_gpu"] = r.memory_bytes;
    x["fidelity"] = FidelityName(r.fidelity);
    x["fabric"] = r.fabric_tiers > 0 ? Json{{"tiers", r.fabric_tiers}, {"radix", r.fabric_radix}}
                                     : Json(nullptr);
    if (req.tokens > 0) {
      x["time_to_train_s"] = r.time_to_train_s;
      x["cost_usd"] = r.priced ? Json(r.cost_usd) : Json(nullptr);
    }
    if (goodput) {
      const double g = (*goodput)[i];
      x["goodput"] = g;
      x["expected_time_to_train_s"] = r.time_to_train_s / g;
      x["expected_cost_usd"] = r.priced ? Json(r.cost_usd / g) : Json(nullptr);
    }
    results.push_back(x);
  }
  j["results"] = results;
  j["fabric_assumed"] = rep.fabric_assumed;
  j["unpriced"] = rep.unpriced;
  return j;
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
  std::vector<double> goodput;
  if (f.with_failures) {
    NDT_ASSIGN_OR_RETURN(goodput, RankWithFailures(ctx, f, req, &*rep, diag));
  }
  const std::vector<double>* g = f.with_failures ? &goodput : nullptr;
  CommandOutput out{ToJson(req, *rep, g), PlanTrainText(req, *rep, g)};
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
  NDT_ASSIGN_OR_RETURN(o.lengths, f.lengths.Resolve(ctx));
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
  nlohmann::ordered_json j;
  {
    j["schema"] = "ndtwin.plan_infer/1";
    j["objective"] = f.objective;
    j["scenario"] = ScenarioName(req.base.scenario);
    j["evaluated"] = rep.evaluated;
    j["infeasible"] = rep.infeasible;
    j["unpriced"] = rep.unpriced;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const PlanInferResult& r : rep.results) {
      nlohmann::ordered_json x;
      x["sku"] = r.sku;
      x["vms"] = r.vms;
      x["gpus"] = r.gpus;
      x["weights"] = DtypeName(r.weights);
      x["kv"] = DtypeName(r.kv);
      x["tp"] = r.deployment.tp;
      x["pp"] = r.deployment.pp;
      x["replicas"] = r.deployment.replicas;
      x["max_batch"] = r.deployment.max_batch;
      x["output_tokens_per_s"] = r.tokens_per_s;
      x["per_gpu_output_tokens_per_s"] = r.tokens_per_s_per_gpu;
      x["ttft_p99_s"] = r.ttft_p99_s;
      x["tpot_p99_s"] = r.tpot_p99_s;
      x["usd_per_million_tokens"] =
          r.priced ? nlohmann::ordered_json(r.usd_per_million_tokens) : nlohmann::ordered_json();
      rows.push_back(x);
    }
    j["results"] = rows;
    if (f.points) j["points"] = PlanInferPointsJson(rep);
  }
  TextOut p;
  {
    p("%-4s  %-30s  %4s  %5s  %-5s  %-4s  %3s  %3s  %8s  %9s  %12s  %9s  %9s  %9s\n", "Rank",
      "Size", "VMs", "GPUs", "W", "KV", "tp", "pp", "replicas", "max batch", "tokens/s", "per GPU",
      "TTFT p99", "$/M tok");
    for (size_t i = 0; i < rep.results.size(); ++i) {
      const PlanInferResult& r = rep.results[i];
      char cost[32] = "-";
      if (r.priced) std::snprintf(cost, sizeof cost, "%.3f", r.usd_per_million_tokens);
      p("%4zu  %-30s  %4d  %5d  %-5s  %-4s  %3d  %3d  %8d  %9d  %12.0f  %9.0f  %8.3fs  %9s\n",
        i + 1, r.sku.c_str(), r.vms, r.gpus, DtypeName(r.weights), DtypeName(r.kv), r.deployment.tp,
        r.deployment.pp, r.deployment.replicas, r.deployment.max_batch, r.tokens_per_s,
        r.tokens_per_s_per_gpu, r.ttft_p99_s, cost);
    }
    p("\n%lld (size, precision) pairs evaluated, %lld infeasible; objective %s; "
      "scenario %s\n",
      static_cast<long long>(rep.evaluated), static_cast<long long>(rep.infeasible),
      f.objective.c_str(), ScenarioName(req.base.scenario));
    p("%s", UnpricedText(rep.unpriced).c_str());
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  diag->Progress(fmt::format("plan: {} runs in {:.2f} s wall", rep.evaluated, wall_s));
  return CommandOutput{j, p.take()};
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
