#include "report/plan_render.h"

#include <cstdio>
#include <string>
#include <vector>

#include "report/text.h"

namespace ndt {
namespace {

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

}  // namespace

std::string PlanTrainText(const PlanTrainView& v) {
  const PlanTrainRequest& req = v.request;
  const PlanTrainReport& rep = v.report;
  const std::vector<double>* goodput = v.goodput;
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
  if (req.variability != nullptr) {
    p("Step times wait for each configuration's slowest GPU (data/variability.yaml; "
      "--gpu-variability=false to ignore)\n");
  }
  for (const std::string& a : rep.fabric_assumed) p("Fabric assumed: %s\n", a.c_str());
  p("%s", UnpricedText(rep.unpriced).c_str());
  return p.take();
}

Json PlanTrainJson(const PlanTrainView& v) {
  const PlanTrainRequest& req = v.request;
  const PlanTrainReport& rep = v.report;
  const std::vector<double>* goodput = v.goodput;
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
    x["uneven_stages"] = s.uneven_stages;  // train --uneven-stages: pp does not divide the layers
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
    x["straggler_s"] = r.straggler_s;
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

Json PlanInferJson(const PlanInferView& v) {
  const PlanInferReport& rep = v.report;
  nlohmann::ordered_json j;
  {
    j["schema"] = "ndtwin.plan_infer/1";
    j["ndtwin_version"] = NDT_VERSION;
    j["model"] = v.model;
    j["objective"] = v.objective;
    j["scenario"] = ScenarioName(v.scenario);
    if (v.dataset.empty()) {
      j["dataset"] = nullptr;
    } else {
      j["dataset"] = v.dataset;
    }
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
      if (r.deployment.attention_dp) x["attention_dp"] = true;  // tp ranks; max_batch per rank
      x["output_tokens_per_s"] = r.tokens_per_s;
      x["per_gpu_output_tokens_per_s"] = r.tokens_per_s_per_gpu;
      x["ttft_p99_s"] = r.ttft_p99_s;
      x["tpot_p99_s"] = r.tpot_p99_s;
      x["usd_per_million_tokens"] =
          r.priced ? nlohmann::ordered_json(r.usd_per_million_tokens) : nlohmann::ordered_json();
      rows.push_back(x);
    }
    j["results"] = rows;
  }
  return j;
}

std::string PlanInferText(const PlanInferView& v) {
  const PlanInferReport& rep = v.report;
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
    std::string adp;  // ranks whose deployment runs attention data-parallel
    for (size_t i = 0; i < rep.results.size(); ++i) {
      if (rep.results[i].deployment.attention_dp)
        adp += (adp.empty() ? "" : ", ") + std::to_string(i + 1);
    }
    if (!adp.empty()) {
      p("Attention-DP (tp ranks, experts split over them; max batch per rank): rank %s\n",
        adp.c_str());
    }
    p("\n%lld (size, precision) pairs evaluated, %lld infeasible; objective %s; "
      "scenario %s\n",
      static_cast<long long>(rep.evaluated), static_cast<long long>(rep.infeasible),
      v.objective.c_str(), ScenarioName(v.scenario));
    // The requests' lengths, named as infer's Requests line names them.
    if (!v.dataset.empty()) p("Requests:       %s\n", v.dataset.c_str());
    p("%s", UnpricedText(rep.unpriced).c_str());
  }
  return p.take();
}

}  // namespace ndt
