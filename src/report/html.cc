#include "report/html.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <tuple>
#include <utility>

#include "report/assets.h"

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

// JSON text safe inside a <script> element: '<' only occurs inside strings, where \u003c reads
// back as the same character.
std::string ScriptJson(const Json& j) {
  const std::string s = j.dump();
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Label(std::string key) {
  for (char& c : key) {
    if (c == '_') c = ' ';
  }
  return key;
}

double Num(const Json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
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

std::vector<ChartSpec> TrainCharts(const Json& doc) {
  std::vector<ChartSpec> out;
  if (doc.contains("breakdown") && doc["breakdown"].is_object()) {
    const double step = Num(doc, "step_time_s");
    Json rows = Json::array();
    for (const auto& [k, v] : doc["breakdown"].items()) {
      if (!v.is_number()) continue;
      std::string part =
          k.size() > 2 && k.substr(k.size() - 2) == "_s" ? k.substr(0, k.size() - 2) : k;
      const double s = v.get<double>();
      rows.push_back(
          {{"part", Label(part)}, {"seconds", s}, {"share_of_step", step > 0 ? s / step : 0.0}});
    }
    Json s = Base("Where a training step's time goes (seconds per step, per component)");
    s["data"] = {{"values", rows}};
    s["mark"] = {{"type", "bar"}, {"tooltip", true}};
    s["encoding"] = {
        {"y", {{"field", "part"}, {"type", "nominal"}, {"sort", "-x"}, {"title", nullptr}}},
        {"x", Field("seconds", "quantitative", "seconds per step")},
        {"color", {{"field", "part"}, {"type", "nominal"}, {"legend", nullptr}}},
        {"tooltip",
         Json::array({Field("part", "nominal", "component"),
                      {{"field", "seconds"}, {"type", "quantitative"}, {"format", ".4f"}},
                      {{"field", "share_of_step"},
                       {"type", "quantitative"},
                       {"format", ".1%"},
                       {"title", "share of step time"}}})}};
    s["params"] = ZoomParam();
    out.push_back({"Step time breakdown", s});
  }
  if (doc.contains("memory") && doc["memory"].is_object()) {
    const Json& m = doc["memory"];
    Json rows = Json::array();
    for (const auto& [k, v] : m.items()) {
      const std::string suffix = "_bytes";
      if (!v.is_number() || k.size() <= suffix.size() ||
          k.substr(k.size() - suffix.size()) != suffix || k == "capacity_bytes") {
        continue;
      }
      rows.push_back({{"part", Label(k.substr(0, k.size() - suffix.size()))},
                      {"GiB", v.get<double>() / (1024.0 * 1024 * 1024)},
                      {"gpu", "peak stage"}});
    }
    Json s = Base("GPU memory at the peak pipeline stage (GiB), against the GPU's capacity");
    s["height"] = 80;
    Json bar = {
        {"data", {{"values", rows}}},
        {"mark", {{"type", "bar"}, {"tooltip", true}}},
        {"encoding",
         {{"y", Field("gpu", "nominal", "")},
          {"x",
           {{"field", "GiB"},
            {"type", "quantitative"},
            {"stack", "zero"},
            {"title", "GiB per GPU"}}},
          {"color", Field("part", "nominal", "memory")},
          {"tooltip",
           Json::array({Field("part", "nominal", "memory"),
                        {{"field", "GiB"}, {"type", "quantitative"}, {"format", ".2f"}}})}}}};
    Json layers = Json::array({bar});
    if (m.contains("capacity_bytes")) {
      Json cap = {
          {"data",
           {{"values", Json::array({{{"capacity_GiB",
                                      Num(m, "capacity_bytes") / (1024.0 * 1024 * 1024)}}})}}},
          {"mark", {{"type", "rule"}, {"color", "black"}, {"strokeWidth", 2}, {"tooltip", true}}},
          {"encoding",
           {{"x", {{"field", "capacity_GiB"}, {"type", "quantitative"}}},
            {"tooltip", Json::array({{{"field", "capacity_GiB"},
                                      {"type", "quantitative"},
                                      {"format", ".2f"},
                                      {"title", "usable capacity (GiB)"}}})}}}};
      layers.push_back(cap);
    }
    s["layer"] = layers;
    out.push_back({"Memory per GPU", s});
  }
  return out;
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

std::vector<ChartSpec> InferCharts(const Json& doc) {
  std::vector<ChartSpec> out;
  Json rows = Json::array();
  for (const char* metric : {"ttft_s", "tpot_s", "e2e_s"}) {
    if (!doc.contains(metric) || !doc[metric].is_object()) continue;
    for (const char* stat : {"mean", "p50", "p90", "p99", "max"}) {
      if (!doc[metric].contains(stat)) continue;
      rows.push_back(
          {{"metric", Label(metric)}, {"statistic", stat}, {"seconds", Num(doc[metric], stat)}});
    }
  }
  if (!rows.empty()) {
    Json s = Base("Latency distribution per request: mean and percentiles (seconds)");
    s.erase("width");
    s["data"] = {{"values", rows}};
    s["facet"] = {{"column", Field("metric", "nominal", "")}};
    s["spec"] = {
        {"width", 170},
        {"mark", {{"type", "bar"}, {"tooltip", true}}},
        {"encoding",
         {{"x",
           {{"field", "statistic"},
            {"type", "ordinal"},
            {"sort", Json::array({"mean", "p50", "p90", "p99", "max"})}}},
          {"y", Field("seconds", "quantitative", "seconds")},
          {"color", {{"field", "statistic"}, {"type", "ordinal"}, {"legend", nullptr}}},
          {"tooltip",
           Json::array({Field("metric", "nominal", "metric"),
                        Field("statistic", "ordinal", "statistic"),
                        {{"field", "seconds"}, {"type", "quantitative"}, {"format", ".4f"}}})}}}};
    s["resolve"] = {{"scale", {{"y", "independent"}}}};
    out.push_back({"Latency distributions", s});
  }
  Json thr = Json::array();
  for (const char* q : {"output_tokens_per_s", "per_gpu_output_tokens_per_s", "requests_per_s"}) {
    if (!doc.contains(q) || !doc[q].is_number()) continue;
    Json row = {{"quantity", Label(q)}, {"value", doc[q].get<double>()}};
    const std::string iv = std::string(q) + "_interval";
    if (doc.contains(iv) && doc[iv].is_object()) {
      row["p10"] = Num(doc[iv], "p10");
      row["p90"] = Num(doc[iv], "p90");
    }
    thr.push_back(row);
  }
  if (!thr.empty()) {
    Json s = Base("Throughput; the whisker is the prediction interval (p10-p90) where one exists");
    s.erase("width");
    s["data"] = {{"values", thr}};
    s["facet"] = {{"column", Field("quantity", "nominal", "")}};
    s["spec"] = {
        {"width", 150},
        {"layer",
         Json::array(
             {{{"mark", {{"type", "bar"}, {"tooltip", true}}},
               {"encoding",
                {{"y", Field("value", "quantitative", "")},
                 {"tooltip",
                  Json::array({Field("quantity", "nominal", "quantity"),
                               {{"field", "value"}, {"type", "quantitative"}, {"format", ",.1f"}},
                               {{"field", "p10"},
                                {"type", "quantitative"},
                                {"format", ",.1f"},
                                {"title", "interval p10"}},
                               {{"field", "p90"},
                                {"type", "quantitative"},
                                {"format", ",.1f"},
                                {"title", "interval p90"}}})}}}},
              {{"mark", {{"type", "rule"}, {"color", "black"}}},
               {"encoding",
                {{"y", {{"field", "p10"}, {"type", "quantitative"}}},
                 {"y2", {{"field", "p90"}}}}}}})}};
    s["resolve"] = {{"scale", {{"y", "independent"}}}};
    out.push_back({"Throughput", s});
  }
  if (doc.contains("kv_cache") && doc["kv_cache"].is_object()) {
    Json kv = Json::array();
    for (const char* q : {"mean_use", "peak_use"}) {
      if (doc["kv_cache"].contains(q)) {
        kv.push_back({{"use", Label(q)}, {"fraction", Num(doc["kv_cache"], q)}});
      }
    }
    if (!kv.empty()) {
      Json s = Base("KV-cache use over the run: mean and peak fraction of the cache's blocks");
      s["height"] = 80;
      s["data"] = {{"values", kv}};
      s["mark"] = {{"type", "bar"}, {"tooltip", true}};
      s["encoding"] = {
          {"y", Field("use", "nominal", "")},
          {"x",
           {{"field", "fraction"},
            {"type", "quantitative"},
            {"scale", {{"domain", Json::array({0, 1})}}},
            {"axis", {{"format", "%"}}},
            {"title", "KV cache in use"}}},
          {"tooltip",
           Json::array({Field("use", "nominal", "use"),
                        {{"field", "fraction"}, {"type", "quantitative"}, {"format", ".2%"}}})}};
      out.push_back({"KV cache use", s});
    }
  }
  return out;
}

// Every configuration as a point, the Pareto frontier as a line through the winners.
ChartSpec PlanScatter(const Json& doc, const std::string& x, bool x_min, const std::string& y,
                      bool y_min, const std::string& description) {
  Json rows = Json::array();
  Json tip = Json::array();
  bool first = true;
  for (const Json& r : doc["results"]) {
    if (!r.is_object() || !r.contains(x) || !r.contains(y)) continue;
    Json row;
    for (const auto& [k, v] : r.items()) {
      if (v.is_primitive()) row[k] = v;
      if (first && v.is_primitive()) {
        Json t = {{"field", k}, {"type", v.is_number() ? "quantitative" : "nominal"}};
        if (v.is_number_float()) t["format"] = ",.4~g";
        tip.push_back(t);
      }
    }
    first = false;
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
  s["layer"] = Json::array(
      {{{"transform", Json::array({{{"filter", "datum.frontier"}}})},
        {"mark", {{"type", "line"}, {"color", "black"}, {"strokeDash", Json::array({4, 3})}}},
        {"encoding", {{"x", xe}, {"y", ye}, {"order", {{"field", x}}}}}},
       {{"mark", {{"type", "point"}, {"filled", true}, {"size", 70}}},
        {"params", ZoomParam()},
        {"encoding",
         {{"x", xe},
          {"y", ye},
          {"color",
           Field(rows.empty() || !rows[0].contains("sku") ? "frontier" : "sku", "nominal", "")},
          {"shape", Field("frontier", "nominal", "on the Pareto frontier")},
          {"tooltip", tip}}}}});
  return {"Configurations and the Pareto frontier", s};
}

std::vector<ChartSpec> PlanTrainCharts(const Json& doc) {
  if (!doc.contains("results") || !doc["results"].is_array() || doc["results"].empty()) return {};
  const Json& r0 = doc["results"][0];
  const std::string x = r0.contains("time_to_train_s") ? "time_to_train_s" : "step_time_s";
  const std::string y = r0.contains("cost_usd") ? "cost_usd" : "gpus";
  return {PlanScatter(doc, x, true, y, true,
                      "Each configuration the planner kept: " + Label(x) + " against " + Label(y) +
                          "; the dashed line joins the ones no other beats on both")};
}

std::vector<ChartSpec> PlanInferCharts(const Json& doc) {
  if (!doc.contains("results") || !doc["results"].is_array() || doc["results"].empty()) return {};
  return {PlanScatter(doc, "usd_per_million_tokens", true, "output_tokens_per_s", false,
                      "Each deployment the planner kept: cost per million output tokens against "
                      "output tokens/s; the dashed line joins the ones no other beats on both")};
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

void Render(const Json& j, std::string* out);

void RenderScalar(const Json& v, std::string* out) {
  if (v.is_string()) {
    *out += HtmlEscape(v.get<std::string>());
  } else if (v.is_null()) {
    *out += "<span class=\"null\">-</span>";
  } else if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", v.get<double>());
    *out += "<span class=\"num\" title=\"" + v.dump() + "\" data-json=\"" + v.dump() + "\">" + buf +
            "</span>";
  } else {
    *out += "<span class=\"num\" data-json=\"" + HtmlEscape(v.dump()) + "\">" +
            HtmlEscape(v.dump()) + "</span>";
  }
}

bool TableOfObjects(const Json& a) {
  if (!a.is_array() || a.empty()) return false;
  for (const Json& e : a) {
    if (!e.is_object()) return false;
  }
  return true;
}

void Render(const Json& j, std::string* out) {
  if (j.is_object()) {
    *out += "<table class=\"kv\">";
    for (const auto& [k, v] : j.items()) {
      *out += "<tr><th>" + HtmlEscape(Label(k)) + "</th><td data-key=\"" + HtmlEscape(k) + "\">";
      Render(v, out);
      *out += "</td></tr>";
    }
    *out += "</table>";
  } else if (TableOfObjects(j)) {
    std::vector<std::string> cols;
    for (const Json& e : j) {
      for (const auto& [k, v] : e.items()) {
        if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
      }
    }
    *out += "<table class=\"rows\"><tr>";
    for (const std::string& c : cols) *out += "<th>" + HtmlEscape(Label(c)) + "</th>";
    *out += "</tr>";
    for (const Json& e : j) {
      *out += "<tr>";
      for (const std::string& c : cols) {
        *out += "<td>";
        if (e.contains(c)) Render(e[c], out);
        *out += "</td>";
      }
      *out += "</tr>";
    }
    *out += "</table>";
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      if (i > 0) *out += ", ";
      Render(j[i], out);
    }
  } else {
    RenderScalar(j, out);
  }
}

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
.sub{color:#666;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5;font-weight:600}
table.kv>tbody>tr>th,table.kv>tr>th{white-space:nowrap}
.num{font-variant-numeric:tabular-nums}.null{color:#999}
.chart{margin:12px 0 24px 0}.chart h3{font-size:15px;margin:0 0 4px 0}
.chart p{color:#555;font-size:13px;margin:0 0 6px 0}
.warn{background:#fff3cd;border:1px solid #e0c36b;padding:8px}
pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px;max-height:480px}
)css";

}  // namespace

std::vector<ChartSpec> ChartSpecs(const Json& doc) {
  if (!doc.is_object()) return {};
  const std::string schema = doc.value("schema", std::string());
  const std::string kind = schema.substr(0, schema.find('/'));
  if (kind == "ndtwin.train") return TrainCharts(doc);
  if (kind == "ndtwin.collective") return CollectiveCharts(doc);
  if (kind == "ndtwin.infer") return InferCharts(doc);
  if (kind == "ndtwin.plan_train") return PlanTrainCharts(doc);
  if (kind == "ndtwin.plan_infer") return PlanInferCharts(doc);
  if (kind == "ndtwin.topo") return TopoCharts(doc);
  return {};
}

std::string JsonToHtml(const Json& doc) {
  std::string out;
  Render(doc, &out);
  return out;
}

std::string ReportHtml(const std::string& command, const Json& inputs, const Json& doc) {
  const std::vector<ChartSpec> charts = ChartSpecs(doc);
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>ndtwin " + HtmlEscape(command) + "</title>\n<style>" + std::string(kStyle) +
       "</style>\n</head><body>\n";
  h += "<h1>ndtwin " + HtmlEscape(command) + "</h1>\n";
  h += "<div class=\"sub\">ndtwin " NDT_VERSION;
  if (doc.is_object() && doc.contains("schema")) {
    h += " &middot; " +
         HtmlEscape(doc["schema"].is_string() ? doc["schema"].get<std::string>() : "");
  }
  h += " &middot; a prediction of the model, not a measurement</div>\n";
  h += "<h2>Inputs</h2>\n<div id=\"inputs\">";
  Json shown = Json::object();
  for (const auto& [k, v] : inputs.items()) {
    const bool unset = v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
                       (v.is_string() && v.get<std::string>().empty()) ||
                       (v.is_array() && v.empty());
    if (!unset) shown[k] = v;
  }
  h += shown.empty() ? std::string("<p>(defaults)</p>") : JsonToHtml(shown);
  h += "</div>\n";
  if (!charts.empty()) {
    h += "<h2>Charts</h2>\n";
    if (!HaveChartAssets()) {
      h += "<p class=\"warn\">This ndtwin was built without the charting libraries "
           "(web/node_modules: run <code>make deps</code> and rebuild); the chart specs are "
           "embedded below.</p>\n";
    }
    h += "<p class=\"sub\">Hover for values; drag to pan and scroll to zoom where the axes are "
         "numeric; double-click to reset.</p>\n";
    for (size_t i = 0; i < charts.size(); ++i) {
      h += "<div class=\"chart\"><h3>" + HtmlEscape(charts[i].title) + "</h3><p>" +
           HtmlEscape(charts[i].spec.value("description", std::string())) + "</p><div id=\"chart-" +
           std::to_string(i) + "\" class=\"vl\"></div></div>\n";
    }
  }
  h += "<h2>Results</h2>\n<div id=\"results\">" + JsonToHtml(doc) + "</div>\n";
  h += "<h2>JSON</h2>\n<details><summary>the command's --json document</summary><pre>" +
       HtmlEscape(doc.dump(2)) + "</pre></details>\n";
  h += "<script type=\"application/json\" id=\"ndt-doc\">" + ScriptJson(doc) + "</script>\n";
  h += "<script type=\"application/json\" id=\"ndt-inputs\">" + ScriptJson(inputs) + "</script>\n";
  Json specs = Json::array();
  for (const ChartSpec& c : charts) specs.push_back(c.spec);
  h += "<script type=\"application/json\" id=\"ndt-specs\">" + ScriptJson(specs) + "</script>\n";
  if (!charts.empty() && HaveChartAssets()) {
    h += "<script>" + VegaJs() + "\n</script>\n<script>" + VegaLiteJs() + "\n</script>\n<script>" +
         VegaEmbedJs() + "\n</script>\n";
    h += R"js(<script>
(function () {
  var specs = JSON.parse(document.getElementById('ndt-specs').textContent);
  var done = 0;
  specs.forEach(function (spec, i) {
    var el = document.getElementById('chart-' + i);
    vegaEmbed(el, spec, {actions: false, renderer: 'svg'}).then(function () {
      el.setAttribute('data-rendered', 'true');
    }).catch(function (e) {
      el.setAttribute('data-error', String(e));
      el.textContent = 'chart failed: ' + e;
    }).finally(function () {
      if (++done === specs.length) document.body.setAttribute('data-charts-done', 'true');
    });
  });
})();
</script>
)js";
  }
  h += "</body></html>\n";
  return h;
}

Status WriteReport(const std::string& path, const std::string& html) {
  if (path.empty())
    return Status::InvalidInput("--report needs a file name (e.g. --report r.html)");
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return Status::InvalidInput("cannot write report '" + path + "': " + std::strerror(errno));
    }
    out << html;
    out.close();
    if (!out) {
      const int err = errno;
      std::remove(tmp.c_str());
      return Status::InvalidInput("cannot write report '" + path + "': " + std::strerror(err));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return Status::InvalidInput("cannot write report '" + path + "': " + std::strerror(err));
  }
  return Status::Ok();
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace ndt
