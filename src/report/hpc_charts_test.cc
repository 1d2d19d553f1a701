#include <gtest/gtest.h>

#include "report/charts.h"
#include "report/html.h"

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

std::vector<std::string> Titles(const std::vector<ChartSpec>& c) {
  std::vector<std::string> t;
  for (const ChartSpec& s : c) t.push_back(s.title);
  return t;
}

TEST(HpcCharts, HplBreakdownRows) {
  Json doc = {
      {"schema", "ndtwin.hpc/1"},
      {"hpl",
       {{"critical_path_s",
         {{"dgemm", 9.0}, {"panel", 0.5}, {"communication", 0.4}, {"refinement", 0.0}}},
        {"totals_s", {{"update", 9.0}, {"panel", 2.0}, {"broadcast", 1.0}, {"swap", 0.4}}}}}};
  std::vector<ChartSpec> c = ChartSpecs(doc);
  ASSERT_EQ(Titles(c), std::vector<std::string>{"HPL time breakdown"});
  const Json& rows = c[0].spec["data"]["values"];
  ASSERT_EQ(rows.size(), 8u);  // 4 critical-path parts + 4 totals
  EXPECT_EQ(rows[0]["part"], "critical path: dgemm");
  EXPECT_EQ(rows[0]["value"], 9.0);
  EXPECT_EQ(rows[7]["part"], "total: swap");
  EXPECT_EQ(c[0].spec["mark"]["type"], "bar");
}

TEST(HpcCharts, OsuPairsOneRowPerPointAndPair) {
  Json curve = Json::array({{{"bytes", 1}, {"latency_us", 2.9}, {"bandwidth_Bps", 1e6}},
                            {{"bytes", 4194304}, {"latency_us", 90.0}, {"bandwidth_Bps", 49e9}}});
  Json doc = {
      {"schema", "ndtwin.hpc/1"},
      {"pairs", Json::array({{{"scope", "intra-vm"}, {"path", "NVLink"}, {"curve", curve}},
                             {{"scope", "inter-vm"}, {"path", "InfiniBand"}, {"curve", curve}}})}};
  std::vector<ChartSpec> c = ChartSpecs(doc);
  ASSERT_EQ(Titles(c), (std::vector<std::string>{"OSU latency vs size", "OSU bandwidth vs size"}));
  const Json& rows = c[1].spec["data"]["values"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[3]["pair"], "inter-vm (InfiniBand)");
  EXPECT_DOUBLE_EQ(rows[3]["bandwidth_GBps"].get<double>(), 49.0);  // B/s -> GB/s
  EXPECT_EQ(c[0].spec["encoding"]["y"]["scale"]["type"], "log");
}

TEST(HpcCharts, StreamHostOrNot) {
  Json gpu_only = {{"schema", "ndtwin.hpc/1"}, {"stream", {{"vm_Bps", 23e12}, {"host", nullptr}}}};
  std::vector<ChartSpec> a = ChartSpecs(gpu_only);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].spec["data"]["values"].size(), 1u);
  Json both = {
      {"schema", "ndtwin.hpc/1"},
      {"stream", {{"vm_Bps", 23e12}, {"host", {{"vm_Bps", 4.9e11}, {"peak_Bps", 6.1e11}}}}}};
  std::vector<ChartSpec> b = ChartSpecs(both);
  ASSERT_EQ(b[0].spec["data"]["values"].size(), 3u);
  EXPECT_DOUBLE_EQ(b[0].spec["data"]["values"][1]["value"].get<double>(), 490);  // GB/s
}

TEST(HpcCharts, Halo3dWeakAndStrongAndAllreduce) {
  Json doc = {
      {"schema", "ndtwin.hpc/1"},
      {"halo3d",
       {{"rows", Json::array({{{"gpus", 1}, {"weak_efficiency", 1.0}, {"strong_efficiency", 1.0}},
                              {{"gpus", 16},
                               {"weak_efficiency", 0.74},
                               {"strong_efficiency", 0.49},
                               {"path", "InfiniBand"}}})}}}};
  std::vector<ChartSpec> c = ChartSpecs(doc);
  ASSERT_EQ(Titles(c), std::vector<std::string>{"halo3d scaling"});
  EXPECT_EQ(c[0].spec["data"]["values"].size(), 4u);                // weak and strong per row
  EXPECT_EQ(c[0].spec["layer"][1]["encoding"]["y"]["datum"], 0.5);  // the 50% line
  // An allreduce without a curve draws nothing; with one, its latency.
  Json ar = {{"schema", "ndtwin.hpc/1"}, {"allreduce", {{"curve", Json::array()}}}};
  EXPECT_TRUE(ChartSpecs(ar).empty());
  ar["allreduce"]["curve"].push_back({{"bytes", 8}, {"latency_us", 33.0}, {"busbw_Bps", 1e5}});
  EXPECT_EQ(Titles(ChartSpecs(ar)), std::vector<std::string>{"Allreduce latency vs size"});
}

}  // namespace
}  // namespace ndt
