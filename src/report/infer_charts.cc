// File: report/infer_charts.cc
// The infer report's charts: latency, throughput, KV cache, and engine 0's batch and KV-cache
// use over the run (report/charts.h).
#include <string>
#include <utility>
#include <vector>

#include "report/charts.h"
#include "report/html.h"

namespace ndt {
namespace report_detail {

using Json = nlohmann::ordered_json;

namespace {

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

}  // namespace

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

}  // namespace report_detail
}  // namespace ndt
