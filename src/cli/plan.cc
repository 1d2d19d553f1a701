// File: cli/plan.cc
// `ndtwin plan train`: which VM size, how many, which parallelism, how long, how much. Flags into
// a PlanTrainRequest, one call to PlanTraining (plan/plan.h), a table of the best K (or --json).
// Results on stdout; progress, skipped sizes and the wall time on stderr, so stdout is the same
// on every run.
#include "plan/plan.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/model_flags.h"
#include "parallel/cluster_costs.h"

namespace ndt {
namespace {

struct PlanTrainFlags {
  std::string sku, skus;
  ModelFlags mf;
  int64_t gbs = 0;
  int gpus = 0, vms = 0, top = 10, threads = 0;
  double tokens = 0;
  std::string objective = "throughput", precision = "bf16", fidelity = "flow";
};

// --sku S, --skus all (the default) or --skus A,B,C.
StatusOr<std::vector<const SkuSpec*>> ResolveSkus(const PlanTrainFlags& f, const Catalog& cat) {
  if (!f.sku.empty() && !f.skus.empty()) {
    return Status::InvalidInput("give --sku NAME or --skus all|A,B,... (not both)");
  }
  std::vector<const SkuSpec*> out;
  if (f.sku.empty() && (f.skus.empty() || f.skus == "all")) {
    for (const SkuSpec& s : cat.skus()) {
      if (s.gpus > 0) out.push_back(&s);
    }
    return out;
  }
  std::string list = f.sku.empty() ? f.skus : f.sku;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    NDT_ASSIGN_OR_RETURN(const SkuSpec* s, cat.FindSku(list.substr(start, end - start)));
    out.push_back(s);
    start = end + 1;
  }
  return out;
}

StatusOr<PlanTrainRequest> BuildRequest(const PlanTrainFlags& f, const Catalog& cat,
                                        const std::string& dir) {
  PlanTrainRequest req;
  NDT_ASSIGN_OR_RETURN(req.model, ResolveModel(f.mf, dir));
  NDT_ASSIGN_OR_RETURN(req.skus, ResolveSkus(f, cat));
  if (f.gpus > 0 && f.vms > 0) return Status::InvalidInput("give --gpus N or --vms N (not both)");
  if (f.gpus < 0 || f.vms < 0) return Status::InvalidInput("--gpus and --vms must be >= 1");
  if (f.tokens < 0) return Status::InvalidInput("--tokens must be >= 0");
  req.gbs = f.gbs;
  req.gpus = f.gpus;
  req.vms = f.vms;
  req.tokens = f.tokens;
  req.top_k = f.top;
  req.threads = f.threads;
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

}  // namespace

CommandRun SetupPlan(CLI::App* sub) {
  auto f = std::make_shared<PlanTrainFlags>();
  CLI::App* train = sub->add_subcommand("train", "Search sizes, VM counts and strategies");
  train->fallthrough();
  AddModelFlags(train, &f->mf);
  train->add_option("--gbs", f->gbs, "Global batch (sequences per iteration)")->required();
  train->add_option("--sku", f->sku, "One VM size (see: ndtwin sku list)");
  train->add_option("--skus", f->skus, "all (default) or a comma-separated list of sizes");
  train->add_option("--gpus", f->gpus, "Total GPUs (sizes whose GPUs per VM divide it)");
  train->add_option("--vms", f->vms, "VMs of each size (instead of --gpus)");
  train->add_option("--tokens", f->tokens, "Training tokens: time to train and cost");
  train->add_option("--objective", f->objective, "throughput (default) | cost | time");
  train->add_option("--top", f->top, "How many configurations to show (default 10)");
  train->add_option("--precision", f->precision, "bf16 | fp16 | fp8 (default bf16)");
  train->add_option("--fidelity", f->fidelity,
                    "Re-score the best at analytical | flow (default flow)");
  train->add_option("--threads", f->threads, "Threads (default: all cores)");
  return [f, train](const GlobalOptions& g) -> Status {
    if (!train->parsed()) {
      return Status::InvalidInput("plan needs a subcommand: 'plan train --model M --gbs B ...'");
    }
    return RunPlanTrain(*f, g);
  };
}

}  // namespace ndt
