#include "report/html.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "report/assets.h"

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

// The text between `open` and the next "</script>" after it.
std::string ScriptText(const std::string& html, const std::string& open) {
  const size_t a = html.find(open);
  if (a == std::string::npos) return "";
  const size_t b = html.find("</script>", a);
  return html.substr(a + open.size(), b - a - open.size());
}

// Checks what every Vega-Lite spec needs: the v5 schema, inline data with rows, and a mark
// (directly, in each layer, or in a facet's inner spec) with encodings naming fields the rows have.
void ExpectValidSpec(const Json& spec) {
  EXPECT_EQ(spec.value("$schema", ""), "https://vega.github.io/schema/vega-lite/v5.json");
  std::vector<Json> views;
  const Json& inner = spec.contains("spec") ? spec["spec"] : spec;
  if (inner.contains("layer")) {
    for (const Json& l : inner["layer"]) views.push_back(l);
  } else {
    views.push_back(inner);
  }
  for (const Json& v : views) {
    EXPECT_TRUE(v.contains("mark")) << v.dump();
    ASSERT_TRUE(v.contains("data") || spec.contains("data")) << "a view without data";
    const Json& data = v.contains("data") ? v["data"]["values"] : spec["data"]["values"];
    ASSERT_TRUE(data.is_array());
    ASSERT_FALSE(data.empty());
    for (const auto& [channel, enc] : v["encoding"].items()) {
      if (!enc.is_object() || !enc.contains("field")) continue;
      EXPECT_TRUE(data[0].contains(enc["field"].get<std::string>()))
          << channel << " names " << enc["field"] << " which the data lacks";
    }
  }
}

Json TrainDoc() {
  return Json::parse(R"({"schema": "ndtwin.train/1", "step_time_s": 10.0,
    "memory": {"peak_bytes_per_gpu": 3221225472.0, "capacity_bytes": 85899345920.0,
               "weights_bytes": 1073741824.0, "activations_bytes": 2147483648.0},
    "breakdown": {"compute_s": 8.0, "tp_comm_s": 1.5, "pp_bubble_s": 0.5},
    "strategy": {"tp": 8, "chosen": []}})");
}

TEST(ChartSpecs, TrainBreakdownAndMemory) {
  const std::vector<ChartSpec> charts = ChartSpecs(TrainDoc());
  ASSERT_EQ(charts.size(), 2u);
  for (const ChartSpec& c : charts) ExpectValidSpec(c.spec);
  // Breakdown: one row per *_s entry; tp comm's share of the 10 s step is 1.5 / 10 = 0.15.
  const Json& rows = charts[0].spec["data"]["values"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1]["part"], "tp comm");
  EXPECT_DOUBLE_EQ(rows[1]["share_of_step"].get<double>(), 0.15);
  // Memory: weights and activations stacked (peak and capacity are not parts): 1 GiB + 2 GiB,
  // and the capacity rule at 80 GiB.
  const Json& mem = charts[1].spec["layer"][0]["data"]["values"];
  ASSERT_EQ(mem.size(), 2u);
  EXPECT_DOUBLE_EQ(mem[0]["GiB"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(mem[1]["GiB"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(charts[1].spec["layer"][1]["data"]["values"][0]["capacity_GiB"].get<double>(),
                   80.0);
}

TEST(ChartSpecs, CollectiveBandwidthAndLatency) {
  const Json doc = Json::parse(R"({"schema": "ndtwin.collective/1", "op": "all_reduce", "rows": [
    {"bytes": 1024, "time_us": 20.0, "algbw_GBps": 0.05, "busbw_GBps": 0.09,
     "algorithm": "Tree", "protocol": "LL"},
    {"bytes": 1048576, "time_us": 40.0, "algbw_GBps": 26.0, "busbw_GBps": 49.0,
     "algorithm": "Ring", "protocol": "Simple"}]})");
  const std::vector<ChartSpec> charts = ChartSpecs(doc);
  ASSERT_EQ(charts.size(), 2u);
  for (const ChartSpec& c : charts) ExpectValidSpec(c.spec);
  EXPECT_EQ(charts[0].spec["data"]["values"][1]["algorithm"], "Ring");
  // Zoom: the point layer binds an interval selection to the scales.
  EXPECT_EQ(charts[0].spec["layer"].back()["params"][0]["bind"], "scales");
}

TEST(ChartSpecs, PlanParetoFrontier) {
  // a: 1 s, $3; b: 2 s, $1; c: 3 s, $2 (b beats it on both: off the frontier); d ties a.
  const Json doc = Json::parse(R"({"schema": "ndtwin.plan_train/1", "results": [
    {"sku": "A", "time_to_train_s": 1.0, "cost_usd": 3.0},
    {"sku": "A", "time_to_train_s": 2.0, "cost_usd": 1.0},
    {"sku": "B", "time_to_train_s": 3.0, "cost_usd": 2.0},
    {"sku": "B", "time_to_train_s": 1.0, "cost_usd": 3.0}]})");
  const std::vector<ChartSpec> charts = ChartSpecs(doc);
  ASSERT_EQ(charts.size(), 1u);
  ExpectValidSpec(charts[0].spec);
  const Json& rows = charts[0].spec["data"]["values"];
  EXPECT_TRUE(rows[0]["frontier"].get<bool>());
  EXPECT_TRUE(rows[1]["frontier"].get<bool>());
  EXPECT_FALSE(rows[2]["frontier"].get<bool>());
  EXPECT_TRUE(rows[3]["frontier"].get<bool>());
  // plan infer: cheaper is better, more tokens/s is better.
  const Json inf = Json::parse(R"({"schema": "ndtwin.plan_infer/1", "results": [
    {"usd_per_million_tokens": 1.0, "output_tokens_per_s": 100.0},
    {"usd_per_million_tokens": 2.0, "output_tokens_per_s": 50.0}]})");
  const std::vector<ChartSpec> ic = ChartSpecs(inf);
  ASSERT_EQ(ic.size(), 1u);
  const Json& r2 = ic[0].spec["data"]["values"];
  EXPECT_TRUE(r2[0]["frontier"].get<bool>());
  EXPECT_FALSE(r2[1]["frontier"].get<bool>());
}

