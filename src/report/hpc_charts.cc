// File: report/hpc_charts.cc
// The hpc report's charts (report/charts.h), from the `ndtwin hpc` document (ndtwin.hpc/1):
// HPL's critical path and activity totals, STREAM GPU vs host per VM, the OSU pairs' latency
// and bandwidth over message size, the allreduce latency over size, HPCG's time per iteration,
// and halo3d's weak and strong scaling over the GPU count.
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "report/charts.h"
#include "report/html.h"

namespace ndt {
namespace report_detail {

using Json = nlohmann::ordered_json;

namespace {

// A log2 axis of message sizes labelled 1K, 1M, ...
Json BytesAxis(const std::string& field) {
  return {{"field", field},
          {"type", "quantitative"},
          {"scale", {{"type", "log"}, {"base", 2}}},
          {"title", "message size (bytes)"},
          {"axis",
           {{"labelExpr",
             "datum.value >= 1048576 ? datum.value / 1048576 + 'M' : datum.value >= 1024 ? "
             "datum.value / 1024 + 'K' : datum.value"}}}};
}

// A horizontal bar of `rows` {part, seconds}.
Json Bars(const std::string& description, const Json& rows, const std::string& unit_title) {
  Json s = Base(description);
  s["data"] = {{"values", rows}};
  s["mark"] = {{"type", "bar"}, {"tooltip", true}};
  s["encoding"] = {
      {"y", {{"field", "part"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr}}},
      {"x", Field("value", "quantitative", unit_title)},
      {"color", {{"field", "group"}, {"type", "nominal"}, {"title", nullptr}}}};
  return s;
}

void HplCharts(const Json& h, std::vector<ChartSpec>* out) {
  Json rows = Json::array();
  if (h.contains("critical_path_s") && h["critical_path_s"].is_object())
    for (const auto& [k, v] : h["critical_path_s"].items())
      if (v.is_number())
        rows.push_back({{"part", "critical path: " + k}, {"group", "critical path"}, {"value", v}});
  if (h.contains("totals_s") && h["totals_s"].is_object())
    for (const auto& [k, v] : h["totals_s"].items())
      if (v.is_number())
        rows.push_back({{"part", "total: " + k}, {"group", "activity total"}, {"value", v}});
  if (rows.empty()) return;
  out->push_back({"HPL time breakdown",
                  Bars("HPL: the critical path split by what set each panel step's time (sums to "
                       "the run's time), and each activity's total, hidden under the look-ahead "
                       "or not",
                       rows, "seconds")});
}

void StreamCharts(const Json& s, std::vector<ChartSpec>* out) {
  Json rows = Json::array();
  rows.push_back({{"part", "GPU HBM (all GPUs of a VM)"},
                  {"group", "GPU"},
                  {"value", Num(s, "vm_Bps") / 1e9}});
  if (s.contains("host") && s["host"].is_object()) {
    rows.push_back({{"part", "host DRAM (STREAM Triad)"},
                    {"group", "host"},
                    {"value", Num(s["host"], "vm_Bps") / 1e9}});
    rows.push_back({{"part", "host DRAM (theoretical)"},
                    {"group", "host"},
                    {"value", Num(s["host"], "peak_Bps") / 1e9}});
  }
  out->push_back({"STREAM per VM",
                  Bars("STREAM per VM: the GPUs' HBM against the host's DRAM", rows, "GB/s")});
}

void OsuPairCharts(const Json& pairs, std::vector<ChartSpec>* out) {
  Json rows = Json::array();
  for (const Json& p : pairs) {
    if (!p.contains("curve") || !p["curve"].is_array()) continue;
    const std::string scope =
        p.value("scope", std::string("?")) + " (" + p.value("path", std::string("?")) + ")";
    for (const Json& c : p["curve"])
      rows.push_back({{"bytes", Num(c, "bytes")},
                      {"latency_us", Num(c, "latency_us")},
                      {"bandwidth_GBps", Num(c, "bandwidth_Bps") / 1e9},
                      {"pair", scope}});
  }
  if (rows.empty()) return;
  const Json tip =
      Json::array({{{"field", "pair"}, {"type", "nominal"}},
                   {{"field", "bytes"}, {"type", "quantitative"}, {"format", ","}},
                   {{"field", "latency_us"}, {"type", "quantitative"}, {"format", ".2f"}},
                   {{"field", "bandwidth_GBps"}, {"type", "quantitative"}, {"format", ".2f"}}});
  for (const auto& [field, title, log_y] :
       {std::tuple<std::string, std::string, bool>{"latency_us", "one-way latency (us)", true},
        {"bandwidth_GBps", "osu_bw bandwidth (GB/s)", false}}) {
    Json s = Base("OSU point-to-point: " + title + " vs message size, per GPU pair");
    s["data"] = {{"values", rows}};
    Json y = Field(field, "quantitative", title);
    if (log_y) y["scale"] = {{"type", "log"}};
    s["mark"] = {{"type", "line"}, {"point", true}, {"tooltip", true}};
    s["params"] = ZoomParam();
    s["encoding"] = {{"x", BytesAxis("bytes")},
                     {"y", y},
                     {"color", Field("pair", "nominal", "pair")},
                     {"tooltip", tip}};
    out->push_back({field == "latency_us" ? "OSU latency vs size" : "OSU bandwidth vs size", s});
  }
}

void AllreduceCharts(const Json& a, std::vector<ChartSpec>* out) {
  if (!a.contains("curve") || !a["curve"].is_array() || a["curve"].empty()) return;
  Json rows = Json::array();
  for (const Json& c : a["curve"])
    rows.push_back({{"bytes", Num(c, "bytes")},
                    {"latency_us", Num(c, "latency_us")},
                    {"busbw_GBps", Num(c, "busbw_Bps") / 1e9}});
  Json s = Base(
      "osu_allreduce: latency vs message size (MPI's recursive doubling, then "
      "Rabenseifner)");
  s["data"] = {{"values", rows}};
  s["mark"] = {{"type", "line"}, {"point", true}, {"tooltip", true}};
  s["params"] = ZoomParam();
  s["encoding"] = {
      {"x", BytesAxis("bytes")},
      {"y",
       {{"field", "latency_us"},
        {"type", "quantitative"},
        {"scale", {{"type", "log"}}},
        {"title", "latency (us)"}}},
      {"tooltip",
       Json::array({{{"field", "bytes"}, {"type", "quantitative"}},
                    {{"field", "latency_us"}, {"type", "quantitative"}, {"format", ".2f"}},
                    {{"field", "busbw_GBps"}, {"type", "quantitative"}, {"format", ".2f"}}})}};
  out->push_back({"Allreduce latency vs size", s});
}

void HpcgCharts(const Json& h, std::vector<ChartSpec>* out) {
  Json rows = Json::array();
  for (const char* k : {"memory_s", "halo_s", "allreduce_s"})
    rows.push_back({{"part", Label(std::string(k).substr(0, std::string(k).size() - 2))},
                    {"group", "per CG iteration"},
                    {"value", Num(h, k) * 1e3}});
  out->push_back(
      {"HPCG time per iteration",
       Bars("HPCG: one CG iteration's time by activity (nothing overlaps)", rows, "milliseconds")});
}

void Halo3dCharts(const Json& h, std::vector<ChartSpec>* out) {
  if (!h.contains("rows") || !h["rows"].is_array()) return;
  Json rows = Json::array();
  for (const Json& r : h["rows"]) {
    rows.push_back({{"gpus", Num(r, "gpus")},
                    {"efficiency", Num(r, "weak_efficiency")},
                    {"scaling", "weak (grid per GPU)"},
                    {"path", r.value("path", std::string("?"))}});
    rows.push_back({{"gpus", Num(r, "gpus")},
                    {"efficiency", Num(r, "strong_efficiency")},
                    {"scaling", "strong (one GPU's grid split)"},
                    {"path", r.value("path", std::string("?"))}});
  }
  Json s = Base(
      "halo3d: parallel efficiency vs GPUs; strong scaling stops where it falls below "
      "50%");
  s["data"] = {{"values", rows}};
  s["layer"] = Json::array(
      {{{"mark", {{"type", "line"}, {"point", true}, {"tooltip", true}}},
        {"params", ZoomParam()},
        {"encoding",
         {{"x",
           {{"field", "gpus"},
            {"type", "quantitative"},
            {"scale", {{"type", "log"}, {"base", 2}}},
            {"title", "GPUs"}}},
          {"y",
           {{"field", "efficiency"},
            {"type", "quantitative"},
            {"axis", {{"format", "%"}}},
            {"title", "efficiency"}}},
          {"color", Field("scaling", "nominal", "scaling")},
          {"tooltip",
           Json::array({{{"field", "gpus"}, {"type", "quantitative"}},
                        {{"field", "efficiency"}, {"type", "quantitative"}, {"format", ".1%"}},
                        {{"field", "path"}, {"type", "nominal"}}})}}}},
       {{"mark", {{"type", "rule"}, {"strokeDash", Json::array({4, 4})}, {"color", "#888"}}},
        {"encoding", {{"y", {{"datum", 0.5}}}}}}});
  out->push_back({"halo3d scaling", s});
}

}  // namespace

std::vector<ChartSpec> HpcCharts(const Json& doc) {
  std::vector<ChartSpec> out;
  if (doc.contains("hpl") && doc["hpl"].is_object()) HplCharts(doc["hpl"], &out);
  if (doc.contains("stream") && doc["stream"].is_object()) StreamCharts(doc["stream"], &out);
  if (doc.contains("pairs") && doc["pairs"].is_array()) OsuPairCharts(doc["pairs"], &out);
  if (doc.contains("allreduce") && doc["allreduce"].is_object())
    AllreduceCharts(doc["allreduce"], &out);
  if (doc.contains("hpcg") && doc["hpcg"].is_object()) HpcgCharts(doc["hpcg"], &out);
  if (doc.contains("halo3d") && doc["halo3d"].is_object()) Halo3dCharts(doc["halo3d"], &out);
  return out;
}

}  // namespace report_detail
}  // namespace ndt
