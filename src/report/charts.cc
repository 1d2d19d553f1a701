// File: report/charts.cc
// The report's Vega-Lite charts: the helpers the chart builders share, the collective and topo
// charts, and ChartSpecs (report/html.h), which picks the builder by the document's schema.
#include "report/charts.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report/html.h"

namespace ndt {
namespace report_detail {

using Json = nlohmann::ordered_json;

std::string Label(std::string key) {
  for (char& c : key) {
    if (c == '_') c = ' ';
  }
  return key;
}

double Num(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

std::string Fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

Json Base(const std::string& description) {
  Json s;
  s["$schema"] = "https://vega.github.io/schema/vega-lite/v5.json";
  s["description"] = description;
  s["width"] = 560;
  return s;
}

// Drag to pan, wheel to zoom, double-click to reset.
Json ZoomParam() {
  return Json::array({{{"name", "zoom"}, {"select", "interval"}, {"bind", "scales"}}});
}

Json Field(const std::string& field, const std::string& type, const std::string& title) {
  return {{"field", field}, {"type", type}, {"title", title}};
}

// Marks each row `frontier`: true when no other row is at least as good on both axes and
// better on one. `x_min`/`y_min`: smaller is better on that axis.
void MarkPareto(Json* rows, const std::string& x, bool x_min, const std::string& y, bool y_min) {
  for (Json& a : *rows) {
    bool dominated = false;
    const double ax = a[x].get<double>(), ay = a[y].get<double>();
    for (const Json& b : *rows) {
      const double bx = b[x].get<double>(), by = b[y].get<double>();
      const bool x_ok = x_min ? bx <= ax : bx >= ax;
      const bool y_ok = y_min ? by <= ay : by >= ay;
      const bool strict = bx != ax || by != ay;
      if (x_ok && y_ok && strict) dominated = true;
    }
    a["frontier"] = !dominated;
  }
}

// The rows of a compact table ({"columns": [...], "rows": [[...], ...]}) as objects.
Json RowObjects(const Json& t) {
  Json out = Json::array();
  if (!t.contains("columns") || !t.contains("rows") || !t["rows"].is_array()) return out;
  const Json& cols = t["columns"];
  for (const Json& r : t["rows"]) {
    if (!r.is_array()) continue;
    Json o = Json::object();
    for (size_t i = 0; i < cols.size() && i < r.size(); ++i) o[cols[i].get<std::string>()] = r[i];
    out.push_back(std::move(o));
  }
  return out;
}

std::string At(const Json& names, const Json& i) {
  if (!i.is_number_integer() || !names.is_array()) return "?";
  const int64_t k = i.get<int64_t>();
  return k >= 0 && k < static_cast<int64_t>(names.size()) && names[k].is_string()
             ? names[k].get<std::string>()
             : "?";
}

std::vector<ChartSpec> CollectiveCharts(const Json& doc) {
  std::vector<ChartSpec> out;
  if (!doc.contains("rows") || !doc["rows"].is_array()) return out;
  Json rows = Json::array();
  bool band = false;
  for (const Json& r : doc["rows"]) {
    Json row = {{"bytes", Num(r, "bytes")},
                {"busbw_GBps", Num(r, "busbw_GBps")},
                {"algbw_GBps", Num(r, "algbw_GBps")},
                {"time_us", Num(r, "time_us")},
                {"algorithm", r.value("algorithm", std::string("-"))},
                {"protocol", r.value("protocol", std::string("-"))}};
    if (r.contains("busbw_GBps_interval") && r["busbw_GBps_interval"].is_object()) {
      row["p10"] = Num(r["busbw_GBps_interval"], "p10");
      row["p90"] = Num(r["busbw_GBps_interval"], "p90");
      band = true;
    }
    rows.push_back(row);
  }
  const Json x = {{"field", "bytes"},
                  {"type", "quantitative"},
                  {"scale", {{"type", "log"}, {"base", 2}}},
                  {"title", "message size (bytes)"},
                  {"axis",
                   {{"labelExpr",
                     "datum.value >= 1073741824 ? datum.value / 1073741824 + 'G' : datum.value >= "
                     "1048576 ? datum.value / 1048576 + 'M' : datum.value >= 1024 ? datum.value / "
                     "1024 + 'K' : datum.value"}}}};
  const Json tip =
      Json::array({{{"field", "bytes"}, {"type", "quantitative"}, {"format", ","}},
                   {{"field", "time_us"}, {"type", "quantitative"}, {"format", ".2f"}},
                   {{"field", "busbw_GBps"}, {"type", "quantitative"}, {"format", ".2f"}},
                   {{"field", "algbw_GBps"}, {"type", "quantitative"}, {"format", ".2f"}},
                   Field("algorithm", "nominal", "algorithm"),
                   Field("protocol", "nominal", "protocol")});
  const std::string op = doc.value("op", std::string("collective"));
  for (const auto& [field, title, log_y] :
       {std::tuple<std::string, std::string, bool>{"busbw_GBps", "bus bandwidth (GB/s)", false},
        {"time_us", "time (us)", true}}) {
    Json s = Base(op + ": " + title + " vs message size; colour is NCCL's algorithm");
    s["data"] = {{"values", rows}};
    Json y = {{"field", field}, {"type", "quantitative"}, {"title", title}};
    if (log_y) y["scale"] = {{"type", "log"}};
    Json layers = Json::array();
    if (band && field == "busbw_GBps") {
      layers.push_back({{"mark", {{"type", "area"}, {"opacity", 0.2}}},
                        {"encoding",
                         {{"x", x},
                          {"y", {{"field", "p10"}, {"type", "quantitative"}}},
                          {"y2", {{"field", "p90"}}}}}});
    }
    layers.push_back(
        {{"mark", {{"type", "line"}, {"color", "#888"}}}, {"encoding", {{"x", x}, {"y", y}}}});
    layers.push_back({{"mark", {{"type", "point"}, {"filled", true}, {"size", 60}}},
                      {"params", ZoomParam()},
                      {"encoding",
                       {{"x", x},
                        {"y", y},
                        {"color", Field("algorithm", "nominal", "algorithm")},
                        {"shape", Field("protocol", "nominal", "protocol")},
                        {"tooltip", tip}}}});
    s["layer"] = layers;
    out.push_back({field == "busbw_GBps" ? "Bus bandwidth vs size" : "Latency vs size", s});
  }
  return out;
}

std::vector<ChartSpec> TopoCharts(const Json& doc) {
  std::vector<ChartSpec> out;
  for (const auto& [key, title] : {std::pair<std::string, std::string>{"nodes_by_kind", "Nodes"},
                                   {"links_by_kind", "Links"}}) {
    if (!doc.contains(key) || !doc[key].is_object()) continue;
    Json rows = Json::array();
    for (const auto& [k, v] : doc[key].items()) rows.push_back({{"kind", k}, {"count", v}});
    Json s = Base(title + " of the cluster's graph, by kind");
    s["data"] = {{"values", rows}};
    s["mark"] = {{"type", "bar"}, {"tooltip", true}};
    s["encoding"] = {{"y", {{"field", "kind"}, {"type", "nominal"}, {"sort", "-x"}}},
                     {"x", Field("count", "quantitative", "count")},
                     {"color", {{"field", "kind"}, {"type", "nominal"}, {"legend", nullptr}}}};
    out.push_back({title + " by kind", s});
  }
  return out;
}

}  // namespace report_detail

using report_detail::CollectiveCharts;
using report_detail::HpcCharts;
using report_detail::InferCharts;
using report_detail::PlanInferCharts;
using report_detail::PlanTrainCharts;
using report_detail::TopoCharts;
using report_detail::TrainCharts;

std::vector<ChartSpec> ChartSpecs(const nlohmann::ordered_json& doc) {
  if (!doc.is_object()) return {};
  const std::string schema = doc.value("schema", std::string());
  const std::string kind = schema.substr(0, schema.find('/'));
  if (kind == "ndtwin.train") return TrainCharts(doc);
  if (kind == "ndtwin.collective") return CollectiveCharts(doc);
  if (kind == "ndtwin.infer") return InferCharts(doc);
  if (kind == "ndtwin.plan_train") return PlanTrainCharts(doc);
  if (kind == "ndtwin.plan_infer") return PlanInferCharts(doc);
  if (kind == "ndtwin.topo") return TopoCharts(doc);
  if (kind == "ndtwin.hpc") return HpcCharts(doc);
  return {};
}

}  // namespace ndt
