#include "report/plan_points_json.h"

#include <algorithm>
#include <cmath>

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

// Six significant digits: a chart's precision, a third of the bytes of a full double.
double Sig6(double x) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int e = static_cast<int>(std::floor(std::log10(std::fabs(x)))) - 5;
  const double p = std::pow(10.0, std::abs(e));  // exact for these powers
  return e < 0 ? std::round(x * p) / p : std::round(x / p) * p;
}

template <typename R>
int KeptRank(const std::vector<R>& results, size_t index) {
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].index == index) return static_cast<int>(i) + 1;
  }
  return 0;
}

Json Header(const char* of, size_t total, Json columns) {
  Json j;
  j["of"] = of;
  j["total"] = total;
  j["cap"] = kPlanPointsCap;
  j["shown"] = std::min(total, kPlanPointsCap);
  j["columns"] = std::move(columns);
  return j;
}

}  // namespace

Json PlanTrainPointsJson(const PlanTrainReport& rep, bool with_tokens) {
  Json cols = Json::array({"sku", "gpus", "tp", "pp", "dp", "ep", "zero", "recompute", "mbs",
                           "step_time_s", "tokens_per_s", "mfu", "memory_gib"});
  if (with_tokens) {
    cols.push_back("time_to_train_s");
    cols.push_back("cost_usd");
  }
  cols.push_back("kept");
  Json j = Header(
      "every feasible configuration as the first pass scored it (closed form, analytical costs), "
      "best first by the objective",
      rep.scored.size(), cols);
  Json rows = Json::array();
  for (size_t i = 0; i < rep.scored.size() && i < kPlanPointsCap; ++i) {
    const PlanResult& r = rep.scored[i];
    const Strategy& s = r.strategy;
    Json row =
        Json::array({r.sku, r.gpus, s.tp, s.pp, s.dp, s.ep, s.zero, RecomputeName(s.recompute),
                     s.mbs, Sig6(r.step_time_s), Sig6(r.tokens_per_s), Sig6(r.mfu),
                     Sig6(r.memory_bytes / (1024.0 * 1024 * 1024))});
    if (with_tokens) {
      row.push_back(Sig6(r.time_to_train_s));
      row.push_back(r.priced ? Json(Sig6(r.cost_usd)) : Json(nullptr));
    }
    row.push_back(KeptRank(rep.results, r.index));
    rows.push_back(std::move(row));
  }
  j["rows"] = std::move(rows);
  return j;
}

Json PlanInferPointsJson(const PlanInferReport& rep) {
  Json j = Header("every feasible (size, precision) pair, best first by the objective",
                  rep.scored.size(),
                  Json::array({"sku", "gpus", "weights", "tp", "pp", "replicas", "max_batch",
                               "output_tokens_per_s", "ttft_p99_s", "tpot_p99_s",
                               "usd_per_million_tokens", "kept"}));
  Json rows = Json::array();
  for (size_t i = 0; i < rep.scored.size() && i < kPlanPointsCap; ++i) {
    const PlanInferResult& r = rep.scored[i];
    rows.push_back(Json::array({r.sku, r.gpus, DtypeName(r.weights), r.deployment.tp,
                                r.deployment.pp, r.deployment.replicas, r.deployment.max_batch,
                                Sig6(r.tokens_per_s), Sig6(r.ttft_p99_s), Sig6(r.tpot_p99_s),
                                r.priced ? Json(Sig6(r.usd_per_million_tokens)) : Json(nullptr),
                                KeptRank(rep.results, r.index)}));
  }
  j["rows"] = std::move(rows);
  return j;
}

}  // namespace ndt
