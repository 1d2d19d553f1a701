// EnumerateTrainStrategies: the training strategy space (plan/space.cc), counted by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "coll/testing.h"
#include "parallel/cluster_costs.h"
#include "parallel/testing.h"
#include "parallel/train.h"
#include "plan/plan.h"
#include "plan/testing.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

using namespace plan_testing;  // NOLINT: the shared helpers, as in every plan test file

TEST(EnumerateTrainStrategies, CountsByHandOnEightGpus) {
  // 32 layers, 32 heads, 8 GPUs, NVLink domain 8. (tp, pp) with tp | 32, pp | 32, tp*pp | 8:
  // tp 1: pp 1,2,4,8; tp 2: pp 1,2,4; tp 4: pp 1,2; tp 8: pp 1 -> 10 pairs, dp = 8/(tp*pp)
  // in {8,4,2,1} all divide gbs 64. Times zero {0,1} and recompute {none,selective,full}, but
  // with dp 1 (tp*pp = 8: 4 pairs) ZeRO has nothing to shard and only ZeRO 0 is kept:
  // 6 pairs x 6 + 4 pairs x 3 = 48.
  const TransformerSpec m = Llama(32, 4096, 32);
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 8, 64, Dtype::kBf16).size(), 48u);
  // gbs 4: dp 8 (tp = pp = 1) does not divide it, 9 pairs left (4 of them dp 1): 5 x 6 + 4 x 3.
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 8, 4, Dtype::kBf16).size(), 42u);
  // 12 heads (hidden 1536): tp 8 does not divide them, 9 pairs (dp 1: (1,8), (2,4), (4,2)):
  // 6 x 6 + 3 x 3 = 45.
  EXPECT_EQ(EnumerateTrainStrategies(Llama(32, 1536, 12), 8, 8, 64, Dtype::kBf16).size(), 45u);
  // NVLink domain 2 (tp <= 2): tp 1 four pairs + tp 2 three: 7 pairs, of them dp 1: (1,8),
  // (2,4): 5 x 6 + 2 x 3 = 36.
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 2, 64, Dtype::kBf16).size(), 36u);
  // ZeRO given (train --zero 1) is kept as given, dp 1 too: the 10 pairs x 3 recomputes.
  TrainSearchSpace zero1;
  zero1.zero = 1;
  zero1.tp_overlap = false;
  Strategy base;
  base.gbs = 64;
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 8, base, zero1).size(), 30u);
}

