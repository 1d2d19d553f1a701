// File: report/train_charts.cc
// The train report's charts: the pipeline Gantt and the step breakdown (report/charts.h).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/charts.h"
#include "report/html.h"

namespace ndt {
namespace report_detail {

using Json = nlohmann::ordered_json;

namespace {

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

}  // namespace

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
          k.substr(k.size() - suffix.size()) != suffix || k == "capacity_bytes" ||
          k == "usable_bytes") {
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
    // The line the bars must stay under: the capacity less the reserve (parallel/memory_reserve.h)
    // where the document states it, else the capacity.
    const char* cap_key = m.contains("usable_bytes") ? "usable_bytes" : "capacity_bytes";
    if (m.contains(cap_key)) {
      Json cap = {
          {"data",
           {{"values",
             Json::array({{{"capacity_GiB", Num(m, cap_key) / (1024.0 * 1024 * 1024)}}})}}},
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

}  // namespace report_detail
}  // namespace ndt