TEST(ChartSpecs, InferAndTopoAndUnknown) {
  const Json infer = Json::parse(R"({"schema": "ndtwin.infer/1", "output_tokens_per_s": 2000.0,
    "output_tokens_per_s_interval": {"p10": 1900.0, "p90": 2100.0},
    "ttft_s": {"p50": 0.1, "p99": 0.3}, "tpot_s": {"p50": 0.02},
    "kv_cache": {"mean_use": 0.2, "peak_use": 0.5}})");
  const std::vector<ChartSpec> ic = ChartSpecs(infer);
  ASSERT_EQ(ic.size(), 3u);
  for (const ChartSpec& c : ic) ExpectValidSpec(c.spec);
  EXPECT_EQ(ic[0].spec["data"]["values"].size(), 3u);  // ttft p50, p99; tpot p50
  EXPECT_DOUBLE_EQ(ic[1].spec["data"]["values"][0]["p90"].get<double>(), 2100.0);
  const Json topo = Json::parse(
      R"({"schema": "ndtwin.topo/1", "nodes_by_kind": {"gpu": 8}, "links_by_kind": {"nvlink": 8}})");
  EXPECT_EQ(ChartSpecs(topo).size(), 2u);
  // A command without a chart spec (sku list, fleet before it has one) gets tables only.
  EXPECT_TRUE(ChartSpecs(Json::parse(R"({"schema": "ndtwin.sku_list/1", "skus": []})")).empty());
  EXPECT_TRUE(ChartSpecs(Json::array()).empty());
}

TEST(ReportHtml, HoldsTheDocumentInputsAndSpecs) {
  const Json doc = TrainDoc();
  const Json inputs = Json::parse(R"({"sku": "</script><b>x", "tp": 8, "trace": null})");
  const std::string html = ReportHtml("train", inputs, doc);
  // The document reads back exactly, and the '<' of a hostile string cannot end the script.
  EXPECT_EQ(Json::parse(ScriptText(html, "<script type=\"application/json\" id=\"ndt-doc\">")),
            doc);
  EXPECT_EQ(Json::parse(ScriptText(html, "<script type=\"application/json\" id=\"ndt-inputs\">")),
            inputs);
  EXPECT_EQ(html.find("</script><b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;b&gt;x"), std::string::npos);
  const Json specs =
      Json::parse(ScriptText(html, "<script type=\"application/json\" id=\"ndt-specs\">"));
  ASSERT_EQ(specs.size(), 2u);
  for (const Json& s : specs) ExpectValidSpec(s);
  EXPECT_NE(html.find("id=\"chart-1\""), std::string::npos);
  // The charting libraries are inlined (nothing fetched): no <script src=...>.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  if (HaveChartAssets()) {
    EXPECT_GT(VegaLiteJs().size(), 100000u);
    EXPECT_NE(html.find(VegaEmbedJs().substr(0, 200)), std::string::npos);
  }
  // Deterministic.
  EXPECT_EQ(html, ReportHtml("train", inputs, doc));
}

// A command's warnings (the CLI's stderr lines: an accuracy caveat) show on the page, escaped;
// without any, the page has no warnings section.
TEST(ReportHtml, ShowsTheWarnings) {
  const Json doc = TrainDoc();
  const Json inputs = Json::object();
  EXPECT_EQ(ReportHtml("train", inputs, doc).find("id=\"warnings\""), std::string::npos);
  const std::string html = ReportHtml("train", inputs, doc, {"fitted on <3 cases", "second"});
  EXPECT_NE(html.find("<p class=\"warn\">fitted on &lt;3 cases</p><p class=\"warn\">second</p>"),
            std::string::npos);
}

TEST(JsonToHtml, TablesForObjectsAndRows) {
  const Json doc = Json::parse(R"({"a_b": 1.5, "rows": [{"x": 1}, {"x": 2, "y": "z"}]})");
  const std::string h = JsonToHtml(doc);
  EXPECT_NE(h.find("<th>a b</th>"), std::string::npos);
  EXPECT_NE(h.find("<th>x</th><th>y</th>"), std::string::npos);
  EXPECT_NE(h.find("data-json=\"1.5\""), std::string::npos);
}

TEST(WriteReport, AtomicAndOneLineErrors) {
  const std::string path = ::testing::TempDir() + "ndt_report_test.html";
  ASSERT_TRUE(WriteReport(path, "<html>one</html>").ok());
  ASSERT_TRUE(WriteReport(path, "<html>two</html>").ok());
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "<html>two</html>");
  const Status bad = WriteReport("/nonexistent-dir/r.html", "x");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(bad.message(),
            "cannot write report '/nonexistent-dir/r.html': No such file or directory");
  EXPECT_EQ(WriteReport("", "x").code(), StatusCode::kInvalidInput);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ndt
