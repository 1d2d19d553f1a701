// File: report/plan_charts.cc
// The plan reports' charts: every configuration as a point with the Pareto frontier
// (report/charts.h).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "report/charts.h"
#include "report/html.h"

namespace ndt {
namespace report_detail {

using Json = nlohmann::ordered_json;

namespace {

// Every configuration as a point, the Pareto frontier as a line through the ones no other beats
// on both axes; with `kept`, the command's results (a "kept" rank > 0) ringed.
ChartSpec PlanScatter(const Json& in, const std::string& x, bool x_min, const std::string& y,
                      bool y_min, const std::string& description, bool kept) {
  Json rows = Json::array();
  Json tip = Json::array();
  std::vector<std::string> skus;
  for (const Json& r : in) {
    if (!r.is_object() || !r.contains(x) || !r.contains(y) || !r[x].is_number() ||
        !r[y].is_number()) {
      continue;
    }
    Json row;
    for (const auto& [k, v] : r.items()) {
      if (!v.is_primitive()) continue;
      row[k] = v;
      if (rows.empty()) {
        Json t = {{"field", k}, {"type", v.is_number() ? "quantitative" : "nominal"}};
        if (v.is_number_float()) t["format"] = ",.4~g";
        tip.push_back(t);
      }
    }
    if (r.contains("sku") && r["sku"].is_string() &&
        std::find(skus.begin(), skus.end(), r["sku"].get<std::string>()) == skus.end()) {
      skus.push_back(r["sku"].get<std::string>());
    }
    rows.push_back(row);
  }
  MarkPareto(&rows, x, x_min, y, y_min);
  Json s = Base(description);
  s["height"] = 360;
  s["data"] = {{"values", rows}};
  const Json xe = {
      {"field", x}, {"type", "quantitative"}, {"title", Label(x)}, {"scale", {{"zero", false}}}};
  const Json ye = {
      {"field", y}, {"type", "quantitative"}, {"title", Label(y)}, {"scale", {{"zero", false}}}};
  // Colour: the size where there are several, else the pipeline depth.
  const Json color = skus.size() > 1 ? Field("sku", "nominal", "size")
                     : rows.empty() || !rows[0].contains("pp")
                         ? Field("frontier", "nominal", "on the frontier")
                         : Field("pp", "ordinal", "pp");
  Json layers = Json::array(
      {{{"transform", Json::array({{{"filter", "datum.frontier"}}})},
        {"mark", {{"type", "line"}, {"color", "black"}, {"strokeDash", Json::array({4, 3})}}},
        {"encoding", {{"x", xe}, {"y", ye}, {"order", {{"field", x}}}}}},
       {{"mark",
         {{"type", "point"},
          {"filled", true},
          {"size", rows.size() > 300 ? 25 : 60},
          {"opacity", 0.7}}},
        {"params", ZoomParam()},
        {"encoding",
         {{"x", xe},
          {"y", ye},
          {"color", color},
          {"shape", Field("frontier", "nominal", "on the Pareto frontier")},
          {"tooltip", tip}}}}});
  if (kept) {
    layers.push_back({{"transform", Json::array({{{"filter", "datum.kept > 0"}}})},
                      {"mark",
                       {{"type", "point"},
                        {"filled", false},
                        {"size", 180},
                        {"color", "black"},
                        {"strokeWidth", 1.5}}},
                      {"encoding", {{"x", xe}, {"y", ye}, {"tooltip", tip}}}});
  }
  s["layer"] = layers;
  return {"Configurations and the Pareto frontier", s};
}

}  // namespace

// With the evaluated points (--points, --report): all of them; else the kept results.
std::vector<ChartSpec> PlanTrainCharts(const Json& doc) {
  const bool points = doc.contains("points") && doc["points"].is_object();
  const Json rows = points ? RowObjects(doc["points"]) : doc.value("results", Json::array());
  if (!rows.is_array() || rows.empty()) return {};
  bool cost = false;
  for (const Json& r : rows) cost = cost || (r.contains("cost_usd") && r["cost_usd"].is_number());
  std::string x = "time_to_train_s", y = "cost_usd";
  bool y_min = true;
  if (!cost) {
    x = points ? "memory_gib" : "memory_bytes_per_gpu";
    y = "tokens_per_s";
    y_min = false;
  }
  std::string what = points ? "Every feasible configuration the planner scored (" +
                                  std::to_string(rows.size()) + " of " +
                                  std::to_string(doc["points"].value("total", 0)) +
                                  "; the closed form's numbers; ringed: the ones it kept)"
                            : "Each configuration the planner kept";
  return {PlanScatter(rows, x, true, y, y_min,
                      what + ": " + Label(x) + " against " + Label(y) +
                          "; the dashed line joins the ones no other beats on both",
                      points)};
}

std::vector<ChartSpec> PlanInferCharts(const Json& doc) {
  const bool points = doc.contains("points") && doc["points"].is_object();
  const Json rows = points ? RowObjects(doc["points"]) : doc.value("results", Json::array());
  if (!rows.is_array() || rows.empty()) return {};
  return {PlanScatter(rows, "usd_per_million_tokens", true, "output_tokens_per_s", false,
                      std::string(points ? "Every feasible (size, precision) pair the planner "
                                           "ran (ringed: the ones it kept)"
                                         : "Each deployment the planner kept") +
                          ": cost per million output tokens against output tokens/s; the dashed "
                          "line joins the ones no other beats on both",
                      points)};
}

}  // namespace report_detail
}  // namespace ndt
