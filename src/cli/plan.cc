// File: cli/plan.cc
// `ndtwin plan train`: which VM size, how many, which parallelism, how long, how much. Flags into
// a PlanTrainRequest, one call to PlanTraining (plan/plan.h), a table of the best K (or --json).
// Results on stdout; progress, skipped sizes and the wall time on stderr, so stdout is the same
// on every run.
#include "plan/plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/fabric_flags.h"
#include "cli/length_flags.h"
#include "cli/model_flags.h"
#include "parallel/cluster_costs.h"
#include "plan/plan_infer.h"
#include "serve/request.h"

namespace ndt {
namespace {

constexpr int kMaxPlanGpus = 131072;
constexpr int kMaxThreads = 1024;

// --threads: 0 (all cores) or 1..kMaxThreads.
Status CheckThreads(int threads) {
  if (threads < 0 || threads > kMaxThreads) {
    return Status::InvalidInput("--threads must be in 1.." + std::to_string(kMaxThreads) +
                                " (got " + std::to_string(threads) + "); omit it for all cores");
  }
  return Status::Ok();
}

// Where both planners search: --sku / --skus and --gpus / --vms.
struct SizeFlags {
  std::string sku, skus;
  int gpus = 0, vms = 0;
};

void AddSizeFlags(CLI::App* app, SizeFlags* f) {
  app->add_option("--sku", f->sku, "One VM size (see: ndtwin sku list)");
  app->add_option("--skus", f->skus, "all (default) or a comma-separated list of sizes");
  app->add_option("--gpus", f->gpus, "Total GPUs (sizes whose GPUs per VM divide it)");
  app->add_option("--vms", f->vms, "VMs of each size (instead of --gpus)");
}

struct PlanTrainFlags {
  SizeFlags size;
  ModelFlags mf;
  FabricFlags fabric;
  int64_t gbs = 0;
  int top = 10, threads = 0;
  double tokens = 0;
  std::string objective = "throughput", precision = "bf16", fidelity = "flow";
};

// "a,b,c" -> {"a", "b", "c"}; "" -> {}.
std::vector<std::string> SplitCommas(const std::string& list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (!list.empty() && start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// --sku S, --skus all (the default) or --skus A,B,C; checks --gpus / --vms.
StatusOr<std::vector<const SkuSpec*>> ResolveSkus(const SizeFlags& f, const Catalog& cat) {
  if (f.gpus > 0 && f.vms > 0) return Status::InvalidInput("give --gpus N or --vms N (not both)");
  if (f.gpus < 0 || f.vms < 0) return Status::InvalidInput("--gpus and --vms must be >= 1");
  // The largest clusters built today are ~100k GPUs; beyond that no fabric in data/ is sourced.
  if (f.gpus > kMaxPlanGpus || f.vms > kMaxPlanGpus / 2) {
    return Status::InvalidInput("plan searches up to " + std::to_string(kMaxPlanGpus) +
                                " GPUs (--gpus) or " + std::to_string(kMaxPlanGpus / 2) +
                                " VMs (--vms); ask for fewer");
  }
  const std::string& sku = f.sku;
  const std::string& skus = f.skus;
  if (!sku.empty() && !skus.empty()) {
    return Status::InvalidInput("give --sku NAME or --skus all|A,B,... (not both)");
  }
  std::vector<const SkuSpec*> out;
  if (sku.empty() && (skus.empty() || skus == "all")) {
    for (const SkuSpec& s : cat.skus()) {
      if (s.gpus > 0) out.push_back(&s);
    }
    return out;
  }
  for (const std::string& name : SplitCommas(sku.empty() ? skus : sku)) {
    NDT_ASSIGN_OR_RETURN(const SkuSpec* s, cat.FindSku(name));
    out.push_back(s);
  }
  return out;
}

StatusOr<PlanTrainRequest> BuildRequest(const PlanTrainFlags& f, const Catalog& cat,
                                        const std::string& dir) {
  PlanTrainRequest req;
  NDT_ASSIGN_OR_RETURN(req.model, ResolveModel(f.mf, dir));
  NDT_ASSIGN_OR_RETURN(req.skus, ResolveSkus(f.size, cat));
  if (f.tokens < 0) return Status::InvalidInput("--tokens must be >= 0");
  req.gbs = f.gbs;
  req.gpus = f.size.gpus;
  req.vms = f.size.vms;
  req.tokens = f.tokens;
  req.top_k = f.top;
  NDT_RETURN_IF_ERROR(CheckThreads(f.threads));
  req.threads = f.threads;
  req.fabric = ToFabricSpec(f.fabric);
  if (!ParsePlanObjective(f.objective, &req.objective)) {
    return Status::InvalidInput("--objective '" + f.objective + "'; use throughput, cost or time");
  }
  if (!ParseDtype(f.precision, &req.precision) || req.precision == Dtype::kFp32 ||
      req.precision == Dtype::kFp4) {
    return Status::InvalidInput("--precision '" + f.precision + "'; use bf16, fp16 or fp8");
  }
  if (!ParseFidelity(f.fidelity, &req.fidelity)) {
    return Status::InvalidInput("--fidelity '" + f.fidelity + "'; use analytical or flow");
  }
  return req;
}

double GiB(double b) { return b / (1024.0 * 1024 * 1024); }

const char* FidelityName(Fidelity f) { return f == Fidelity::kFlow ? "flow" : "analytical"; }

void PrintText(const PlanTrainRequest& req, const PlanTrainReport& rep) {
  const bool tokens = req.tokens > 0;
  const bool moe = req.model.is_moe();
  std::printf("%-4s  %-30s  %4s  %5s  %3s  %3s  %4s", "Rank", "Size", "VMs", "GPUs", "tp", "pp",
              "dp");
  if (moe) std::printf("  %3s", "ep");
  std::printf("  %3s  %3s  %-3s  %4s  %-9s  %8s  %10s  %5s  %7s", "vpp", "mbs", "sp", "zero",
              "recompute", "step s", "tokens/s", "MFU", "GiB/GPU");
  if (tokens) std::printf("  %8s  %12s", "days", "$");
  std::printf("\n");
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const PlanResult& r = rep.results[i];
    const Strategy& s = r.strategy;
    std::printf("%4zu  %-30s  %4d  %5d  %3d  %3d  %4d", i + 1, r.sku.c_str(), r.vms, r.gpus, s.tp,
                s.pp, s.dp);
    if (moe) std::printf("  %3d", s.ep);
    std::printf("  %3d  %3lld  %-3s  %4d  %-9s  %8.4f  %10.0f  %4.1f%%  %7.1f", s.vpp,
                static_cast<long long>(s.mbs), s.sp ? "on" : "off", s.zero,
                RecomputeName(s.recompute), r.step_time_s, r.tokens_per_s, 100 * r.mfu,
                GiB(r.memory_bytes));
    if (tokens) {
      std::printf(
          "  %8.2f  %12s", r.time_to_train_s / 86400,
          r.priced ? std::to_string(static_cast<long long>(r.cost_usd + 0.5)).c_str() : "-");
    }
    std::printf("\n");
  }
  std::printf("\n%lld configurations evaluated, %lld infeasible",
              static_cast<long long>(rep.evaluated), static_cast<long long>(rep.infeasible));
  if (rep.bounded > 0) {
    std::printf(", %lld skipped (their size cannot reach the top %d even at peak FLOP/s)",
                static_cast<long long>(rep.bounded), req.top_k);
  }
  std::printf("; objective %s", PlanObjectiveName(rep.objective));
  if (tokens) std::printf(" for %.3g tokens", req.tokens);
  if (req.fidelity == Fidelity::kAnalytical) {
    std::printf("; analytical fidelity\n");
  } else {
    std::printf("; best %zu re-scored at %s fidelity\n", rep.results.size(),
                FidelityName(req.fidelity));
  }
}

nlohmann::ordered_json ToJson(const PlanTrainRequest& req, const PlanTrainReport& rep) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["schema"] = "ndtwin.plan_train/1";
  j["ndtwin_version"] = NDT_VERSION;
  j["model"] = req.model.name;
  j["gbs"] = req.gbs;
  j["objective"] = PlanObjectiveName(rep.objective);
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
    x["zero"] = s.zero;
    x["recompute"] = RecomputeName(s.recompute);
    x["precision"] = DtypeName(s.precision);
    x["step_time_s"] = r.step_time_s;
    x["tokens_per_s"] = r.tokens_per_s;
    x["mfu"] = r.mfu;
    x["memory_bytes_per_gpu"] = r.memory_bytes;
    x["fidelity"] = FidelityName(r.fidelity);
    if (req.tokens > 0) {
      x["time_to_train_s"] = r.time_to_train_s;
      x["cost_usd"] = r.priced ? Json(r.cost_usd) : Json(nullptr);
    }
    results.push_back(x);
  }
  j["results"] = results;
  return j;
}

Status RunPlanTrain(const PlanTrainFlags& f, const GlobalOptions& g) {
  const auto start = std::chrono::steady_clock::now();
  const std::string dir = g.data_dir.empty() ? Catalog::DefaultDataDir() : g.data_dir;
  NDT_ASSIGN_OR_RETURN(Catalog cat, Catalog::Load(dir));
  NDT_ASSIGN_OR_RETURN(PlanTrainRequest req, BuildRequest(f, cat, dir));
  NDT_ASSIGN_OR_RETURN(ComputeCalibration cal, LoadComputeCalibration(dir));
  auto progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  StatusOr<PlanTrainReport> rep = PlanTraining(cat, cal, req, progress);
  if (!rep.ok()) return rep.status();
  for (const std::string& n : rep->notes) std::fprintf(stderr, "plan: note: %s\n", n.c_str());
  if (g.json) {
    std::printf("%s\n", ToJson(req, *rep).dump(2).c_str());
  } else {
    PrintText(req, *rep);
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "plan: %lld configurations scored in %.2f s wall (%.0f/s)%s\n",
               static_cast<long long>(rep->evaluated), wall_s, rep->evaluated / wall_s,
               f.threads > 0 ? "" : ", all cores");
  return Status::Ok();
}

struct PlanInferFlags {
  SizeFlags size;
  std::string weights, scenario = "offline", objective = "throughput";
  ModelFlags mf;
  int top = 10, threads = 0, requests = 0;
  LengthFlags lengths;
};

StatusOr<PlanInferRequest> BuildInferRequest(const PlanInferFlags& f, const Catalog& cat,
                                             const std::string& dir) {
  PlanInferRequest req;
  NDT_ASSIGN_OR_RETURN(req.model, ResolveModel(f.mf, dir));
  NDT_ASSIGN_OR_RETURN(req.skus, ResolveSkus(f.size, cat));
  req.gpus = f.size.gpus;
  req.vms = f.size.vms;
  req.top_k = f.top;
  NDT_RETURN_IF_ERROR(CheckThreads(f.threads));
  req.threads = f.threads;
  req.data_dir = dir;
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
  NDT_ASSIGN_OR_RETURN(o.lengths, ResolveLengths(f.lengths, dir));
  return req;
}

Status RunPlanInfer(const PlanInferFlags& f, const GlobalOptions& g) {
  const auto start = std::chrono::steady_clock::now();
  const std::string dir = g.data_dir.empty() ? Catalog::DefaultDataDir() : g.data_dir;
  NDT_ASSIGN_OR_RETURN(Catalog cat, Catalog::Load(dir));
  NDT_ASSIGN_OR_RETURN(PlanInferRequest req, BuildInferRequest(f, cat, dir));
  auto progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  NDT_ASSIGN_OR_RETURN(PlanInferReport rep, PlanInference(cat, req, progress));
  for (const std::string& n : rep.notes) std::fprintf(stderr, "plan: note: %s\n", n.c_str());
  if (g.json) {
    nlohmann::ordered_json j;
    j["schema"] = "ndtwin.plan_infer/1";
    j["objective"] = f.objective;
    j["scenario"] = ScenarioName(req.base.scenario);
    j["evaluated"] = rep.evaluated;
    j["infeasible"] = rep.infeasible;
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
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%-4s  %-30s  %4s  %5s  %-5s  %-4s  %3s  %3s  %8s  %9s  %12s  %9s  %9s  %9s\n",
                "Rank", "Size", "VMs", "GPUs", "W", "KV", "tp", "pp", "replicas", "max batch",
                "tokens/s", "per GPU", "TTFT p99", "$/M tok");
    for (size_t i = 0; i < rep.results.size(); ++i) {
      const PlanInferResult& r = rep.results[i];
      char cost[32] = "-";
      if (r.priced) std::snprintf(cost, sizeof cost, "%.3f", r.usd_per_million_tokens);
      std::printf(
          "%4zu  %-30s  %4d  %5d  %-5s  %-4s  %3d  %3d  %8d  %9d  %12.0f  %9.0f  %8.3fs  %9s\n",
          i + 1, r.sku.c_str(), r.vms, r.gpus, DtypeName(r.weights), DtypeName(r.kv),
          r.deployment.tp, r.deployment.pp, r.deployment.replicas, r.deployment.max_batch,
          r.tokens_per_s, r.tokens_per_s_per_gpu, r.ttft_p99_s, cost);
    }
    std::printf(
        "\n%lld (size, precision) pairs evaluated, %lld infeasible; objective %s; "
        "scenario %s\n",
        static_cast<long long>(rep.evaluated), static_cast<long long>(rep.infeasible),
        f.objective.c_str(), ScenarioName(req.base.scenario));
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "plan: %lld runs in %.2f s wall\n", static_cast<long long>(rep.evaluated),
               wall_s);
  return Status::Ok();
}

}  // namespace

