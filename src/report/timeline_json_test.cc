#include "report/timeline_json.h"

#include <gtest/gtest.h>

#include "report/html.h"

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

// `stages` stages, each a compute lane of `per_stage` back-to-back spans of 1 ms alternating
// forward / backward, and a pp lane with one 0.5 ms send after each forward.
TrainSimResult Sim(int stages, int per_stage) {
  TrainSimResult r;
  r.stream_names = {"compute", "pp send fwd"};
  for (int s = 0; s < stages; ++s) {
    for (int i = 0; i < per_stage; ++i) {
      const bool fwd = i % 2 == 0;
      r.spans.push_back({s, 0, fwd ? "fwd" : "bwd", fwd ? "forward" : "backward", i * 1e-3, 1e-3});
      if (fwd) r.spans.push_back({s, 1, "send", "pp", i * 1e-3 + 1e-3, 0.5e-3});
    }
  }
  r.step_time_s = per_stage * 1e-3 + 0.5e-3;
  return r;
}

TEST(TrainTimeline, SmallStepIsEverySpan) {
  // 2 stages x (4 compute + 2 sends) = 12 spans, under the cap: one row each, in microseconds.
  const Json j = TrainTimelineJson(Sim(2, 4), 2);
  EXPECT_EQ(j["mode"], "spans");
  EXPECT_EQ(j["spans_total"], 12);
  ASSERT_EQ(j["rows"].size(), 12u);
  EXPECT_EQ(j["kinds"], Json::array({"forward", "backward", "pp"}));
  // Sorted by stage, lane, start: the first row is stage 0's first forward, 0..1000 us.
  EXPECT_EQ(j["rows"][0], Json::array({0, 0, 0, 0.0, 1000.0, "fwd"}));
  // Stage 0's pp lane comes after its 4 compute spans: the send at 1000 us for 500 us.
  EXPECT_EQ(j["rows"][4], Json::array({0, 1, 2, 1000.0, 500.0, "send"}));
}

TEST(TrainTimeline, LargeStepIsBinnedUnderTheCap) {
  // 16 stages: 8 shown (0, 2, 4, 6, 9, 11, 13, 15: round(i * 15 / 7)); 8 x 3000 spans (2000
  // compute + 1000 sends) = 24,000 > the cap, so each of the 16 lanes gets 4000 / 16 = 250 bins.
  const Json j = TrainTimelineJson(Sim(16, 2000), 16);
  EXPECT_EQ(j["stages_shown"], Json::array({0, 2, 4, 6, 9, 11, 13, 15}));
  EXPECT_EQ(j["mode"], "binned");
  EXPECT_EQ(j["spans_total"], 24000);
  EXPECT_LE(j["rows"].size(), static_cast<size_t>(kTimelineSpanCap));
  // The compute lane is busy all the time: the first bin of 2.0005 s / 250 = 8.002 ms holds 4
  // backwards and 4 forwards plus 2 us of the next forward: forward, busy 1.0.
  const Json& first = j["rows"][0];
  EXPECT_EQ(first[0], 0);
  EXPECT_EQ(first[1], 0);
  EXPECT_EQ(first[5], 1.0);
  // Same input, same bytes.
  EXPECT_EQ(j.dump(), TrainTimelineJson(Sim(16, 2000), 16).dump());
}

TEST(InferTimeline, BinsAreTimeWeighted) {
  // Two iterations: batch 4 using 10 of 100 blocks for 1 s, then batch 8 using 30 for 1 s; two
  // bins of 1 s: means 4 and 8, KV 0.1 and 0.3, both fully busy.
  InferResult r;
  r.deployment.memory.kv_blocks_per_replica = 100;
  r.trace_iterations = {{0.0, 1.0, 4, 4, 0, 10}, {1.0, 1.0, 8, 0, 8, 30}};
  const Json j = InferTimelineJson(r);
  ASSERT_EQ(j["rows"].size(), 2u);
  EXPECT_EQ(j["rows"][0], Json::array({0.0, 4.0, 4, 0.1, 1.0}));
  EXPECT_EQ(j["rows"][1], Json::array({1.0, 8.0, 8, 0.3, 1.0}));
  EXPECT_TRUE(InferTimelineJson(InferResult())["rows"].empty());
}

TEST(TimelineCharts, GanttAndServeSeriesDraw) {
  Json train = {{"schema", "ndtwin.train/1"}, {"timeline", TrainTimelineJson(Sim(2, 4), 2)}};
  std::vector<ChartSpec> c = ChartSpecs(train);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].title, "Pipeline timeline of one step");
  // A bar per span, and a row per (stage, lane) in the y sort: 2 stages x 2 lanes.
  EXPECT_EQ(c[0].spec["data"]["values"].size(), 12u);
  EXPECT_EQ(c[0].spec["encoding"]["y"]["sort"].size(), 4u);
  InferResult r;
  r.deployment.memory.kv_blocks_per_replica = 100;
  r.trace_iterations = {{0.0, 1.0, 4, 4, 0, 10}, {1.0, 1.0, 8, 0, 8, 30}};
  Json infer = {{"schema", "ndtwin.infer/1"}, {"timeline", InferTimelineJson(r)}};
  c = ChartSpecs(infer);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].title, "KV-cache use over time");
  EXPECT_EQ(c[1].spec["data"]["values"][1]["kv_use"], 0.3);
}

}  // namespace
}  // namespace ndt
