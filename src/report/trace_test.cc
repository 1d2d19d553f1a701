#include "report/trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ndt {
namespace {

Trace TwoTrackTrace() {
  Trace t;
  t.title = "test";
  t.tracks.push_back({0, 0, "rank 0", "compute"});
  t.tracks.push_back({0, 1, "rank 0", "tp comm"});
  t.spans.push_back({0, "fwd", "compute", 0.001, 0.002});
  t.spans.push_back({1, "allreduce", "tp", 0.003, 0.0005});
  return t;
}

TEST(Trace, IsValidJsonWithNamedTracksAndMicrosecondSpans) {
  auto j = nlohmann::json::parse(TraceToJson(TwoTrackTrace()));
  const auto& ev = j.at("traceEvents");
  // 1 process: process_name + sort; 2 threads: name + sort each; 2 spans = 8 events.
  ASSERT_EQ(ev.size(), 8u);
  int threads = 0, spans = 0;
  for (const auto& e : ev) {
    if (e["name"] == "thread_name") ++threads;
    if (e["ph"] == "X") {
      ++spans;
      if (e["name"] == "fwd") {
        EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1000.0);  // 0.001 s = 1000 us
        EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2000.0);
        EXPECT_EQ(e["tid"], 0);
      }
    }
  }
  EXPECT_EQ(threads, 2);
  EXPECT_EQ(spans, 2);
}

TEST(Trace, WriteToBadPathIsAnError) {
  Status s = WriteTrace(TwoTrackTrace(), "/nonexistent-dir/x.json");
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
}

}  // namespace
}  // namespace ndt
