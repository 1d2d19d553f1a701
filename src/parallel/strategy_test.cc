#include "parallel/strategy.h"

#include <gtest/gtest.h>

#include "parallel/testing.h"
#include "parallel/train_sim.h"

namespace ndt {
namespace {

using testing::FakeCosts;
using testing::Resolve;
using testing::SmallGpt;

TEST(Strategy, UnevenStagesGiveTheEndsFewerLayers) {
  // Llama 3 405B: 126 layers on 16 stages = ceil 8 each (128), 2 too many: the first and the
  // last stage lose one (7, 8 x 14, 7), as Meta ran it.
  std::vector<int64_t> counts;
  int64_t next = 0;
  for (int v = 0; v < 16; ++v) {
    const LayerRange r = ChunkLayers(126, 16, 1, v);
    EXPECT_EQ(r.first, next) << v;  // contiguous
    next += r.count;
    counts.push_back(r.count);
  }
  EXPECT_EQ(next, 126);
  EXPECT_EQ(counts.front(), 7);
  EXPECT_EQ(counts.back(), 7);
  for (int v = 1; v < 15; ++v) EXPECT_EQ(counts[v], 8) << v;
  // 9 layers on 4: ceil 3 (12), 3 too many: v = 0, 3, then 1 lose one -> 2, 2, 3, 2.
  const int64_t want[] = {2, 2, 3, 2};
  for (int v = 0; v < 4; ++v) EXPECT_EQ(ChunkLayers(9, 4, 1, v).count, want[v]) << v;
  // Even splits are unchanged: 96 layers, pp 12 x vpp 2 -> 4 each, v x 4 first.
  for (int v = 0; v < 24; ++v) {
    EXPECT_EQ(ChunkLayers(96, 12, 2, v).count, 4);
    EXPECT_EQ(ChunkLayers(96, 12, 2, v).first, 4 * v);
  }
}

TEST(Strategy, DivisibilityErrorsAreOneLine) {
  TransformerSpec m = SmallGpt();
  std::vector<std::string> w;
  Strategy s;
  s.gbs = 8;
  s.tp = 3;
  Status st = ResolveStrategy(m, 3, 8, &s, &w);
  EXPECT_EQ(st.code(), StatusCode::kInfeasible);
  EXPECT_NE(st.message().find("heads"), std::string::npos);
  // 8 layers cannot fill pp 4 x vpp 4 = 16 virtual stages (pp 3 alone is fine: 3, 2, 3).
  Strategy p;
  p.gbs = 8;
  p.pp = 4;
  p.vpp = 4;
  p.uneven_stages = true;
  const Status sp = ResolveStrategy(m, 4, 8, &p, &w);
  EXPECT_EQ(sp.code(), StatusCode::kInfeasible);
  EXPECT_NE(sp.message().find("at least one layer"), std::string::npos);
  // pp 3 does not divide 8 layers: an error unless uneven stages are asked for (3, 2, 3).
  Strategy p3;
  p3.gbs = 8;
  p3.pp = 3;
  const Status s3 = ResolveStrategy(m, 3, 8, &p3, &w);
  EXPECT_EQ(s3.code(), StatusCode::kInfeasible);
  EXPECT_NE(s3.message().find("--uneven-stages"), std::string::npos);
  p3.uneven_stages = true;
  EXPECT_TRUE(ResolveStrategy(m, 3, 8, &p3, &w).ok());
  Strategy d;
  d.gbs = 7;
  EXPECT_EQ(ResolveStrategy(m, 2, 8, &d, &w).code(), StatusCode::kInfeasible);
  // vpp interleaves stages: meaningless with pp 1.
  Strategy v;
  v.gbs = 8;
  v.vpp = 2;
  EXPECT_EQ(ResolveStrategy(m, 1, 8, &v, &w).code(), StatusCode::kInvalidInput);
  // 16385 micro-batches (gbs 16385, dp 1, mbs 1) is one over the cap; 16384 resolves.
  Strategy big;
  big.gbs = 16385;
  EXPECT_EQ(ResolveStrategy(m, 1, 8, &big, &w).code(), StatusCode::kInvalidInput);
  big.gbs = 16384;
  EXPECT_TRUE(ResolveStrategy(m, 1, 8, &big, &w).ok());
}

TEST(Strategy, MegatronRankOrderPutsTpFastest) {
  Strategy s;
  s.tp = 2;
  s.pp = 2;
  s.dp = 2;
  // coord {tp, cp, dp, pp}: rank = tp + 2 * dp + 4 * pp.
  EXPECT_EQ(RankOf(s, {1, 0, 1, 1}), 1 + 2 + 4);
  EXPECT_EQ(GroupRanks(s, Axis::kDp, {0, 0, 0, 0}), (std::vector<int>{0, 2}));
  // cp 2 between tp and dp: rank = tp + 2 * cp + 4 * dp + 8 * pp; the weight replicas of rank 1
  // (tp 1, pp 0) are every cp and dp coordinate: 1, 3, 5, 7.
  Strategy c = s;
  c.cp = 2;
  EXPECT_EQ(DataParallelRanks(c, {1, 0, 0, 0}), (std::vector<int>{1, 3, 5, 7}));
  auto order = ParseOrder("pp,dp,cp,tp");
  ASSERT_TRUE(order.ok());
  s.order = *order;
  EXPECT_EQ(RankOf(s, {1, 0, 0, 0}), 4);  // tp now slowest: stride pp*dp*cp = 4
}


TEST(Strategy, OnlyPerTensorZero3RunsUseTheZero3IntervalClass) {
  // The training-zero3 class is built from SC21 Table 2's DeepSpeed 2021 runs (per-tensor
  // gathers); a per-block FSDP/ZeRO-3 run (torchtitan, LLM Foundry) is priced like the DP traffic
  // of the training class and must not borrow those 17-75% residuals.
  Strategy s;
  EXPECT_STREQ(TrainingIntervalWorkload(s), "training");
  s.zero = 3;
  s.zero3.gather = Zero3Gather::kPerBlock;
  EXPECT_STREQ(TrainingIntervalWorkload(s), "training");
  s.zero3.gather = Zero3Gather::kPerTensor;
  EXPECT_STREQ(TrainingIntervalWorkload(s), "training-zero3");
  s.zero = 2;  // the trait only matters under ZeRO-3
  EXPECT_STREQ(TrainingIntervalWorkload(s), "training");
}

}  // namespace
}  // namespace ndt
