// Tests of the analytical and max-min network models on small hand-built graphs.
#include "net/network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

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

TEST(Network, AnalyticalSharingOnAClusterWithManyIdleLinks) {
  // The Line plus 64 idle duplex links elsewhere: the analytical model then counts flows per
  // link on the links the flows touch only (FinishAnalytical's sparse count) and must agree with
  // the small graph: both flows cross ab (100 B/s), 50 B/s each, 100 bytes -> 2 s (+1 ms).
  Line l;
  for (int i = 0; i < 64; ++i) {
    NodeId x = l.c.AddNode(NodeKind::kGpu, 1 + i, 0, "x");
    NodeId y = l.c.AddNode(NodeKind::kGpu, 1 + i, 1, "y");
    l.c.AddDuplex(x, y, LinkKind::kNvlink, 1, 0);
  }
  std::vector<Flow> fl = {F({l.ab}, 100), F({l.ab}, 100)};
  for (double t : FinishAnalytical(l.c, fl)) EXPECT_NEAR(t, 2.001, 1e-9);
  // Flow 0 crosses ab and bc (bottleneck bc 50 B/s, alone there); flow 1 ab only: ab is shared
  // by 2 (50 each), so flow 0 runs at min(50, 50) = 50 and flow 1 at 50; 100 bytes -> 2 s.
  std::vector<Flow> two = {F({l.ab, l.bc}, 100), F({l.ab}, 100)};
  std::vector<double> t = FinishAnalytical(l.c, two);
  EXPECT_NEAR(t[0], 2.002, 1e-9);
  EXPECT_NEAR(t[1], 2.001, 1e-9);
  // The same flows with a third on bc: bc shared by 2 (25 each) -> flow 0 at 25: 4 s (+2 ms).
  two.push_back(F({l.bc}, 100));
  t = FinishAnalytical(l.c, two);
  EXPECT_NEAR(t[0], 4.002, 1e-9);
  EXPECT_NEAR(t[2], 4.001, 1e-9);
}

// Both models count and number links sparsely when the flows touch few of the cluster's links
// and with a table over all links otherwise (network.cc): the same 24 flows (32 link crossings)
// on the Line alone (4 links: the table) and on the Line with 1,024 idle duplex links (2,052:
// sparse, 32 x 16 < 2,052) must finish at bit-identical times.
TEST(Network, IdleLinksElsewhereChangeNoBit) {
  Line small, big;
  for (int i = 0; i < 1024; ++i) {
    NodeId x = big.c.AddNode(NodeKind::kGpu, 1 + i, 0, "x");
    NodeId y = big.c.AddNode(NodeKind::kGpu, 1 + i, 1, "y");
    big.c.AddDuplex(x, y, LinkKind::kNvlink, 1, 0);
  }
  std::vector<Flow> fl;
  for (int i = 0; i < 24; ++i) {
    std::vector<LinkId> path = i % 3 == 0   ? std::vector<LinkId>{small.ab, small.bc}
                               : i % 3 == 1 ? std::vector<LinkId>{small.ab}
                                            : std::vector<LinkId>{small.bc};
    fl.push_back(F(path, 10.0 + 7.0 * (i % 5) + 0.1 * i, 0.05 * (i % 4)));
  }
  ASSERT_EQ(small.ab, big.ab);  // same ids: the idle links come after
  for (auto finish : {&FinishMaxMin, &FinishAnalytical}) {
    const std::vector<double> a = finish(small.c, fl);
    const std::vector<double> b = finish(big.c, fl);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);
  }
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

// Three nodes x -> y -> z; link xy 100 B/s, yz 200 B/s, no latency.
struct Vee {
  Cluster c;
  LinkId xy = 0, yz = 0;
  Vee() {
    NodeId x = c.AddNode(NodeKind::kGpu, 0, 0, "x");
    NodeId y = c.AddNode(NodeKind::kNvSwitch, 0, 0, "y");
    NodeId z = c.AddNode(NodeKind::kGpu, 0, 1, "z");
    xy = c.AddDuplex(x, y, LinkKind::kNvlink, 100, 0);
    yz = c.AddDuplex(y, z, LinkKind::kNvlink, 200, 0);
  }
};

TEST(Network, AFinishingFlowCanSlowAnother) {
  Vee v;
  // f1 on xy (50 bytes), f2 on xy and yz (250), f3 on yz (450). Max-min: xy saturates first at
  // 50 each (f1, f2); yz has 200 - 50 = 150 left for f3. At t = 1 f1 is done; f2 now shares
  // only yz with f3: 100 each, so f3 falls from 150 to 100 B/s (max-min is not monotone).
  // f2: 250 - 50 = 200 left at 100 -> t = 3. f3: 450 - 150 = 300 left, 200 sent by t = 3, the
  // last 100 alone at 200 B/s -> t = 3.5.
  std::vector<Flow> fl = {F({v.xy}, 50), F({v.xy, v.yz}, 250), F({v.yz}, 450)};
  std::vector<double> t = FinishMaxMin(v.c, fl);
  EXPECT_NEAR(t[0], 1.0, 1e-9);
  EXPECT_NEAR(t[1], 3.0, 1e-9);
  EXPECT_NEAR(t[2], 3.5, 1e-9);
}

