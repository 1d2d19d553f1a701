#include "report/plan_points_json.h"

#include <gtest/gtest.h>

#include "report/html.h"

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

PlanResult Point(size_t index, double step_s, double cost) {
  PlanResult r;
  r.index = index;
  r.sku = "S";
  r.gpus = 8;
  r.step_time_s = step_s;
  r.tokens_per_s = 1e6 / step_s;
  r.time_to_train_s = 1000 * step_s;
  r.cost_usd = cost;
  r.priced = true;
  return r;
}

TEST(PlanPoints, EveryScoredPointWithItsKeptRank) {
  // Three scored, the third (index 7) kept first and the first (index 3) second: kept 2, 0, 1.
  PlanTrainReport rep;
  rep.scored = {Point(3, 1.0, 30), Point(5, 1.5, 20), Point(7, 2.0, 10)};
  rep.results = {rep.scored[2], rep.scored[0]};
  const Json j = PlanTrainPointsJson(rep, true);
  EXPECT_EQ(j["total"], 3);
  EXPECT_EQ(j["shown"], 3);
  ASSERT_EQ(j["rows"].size(), 3u);
  const Json& cols = j["columns"];
  const size_t kept = cols.size() - 1, cost = cols.size() - 2;
  EXPECT_EQ(cols[kept], "kept");
  EXPECT_EQ(j["rows"][0][kept], 2);
  EXPECT_EQ(j["rows"][1][kept], 0);
  EXPECT_EQ(j["rows"][2][kept], 1);
  EXPECT_EQ(j["rows"][1][cost], 20.0);
  // Six significant digits: 1e6 / 1.5 = 666666.67 -> 666667.
  EXPECT_EQ(j["rows"][1][10], 666667.0);
}

TEST(PlanPoints, CappedAndCharted) {
  // 2,500 scored: 2,000 shown. Cost falls as time rises (t, 3000 - t), so every point is on the
  // frontier of (time, cost): the chart marks them all.
  PlanTrainReport rep;
  for (size_t i = 0; i < 2500; ++i) {
    rep.scored.push_back(Point(i, 1.0 + static_cast<double>(i), 3000.0 - static_cast<double>(i)));
  }
  rep.results = {rep.scored[0]};
  const Json points = PlanTrainPointsJson(rep, true);
  EXPECT_EQ(points["total"], 2500);
  EXPECT_EQ(points["rows"].size(), kPlanPointsCap);
  const Json doc = {
      {"schema", "ndtwin.plan_train/1"}, {"results", Json::array()}, {"points", points}};
  const std::vector<ChartSpec> c = ChartSpecs(doc);
  ASSERT_EQ(c.size(), 1u);
  const Json& rows = c[0].spec["data"]["values"];
  ASSERT_EQ(rows.size(), kPlanPointsCap);
  for (const Json& r : rows) EXPECT_TRUE(r["frontier"].get<bool>());
}

}  // namespace
}  // namespace ndt