CommandRun SetupPlan(CLI::App* sub) {
  auto f = std::make_shared<PlanTrainFlags>();
  CLI::App* train = sub->add_subcommand("train", "Search sizes, VM counts and strategies");
  train->fallthrough();
  AddModelFlags(train, &f->mf);
  train->add_option("--gbs", f->gbs, "Global batch (sequences per iteration)")->required();
  AddSizeFlags(train, &f->size);
  train->add_option("--tokens", f->tokens, "Training tokens: time to train and cost");
  train->add_option("--objective", f->objective, "throughput (default) | cost | time");
  train->add_option("--top", f->top, "How many configurations to show (default 10)");
  train->add_option("--precision", f->precision, "bf16 | fp16 | fp8 (default bf16)");
  train->add_option("--fidelity", f->fidelity,
                    "Re-score the best at analytical | flow (default flow)");
  train->add_option("--threads", f->threads, "Threads (default: all cores)");
  AddFabricFlags(train, &f->fabric);
  auto fi = std::make_shared<PlanInferFlags>();
  CLI::App* infer = sub->add_subcommand("infer", "Search sizes and weight precisions to serve");
  infer->fallthrough();
  AddModelFlags(infer, &fi->mf);
  AddSizeFlags(infer, &fi->size);
  infer->add_option("--weights", fi->weights,
                    "Comma-separated precisions (default: each GPU's native fp16/fp8/fp4)");
  infer->add_option("--scenario", fi->scenario, "offline (default) | server | interactive");
  AddLengthFlags(infer, &fi->lengths);
  infer->add_option("--requests", fi->requests, "Requests to simulate (default: automatic)");
  infer->add_option("--objective", fi->objective, "throughput (default) | cost ($/M tokens)");
  infer->add_option("--top", fi->top, "How many results to show (default 10)");
  infer->add_option("--threads", fi->threads, "Threads (default: all cores)");
  return [f, train, fi, infer](const GlobalOptions& g) -> Status {
    if (train->parsed()) return RunPlanTrain(*f, g);
    if (infer->parsed()) return RunPlanInfer(*fi, g);
    return Status::InvalidInput(
        "plan needs a subcommand: 'plan train --model M --gbs B ...' or 'plan infer --model M "
        "...'");
  };
}

}  // namespace ndt
