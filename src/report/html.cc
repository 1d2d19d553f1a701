#include "report/html.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
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

// The training step as a Gantt chart: a row per (stage, lane), a bar per span (or per run of
// bins when the timeline is binned), coloured by kind.
std::optional<ChartSpec> PipelineGantt(const Json& tl) {
  const Json spans = RowObjects(tl);
  if (spans.empty()) return std::nullopt;
  const bool binned = tl.value("mode", std::string()) == "binned";
  const Json& lanes = tl["lanes"];
  const Json& kinds = tl["kinds"];
  Json rows = Json::array(), order = Json::array();
  for (const Json& r : spans) {
    const std::string row =
        "stage " + std::to_string(r.value("stage", 0)) + " " + At(lanes, r.value("lane", Json()));
    if (order.empty() || order.back().get<std::string>() != row) order.push_back(row);
    Json o = {{"row", row},
              {"kind", At(kinds, r.value("kind", Json()))},
              {"start_ms", Num(r, "start_us") / 1e3},
              {"end_ms", (Num(r, "start_us") + Num(r, "dur_us")) / 1e3},
              {"duration_ms", Num(r, "dur_us") / 1e3}};
    if (binned) {
      o["busy"] = Num(r, "busy");
    } else {
      o["span"] = r.value("name", std::string());
    }
    rows.push_back(std::move(o));
  }
  std::string desc =
      "One training step, simulated: each row is a pipeline stage's lane (compute, the pipeline "
      "sends, the data-parallel reduction), each bar a span; gaps on a compute row are the "
      "pipeline bubble";
  if (tl.contains("stages_shown") &&
      tl.value("stages", 0) > static_cast<int>(tl["stages_shown"].size())) {
    desc += "; " + std::to_string(tl["stages_shown"].size()) + " of " +
            std::to_string(tl.value("stages", 0)) + " stages shown";
  }
  if (binned) {
    desc += "; binned (" + std::to_string(tl.value("spans_total", 0)) +
            " spans): a bar is a run of bins with the same main kind, its opacity the busy share";
  }
  Json s = Base(desc);
  s["width"] = 900;
  s["height"] = {{"step", order.size() > 24 ? 12 : 18}};
  s["data"] = {{"values", rows}};
  s["mark"] = {{"type", "bar"}, {"tooltip", true}};
  Json tip =
      Json::array({Field("row", "nominal", "stage, lane"), Field("kind", "nominal", "kind")});
  if (!binned) tip.push_back(Field("span", "nominal", "span"));
  tip.push_back({{"field", "start_ms"},
                 {"type", "quantitative"},
                 {"format", ",.3f"},
                 {"title", "start (ms)"}});
  tip.push_back({{"field", "duration_ms"},
                 {"type", "quantitative"},
                 {"format", ",.3f"},
                 {"title", "duration (ms)"}});
  if (binned) {
    tip.push_back(
        {{"field", "busy"}, {"type", "quantitative"}, {"format", ".0%"}, {"title", "busy share"}});
  }
  s["encoding"] = {
      {"y", {{"field", "row"}, {"type", "nominal"}, {"sort", order}, {"title", nullptr}}},
      {"x", Field("start_ms", "quantitative", "time in the step (ms)")},
      {"x2", {{"field", "end_ms"}}},
      {"color", Field("kind", "nominal", "kind")},
      {"tooltip", tip}};
  if (binned)
    s["encoding"]["opacity"] = {{"field", "busy"},
                                {"type", "quantitative"},
                                {"legend", nullptr},
                                {"scale", {{"domain", Json::array({0, 1})}}}};
  s["params"] = Json::array({{{"name", "zoom"},
                              {"select", {{"type", "interval"}, {"encodings", Json::array({"x"})}}},
                              {"bind", "scales"}}});
  return ChartSpec{"Pipeline timeline of one step", s};
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
  if (doc.contains("timeline") && doc["timeline"].is_object()) {
    if (std::optional<ChartSpec> g = PipelineGantt(doc["timeline"])) out.push_back(*g);
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

// Engine 0's batch and KV-cache use over the run, from the binned timeline.
std::vector<ChartSpec> ServeTimeline(const Json& tl) {
  const Json bins = RowObjects(tl);
  if (bins.empty()) return {};
  const double w = Num(tl, "bin_s");
  Json rows = Json::array();
  for (const Json& b : bins) {
    rows.push_back({{"time_s", Num(b, "start_s") + w / 2},
                    {"batch_mean", Num(b, "batch_mean")},
                    {"batch_max", Num(b, "batch_max")},
                    {"kv_use", Num(b, "kv_use_mean")},
                    {"busy", Num(b, "busy")}});
  }
  const Json x = Field("time_s", "quantitative", "simulated time (s)");
  const Json zoom =
      Json::array({{{"name", "zoom"},
                    {"select", {{"type", "interval"}, {"encodings", Json::array({"x"})}}},
                    {"bind", "scales"}}});
  Json batch =
      Base("Engine 0: sequences per iteration over the run (time-weighted mean per bin of " +
           Fmt(w) + " s; the light line is the bin's largest batch)");
  batch["height"] = 180;
  batch["data"] = {{"values", rows}};
  batch["layer"] = Json::array(
      {{{"mark", {{"type", "line"}, {"color", "#9ecae1"}, {"interpolate", "step-after"}}},
        {"encoding", {{"x", x}, {"y", Field("batch_max", "quantitative", "sequences")}}}},
       {{"mark",
         {{"type", "line"},
          {"color", "#08519c"},
          {"interpolate", "step-after"},
          {"tooltip", true}}},
        {"params", zoom},
        {"encoding",
         {{"x", x},
          {"y", Field("batch_mean", "quantitative", "sequences")},
          {"tooltip",
           Json::array({{{"field", "time_s"}, {"type", "quantitative"}, {"format", ",.3f"}},
                        {{"field", "batch_mean"}, {"type", "quantitative"}, {"format", ".1f"}},
                        {{"field", "batch_max"}, {"type", "quantitative"}},
                        {{"field", "busy"}, {"type", "quantitative"}, {"format", ".0%"}}})}}}}});
  Json kv = Base(
      "Engine 0: share of the KV cache's blocks in use over the run (time-weighted "
      "mean per bin)");
  kv["height"] = 140;
  kv["data"] = {{"values", rows}};
  kv["mark"] = {{"type", "area"},
                {"color", "#31a354"},
                {"opacity", 0.6},
                {"interpolate", "step-after"},
                {"tooltip", true}};
  kv["params"] = zoom;
  kv["encoding"] = {
      {"x", x},
      {"y",
       {{"field", "kv_use"},
        {"type", "quantitative"},
        {"axis", {{"format", "%"}}},
        {"title", "KV cache in use"}}},
      {"tooltip",
       Json::array({{{"field", "time_s"}, {"type", "quantitative"}, {"format", ",.3f"}},
                    {{"field", "kv_use"}, {"type", "quantitative"}, {"format", ".1%"}}})}};
  return {{"Batch size over time", batch}, {"KV-cache use over time", kv}};
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
  if (doc.contains("timeline") && doc["timeline"].is_object()) {
    std::vector<ChartSpec> over = ServeTimeline(doc["timeline"]);
    out.insert(out.end(), over.begin(), over.end());
  }
  return out;
}

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

// A compact table ({"columns": [...], "rows": [[...], ...]}, report/timeline_json.h).
bool CompactTable(const Json& j) {
  return j.is_object() && j.contains("columns") && j["columns"].is_array() && j.contains("rows") &&
         j["rows"].is_array();
}

void Render(const Json& j, std::string* out) {
  if (CompactTable(j)) {
    // Thousands of rows: their other keys as a table, the rows counted (the charts draw them,
    // the JSON below holds them).
    Json head = Json::object();
    for (const auto& [k, v] : j.items()) {
      if (k != "rows") head[k] = v;
    }
    head["rows"] =
        std::to_string(j["rows"].size()) + " rows (drawn in the charts; all in the JSON)";
    Render(head, out);
    return;
  }
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