// Reference for FinishMaxMin: every event re-solves all active subflows from scratch.
std::vector<double> FullResolve(const Cluster& c, const std::vector<Flow>& flows) {
  const int n = static_cast<int>(flows.size());
  std::vector<double> left(n), finish(n, -1);
  for (int i = 0; i < n; ++i) left[i] = flows[i].bytes;
  double now = 0;
  for (;;) {
    std::vector<int> act;
    double next_start = 1e300;
    for (int i = 0; i < n; ++i) {
      if (finish[i] >= 0) continue;
      if (flows[i].start_s <= now)
        act.push_back(i);
      else
        next_start = std::min(next_start, flows[i].start_s);
    }
    if (act.empty() && next_start == 1e300) break;
    if (act.empty()) {
      now = next_start;
      continue;
    }
    std::vector<std::vector<LinkId>> paths;
    for (int i : act) paths.push_back(flows[i].route[0].links);
    std::vector<double> r = MaxMinRates(c, paths);
    double dt = next_start - now;
    for (size_t a = 0; a < act.size(); ++a) dt = std::min(dt, left[act[a]] / r[a]);
    now += dt;
    for (size_t a = 0; a < act.size(); ++a) {
      left[act[a]] -= r[a] * dt;
      if (left[act[a]] <= 1e-9 * flows[act[a]].bytes) finish[act[a]] = now;
    }
  }
  return finish;
}

TEST(Network, IncrementalReSolveMatchesAFullReSolveAtEveryEvent) {
  // 60 flows over random subsets of the 4 directed links of Vee (both directions), random sizes
  // and starts (fixed LCG): FinishMaxMin re-solves only the top of the allocation at a
  // completion; the reference re-solves everything. Same max-min, so same finish times.
  Vee v;
  const LinkId links[] = {v.xy, v.xy + 1, v.yz, v.yz + 1};
  uint64_t x = 12345;
  auto next = [&]() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(x >> 11) / 9007199254740992.0;
  };
  std::vector<Flow> fl;
  for (int i = 0; i < 60; ++i) {
    std::vector<LinkId> p;
    for (LinkId l : links)
      if (next() < 0.5) p.push_back(l);
    if (p.empty()) p.push_back(links[i % 4]);
    fl.push_back(F(p, 10 + 1000 * next(), next() < 0.7 ? 0.0 : 5 * next()));
  }
  std::vector<double> got = FinishMaxMin(v.c, fl);
  std::vector<double> want = FullResolve(v.c, fl);
  for (int i = 0; i < 60; ++i) EXPECT_NEAR(got[i], want[i], 1e-9 * want[i]) << i;
}

TEST(Network, ExtremeBandwidthRatiosStillFinish) {
  // A 1e-3 B/s link next to a 1e12 B/s one: 1 byte on the slow link takes 1000 s, 1e12 bytes
  // on the fast one 1 s; the event loop must neither stall nor lose either flow.
  Cluster c;
  NodeId a = c.AddNode(NodeKind::kGpu, 0, 0, "a");
  NodeId b = c.AddNode(NodeKind::kGpu, 0, 1, "b");
  LinkId slow = c.AddDuplex(a, b, LinkKind::kIb, 1e-3, 0);
  LinkId fast = c.AddDuplex(a, b, LinkKind::kNvlink, 1e12, 0);
  std::vector<Flow> fl = {F({slow}, 1), F({fast}, 1e12), F({fast}, 1e12)};
  std::vector<double> t = FinishMaxMin(c, fl);
  EXPECT_NEAR(t[0], 1000, 1e-6);
  EXPECT_NEAR(t[1], 2, 1e-9);
  EXPECT_NEAR(t[2], 2, 1e-9);
}

// The max-min model's answer does not depend on the order the flows are listed in (callers build
// flow lists from schedules, maps and threads): 24 flows on a line with shared links, staggered
// starts and equal-rate ties, listed forward and reversed, finish at bit-identical times
// (compared as bytes, not within a tolerance). A solver that broke ties or summed rates in list
// order would differ in the last bits or in who finishes first.
TEST(Network, FinishTimesDoNotDependOnTheFlowOrder) {
  Line l;
  std::vector<Flow> fl;
  for (int i = 0; i < 24; ++i) {
    std::vector<LinkId> path = i % 3 == 0   ? std::vector<LinkId>{l.ab, l.bc}
                               : i % 3 == 1 ? std::vector<LinkId>{l.ab}
                                            : std::vector<LinkId>{l.bc};
    fl.push_back(F(path, 10.0 + 7.0 * (i % 5) + 0.1 * i, 0.05 * (i % 4)));
  }
  std::vector<Flow> rev(fl.rbegin(), fl.rend());
  const std::vector<double> a = FinishMaxMin(l.c, fl);
  std::vector<double> b = FinishMaxMin(l.c, rev);
  std::reverse(b.begin(), b.end());
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::memcmp(&a[i], &b[i], sizeof(double)), 0)
        << "flow " << i << ": " << a[i] << " vs " << b[i];
  }
}

}  // namespace
}  // namespace ndt