TEST(EnumerateTrainStrategies, TpGroupsTileTheNvlinkDomainsTheGpusSpan) {
  // An NVL72 domain (GB200/GB300: 18 VMs of 4 GPUs), 64 heads. On 144 GPUs (two domains) TP
  // groups are consecutive ranks: tp 16 puts ranks 64-79 across the two domains (72 % 16 = 8),
  // tp 32 ranks 64-95, tp 64 ranks 64-127, each on InfiniBand while rank 0's group, the one
  // priced, sits inside domain 0; only tp 1, 2, 4, 8 (dividing 72) are searched. On 64 GPUs, one
  // domain, every power of two up to 64 is searched.
  const TransformerSpec m = Llama(80, 8192, 64);
  auto tps = [&](int gpus) {
    std::vector<int> out;
    for (const Strategy& s : EnumerateTrainStrategies(m, gpus, 72, 4608, Dtype::kBf16)) {
      if (std::find(out.begin(), out.end(), s.tp) == out.end()) out.push_back(s.tp);
    }
    return out;
  };
  EXPECT_EQ(tps(144), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(tps(64), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  // A fixed --tp is kept as given (train checks it).
  TrainSearchSpace fixed;
  fixed.tp = 16;
  Strategy base;
  base.gbs = 4608;
  EXPECT_FALSE(EnumerateTrainStrategies(m, 144, 72, base, fixed).empty());
}

TEST(EnumerateTrainStrategies, StagesThatDoNotDivideTheLayersAreUneven) {
  // 30 layers on 8 GPUs, tp 1: pp 1, 2, 4, 8 all divide the GPUs; 30 % 4 and 30 % 8 != 0, so
  // those two run with uneven stages (first and last stages one layer short), the others even.
  const TransformerSpec m = Llama(30, 4096, 32);
  int uneven = 0, even = 0;
  for (const Strategy& s : EnumerateTrainStrategies(m, 8, 1, 64, Dtype::kBf16)) {
    EXPECT_EQ(s.uneven_stages, m.layers % s.pp != 0) << "pp " << s.pp;
    (s.uneven_stages ? uneven : even) += 1;
  }
  // pp 4 (zero {0,1} x recompute {none,sel,full}) and pp 8 (dp 1: zero 0 only, x 3).
  EXPECT_EQ(uneven, 6 + 3);
  EXPECT_EQ(even, 2 * 6);  // pp 1 and 2
}

TEST(EnumerateTrainStrategies, SpOnlyWithTensorParallelism) {
  for (const Strategy& s : EnumerateTrainStrategies(Llama(32, 4096, 32), 8, 8, 64, Dtype::kBf16)) {
    EXPECT_EQ(s.sp, s.tp > 1);
    EXPECT_EQ(s.tp * s.pp * s.dp, 8);
    EXPECT_EQ(s.cp, 1);
    EXPECT_EQ(s.ep, 1);
  }
}

TEST(EnumerateTrainStrategies, MoeSearchesEveryExpertDegreeTrainAccepts) {
  // TinyMoe (4 layers, 16 heads, 8 experts) on 8 GPUs, NVLink 8, gbs 64: tp 1, 2, 4, 8; pp 1, 2,
  // 4 (pp 3 does not divide 8). (tp, pp) -> dp: tp 1: 8, 4, 2; tp 2: 4, 2, 1; tp 4: 2, 1; tp 8: 1.
  // EP: the divisors of 8 experts dividing dp: dp 8 -> 1, 2, 4, 8 (4); dp 4 -> 3; dp 2 -> 2;
  // dp 1 -> 1. tp 1: 4 + 3 + 2, tp 2: 3 + 2 + 1, tp 4: 2 + 1, tp 8: 1 = 19, times ZeRO {0, 1} x
  // recompute {none, selective, full}: 114, less ZeRO 1 where dp is 1 (it shards nothing: the 3
  // (tp, pp) pairs with dp 1, x 3 recomputes): 105. The same shape dense: the 9 (tp, pp) pairs,
  // 9 x 6 - 9 = 45.
  const TransformerSpec moe = testing::TinyMoe(32000);
  const std::vector<Strategy> all = EnumerateTrainStrategies(moe, 8, 8, 64, Dtype::kBf16);
  EXPECT_EQ(all.size(), 105u);
  for (const Strategy& s : all) {
    EXPECT_EQ(moe.moe.experts % s.ep, 0) << "ep " << s.ep;
    EXPECT_EQ(s.dp % s.ep, 0) << "ep " << s.ep << " dp " << s.dp;
  }
  TransformerSpec dense = moe;
  dense.moe = MoeSpec{};
  dense.ffn_hidden = 3584;
  const std::vector<Strategy> d = EnumerateTrainStrategies(dense, 8, 8, 64, Dtype::kBf16);
  EXPECT_EQ(d.size(), 45u);
  for (const Strategy& s : d) EXPECT_EQ(s.ep, 1);
  // A given ep is kept: ep 4 needs dp 4 or 8: (tp 1, pp 1), (tp 1, pp 2), (tp 2, pp 1), x 6.
  Strategy base;
  base.gbs = 64;
  TrainSearchSpace space;
  space.tp_overlap = false;
  space.ep = 4;
  const std::vector<Strategy> given = EnumerateTrainStrategies(moe, 8, 8, base, space);
  EXPECT_EQ(given.size(), 18u);
  for (const Strategy& s : given) EXPECT_EQ(s.ep, 4);
}

TEST(EnumerateTrainStrategies, NeverProposesAnExpertDegreeTrainRefuses) {
  // 6 experts on 24 GPUs (dp 1, 2, 3, 4, 6, 8, 12, 24 across the (tp, pp) pairs, so EP 2, 3 and 6
  // each divide some dp and not others): every candidate passes train's own check
  // (ResolveStrategy, with the degree the planner resolves the micro-batch to: 1), and every
  // degree that check accepts for a (tp, pp, dp) is proposed.
  TransformerSpec m = testing::TinyMoe(32000);
  m.moe.experts = 6;
  std::map<std::tuple<int, int, int>, std::set<int>> eps;
  for (Strategy s : EnumerateTrainStrategies(m, 24, 8, 48, Dtype::kBf16)) {
    eps[{s.tp, s.pp, s.dp}].insert(s.ep);
    std::vector<std::string> w;
    const Status st = ResolveStrategy(m, 24, 8, &s, &w);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  ASSERT_FALSE(eps.empty());
  for (const auto& [shape, got] : eps) {
    std::set<int> want;
    for (int ep = 1; ep <= 6; ++ep) {
      if (CheckExpertDegree(m, ep, std::get<2>(shape)).ok()) want.insert(ep);
    }
    EXPECT_EQ(got, want) << "dp " << std::get<2>(shape);
  }
}

}  // namespace
}  // namespace ndt
