// Tests of the analytical and max-min network models on small hand-built graphs.
#include "net/network.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

// A line a - b - c: link ab 100 B/s, bc 50 B/s (both directions), latencies 1 ms each.
struct Line {
  Cluster c;
  LinkId ab = 0, bc = 0;
  Line() {
    NodeId a = c.AddNode(NodeKind::kGpu, 0, 0, "a");
    NodeId b = c.AddNode(NodeKind::kNvSwitch, 0, 0, "b");
    NodeId d = c.AddNode(NodeKind::kGpu, 0, 1, "c");
    ab = c.AddDuplex(a, b, LinkKind::kNvlink, 100, 1e-3);
    bc = c.AddDuplex(b, d, LinkKind::kNvlink, 50, 1e-3);
  }
};

Flow F(std::vector<LinkId> links, double bytes, double start = 0) {
  Flow f;
  f.route = {Path{std::move(links), 1.0}};
  f.bytes = bytes;
  f.start_s = start;
  return f;
}

TEST(Network, SingleFlowBothModelsAgreeWithoutContention) {
  Line l;
  // 100 bytes over ab (100 B/s) then bc (50 B/s): bottleneck 50 B/s -> 2 s + 2 ms latency.
  std::vector<Flow> fl = {F({l.ab, l.bc}, 100)};
  EXPECT_NEAR(FinishAnalytical(l.c, fl)[0], 2.002, 1e-9);
  EXPECT_NEAR(FinishMaxMin(l.c, fl)[0], 2.002, 1e-9);
}

TEST(Network, TwoFlowsOnOneLinkGetHalfEach) {
  Line l;
  // Both cross ab (100 B/s): 50 B/s each; 100 bytes -> 2 s (+1 ms).
  std::vector<Flow> fl = {F({l.ab}, 100), F({l.ab}, 100)};
  for (double t : FinishMaxMin(l.c, fl)) EXPECT_NEAR(t, 2.001, 1e-9);
  for (double t : FinishAnalytical(l.c, fl)) EXPECT_NEAR(t, 2.001, 1e-9);
}

TEST(Network, FlowBottleneckedElsewhereFreesCapacity) {
  Line l;
  // Flow 0 crosses ab and bc (bc = 50 B/s shared by flow 0 only): max-min gives flow 0 at most
  // 50 on bc; on ab the fair share is 50 each, flow 1 gets 100 - 50 = 50. Make bc tighter:
  // flows 0 and 2 share bc (25 each); flow 1 on ab alone with flow 0 gets 100 - 25 = 75.
  std::vector<std::vector<LinkId>> paths = {{l.ab, l.bc}, {l.ab}, {l.bc}};
  std::vector<double> r = MaxMinRates(l.c, paths);
  EXPECT_NEAR(r[0], 25, 1e-9);
  EXPECT_NEAR(r[1], 75, 1e-9);
  EXPECT_NEAR(r[2], 25, 1e-9);
}

TEST(Network, ShortFlowFinishingSpeedsUpTheOther) {
  Line l;
  // 50 and 150 bytes on ab: 50 B/s each until t=1 (short one done), then 100 B/s for the
  // remaining 100 bytes: t = 2. Plus 1 ms latency each.
  std::vector<Flow> fl = {F({l.ab}, 50), F({l.ab}, 150)};
  std::vector<double> t = FinishMaxMin(l.c, fl);
  EXPECT_NEAR(t[0], 1.001, 1e-9);
  EXPECT_NEAR(t[1], 2.001, 1e-9);
}

TEST(Network, LaterStartSharesOnlyAfterItStarts) {
  Line l;
  // Flow 0: 150 bytes at t=0 alone at 100 B/s until t=1 (50 left); flow 1 (100 bytes) starts
  // at 1: 50 each -> flow 0 done at 2; flow 1 has 50 left at 100 B/s -> 2.5.
  std::vector<Flow> fl = {F({l.ab}, 150), F({l.ab}, 100, 1.0)};
  std::vector<double> t = FinishMaxMin(l.c, fl);
  EXPECT_NEAR(t[0], 2.001, 1e-9);
  EXPECT_NEAR(t[1], 2.501, 1e-9);
}

TEST(Network, MultipathSplitsByFraction) {
  Cluster c;
  NodeId a = c.AddNode(NodeKind::kGpu, 0, 0, "a");
  NodeId b = c.AddNode(NodeKind::kGpu, 0, 1, "b");
  LinkId p = c.AddDuplex(a, b, LinkKind::kNvlink, 100, 0);
  LinkId q = c.AddDuplex(a, b, LinkKind::kNvlink, 300, 0);
  // 400 bytes, 1/4 over p (100 B/s) and 3/4 over q (300 B/s): both halves take 1 s.
  Flow f;
  f.route = {Path{{p}, 0.25}, Path{{q}, 0.75}};
  f.bytes = 400;
  EXPECT_NEAR(FinishMaxMin(c, {f})[0], 1.0, 1e-9);
  EXPECT_NEAR(FinishAnalytical(c, {f})[0], 1.0, 1e-9);
}

TEST(Network, Deterministic) {
  Line l;
  std::vector<Flow> fl = {F({l.ab, l.bc}, 70), F({l.ab}, 30), F({l.bc}, 90, 0.3)};
  EXPECT_EQ(FinishMaxMin(l.c, fl), FinishMaxMin(l.c, fl));
}

}  // namespace
}  // namespace ndt
