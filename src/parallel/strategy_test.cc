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
  s.order = order->axes;
  EXPECT_EQ(RankOf(s, {1, 0, 0, 0}), 4);  // tp now slowest: stride pp*dp*cp = 4
}

TEST(Strategy, OrderPlacesEpBesideDpAsMegatronCore) {
  // Megatron-core's order string: "ep" must sit next to "dp" (EP splits the DP ranks into
  // dp/ep x ep). Before dp (its default tp-cp-ep-dp-pp): EP varies faster, an expert group is
  // ep consecutive DP coordinates; after dp: every (dp/ep)-th.
  StatusOr<RankOrder> inner = ParseOrder("tp-cp-ep-dp-pp");
  ASSERT_TRUE(inner.ok());
  EXPECT_FALSE(inner->ep_outer);
  EXPECT_EQ(inner->axes, (std::array<Axis, 4>{Axis::kTp, Axis::kCp, Axis::kDp, Axis::kPp}));
  StatusOr<RankOrder> outer = ParseOrder("tp,cp,dp,ep,pp");
  ASSERT_TRUE(outer.ok());
  EXPECT_TRUE(outer->ep_outer);
  EXPECT_EQ(outer->axes, inner->axes);
  EXPECT_FALSE(ParseOrder("tp,cp,dp,pp")->ep_outer);  // no ep: Megatron's default place
  StatusOr<RankOrder> apart = ParseOrder("tp,ep,cp,dp,pp");
  ASSERT_FALSE(apart.ok());
  EXPECT_EQ(apart.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(apart.status().message(),
            "--order 'tp,ep,cp,dp,pp': ep must be next to dp (expert groups split the DP ranks), "
            "e.g. tp,cp,ep,dp,pp or tp,cp,dp,ep,pp");
  EXPECT_EQ(ParseOrder("ep,tp,cp,dp,ep,pp").status().message(), "--order: 'ep' appears twice");

  // tp 2, dp 8, ep 4, pp 1 under tp,cp,dp,pp: rank = tp + 2 * dp. The rank at tp 0, dp 5:
  // ep-dp: DP coordinates 4..7, ranks 8, 10, 12, 14; dp-ep: stride 8 / 4 = 2 from 5 % 2 = 1:
  // DP coordinates 1, 3, 5, 7, ranks 2, 6, 10, 14.
  Strategy s;
  s.tp = 2;
  s.dp = 8;
  s.ep = 4;
  EXPECT_EQ(ExpertGroupRanks(s, {0, 0, 5, 0}), (std::vector<int>{8, 10, 12, 14}));
  s.ep_outer = true;
  EXPECT_EQ(ExpertGroupRanks(s, {0, 0, 5, 0}), (std::vector<int>{2, 6, 10, 14}));
}

TEST(Strategy, WarnsWhenTpOrCpGroupsStraddleNvlinkDomainsButRankZerosDoesNot) {
  // GB200 NVL72: 72 GPUs per NVLink domain, rank r in domain r / 72. tp 16 on 144 GPUs (dp 9):
  // TP groups are ranks 16k .. 16k + 15; k = 4 holds 64 .. 79, in domains 0 and 1 (79 / 72 = 1),
  // while rank 0's (0 .. 15) lies in domain 0: the lowering prices TP on the former.
  const TransformerSpec m = SmallGpt();  // 16 heads, seq 1024
  Strategy s;
  s.tp = 16;
  s.gbs = 9;
  std::vector<std::string> w;
  ASSERT_TRUE(ResolveStrategy(m, 144, 72, &s, &w).ok());
  EXPECT_TRUE(GroupsStraddleDomains(s, Axis::kTp, 72));
  EXPECT_FALSE(GroupsStraddleDomains(s, Axis::kCp, 72));  // cp 1: no group
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0],
            "some TP groups straddle two NVLink domains of 72 GPUs (tp = 16 does not divide 72): "
            "their per-layer all-reduces cross the scale-out network, and the step is priced "
            "so, on the slowest such group; use a tp dividing 72 to keep them on NVLink");
  // The lowering prices TP on it: the group at dp 4 ({0, 0, 4, 0}), split 8 + 8 over domains 0
  // and 1, the only split there is (k = 4 is the only group crossing 72).
  EXPECT_EQ(StraddlingGroups(s, CommGroup::kTp, 72),
            (std::vector<std::array<int, 4>>{{0, 0, 4, 0}}));
  EXPECT_TRUE(StraddlingGroups(s, CommGroup::kCp, 72).empty());
  // The DP group of tp coordinate t is {t, t + 16, ..., t + 128}: rank 0's straddles (0 .. 128),
  // priced so already.
  EXPECT_TRUE(StraddlingGroups(s, CommGroup::kDp, 72).empty());
  // The same tp inside one rack (72 GPUs would not divide; 64 GPUs, dp 4): one domain, no warning.
  Strategy one = s;
  one.dp = 0;
  one.gbs = 4;
  w.clear();
  ASSERT_TRUE(ResolveStrategy(m, 64, 72, &one, &w).ok());
  EXPECT_FALSE(GroupsStraddleDomains(one, Axis::kTp, 72));
  EXPECT_TRUE(w.empty());
  // tp 8 divides 72: groups 8k .. 8k + 7 never cross a multiple of 72 (72 = 9 x 8).
  Strategy t8;
  t8.tp = 8;
  t8.gbs = 18;
  w.clear();
  ASSERT_TRUE(ResolveStrategy(m, 144, 72, &t8, &w).ok());
  EXPECT_FALSE(GroupsStraddleDomains(t8, Axis::kTp, 72));
  EXPECT_TRUE(w.empty());
  // CP under tp,cp,dp,pp: tp 8, cp 4 on 288 GPUs (dp 9); a CP group is {b, b + 8, b + 16, b + 24}
  // in a block of 32. Rank 0's {0, 8, 16, 24} lies in domain 0; the block at dp 2 (ranks 64 ..
  // 95) has {64, 72, 80, 88}: domains 0 and 1. TP groups (8 | 72) all lie in one.
  Strategy c;
  c.tp = 8;
  c.cp = 4;
  c.gbs = 9;
  w.clear();
  ASSERT_TRUE(ResolveStrategy(m, 288, 72, &c, &w).ok());
  EXPECT_FALSE(GroupsStraddleDomains(c, Axis::kTp, 72));
  EXPECT_TRUE(GroupsStraddleDomains(c, Axis::kCp, 72));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("some CP groups straddle two NVLink domains of 72 GPUs (tp x cp = 32 does "
                      "not divide 72): their per-layer ring exchanges"),
            std::string::npos)
      << w[0];
  EXPECT_NE(w[0].find("use tp x cp dividing 72"), std::string::npos) << w[0];
  // Splits of the straddling CP groups {b, b + 8, b + 16, b + 24}, b = t + 32 k (t < 8): 72 lies
  // in block k = 2 (64 .. 95): {64 + t} | {72 + t, 80 + t, 88 + t}, split 1 + 3; 144 in k = 4
  // (128 .. 159): {128 + t, 136 + t} | {144 + t, 152 + t}, 2 + 2; 216 in k = 6: 3 + 1, sorted
  // the same as k = 2's. Two distinct splits: the groups at dp 2 and dp 4.
  EXPECT_EQ(StraddlingGroups(c, CommGroup::kCp, 72),
            (std::vector<std::array<int, 4>>{{0, 0, 2, 0}, {0, 0, 4, 0}}));
  // H100 VMs (8-GPU domains), tp 16: rank 0's own group spans two domains and is priced so; the
  // existing "spans more than one NVLink domain" warning speaks, not this one.
  Strategy h;
  h.tp = 16;
  h.gbs = 2;
  w.clear();
  ASSERT_TRUE(ResolveStrategy(m, 32, 8, &h, &w).ok());
  EXPECT_FALSE(GroupsStraddleDomains(h, Axis::kTp, 8));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("spans more than one NVLink domain"), std::string::npos) << w[0];
}

TEST(Strategy, StraddlingGroupsGiveOneGroupPerSplitAndNoneWhenGroupsTile) {
  const TransformerSpec m = SmallGpt();  // 16 heads
  // tp 16 on 576 GPUs (8 racks of 72): TP groups 16k .. 16k + 15 cross a multiple of 72 when
  // 72j lies inside; 72j mod 16 = 8 (j odd) splits 8 + 8, = 0 (j even: 144, 288, 432) falls on a
  // group edge. One split, first at k = 4 (64 .. 79).
  Strategy s;
  s.tp = 16;
  s.gbs = 36;
  std::vector<std::string> w;
  ASSERT_TRUE(ResolveStrategy(m, 576, 72, &s, &w).ok());
  EXPECT_EQ(StraddlingGroups(s, CommGroup::kTp, 72),
            (std::vector<std::array<int, 4>>{{0, 0, 4, 0}}));
  // Unknown domain, or one domain: nothing to price differently.
  EXPECT_TRUE(StraddlingGroups(s, CommGroup::kTp, 0).empty());
  EXPECT_TRUE(StraddlingGroups(s, CommGroup::kTp, 576).empty());
  // tp 4, 8 (dividing 72) on NVL72 and tp 8 on 8-GPU H100 VMs tile the domains: no group.
  for (auto [tp, domain] : {std::pair{4, 72}, std::pair{8, 72}, std::pair{8, 8}}) {
    Strategy t;
    t.tp = tp;
    t.gbs = 576 / tp;
    ASSERT_TRUE(ResolveStrategy(m, 576, domain, &t, &w).ok());
    EXPECT_TRUE(StraddlingGroups(t, CommGroup::kTp, domain).empty()) << tp << " " << domain;
    EXPECT_FALSE(StraddlingPipelineSend(t, domain).has_value());
  }
  // Expert groups: an 8-expert MoE, tp 2, ep 8 on 144 GPUs (dp 72), "ep-dp": a group is 8
  // consecutive DP coordinates, ranks 16k .. 16k + 15 (block tp x ep = 16). k = 4 holds 64 .. 79,
  // in domains 0 and 1 (8 + 8); rank 0's (0 .. 15) in domain 0; 144 = 9 x 16 is a block edge.
  // One group, at dp coordinate 32 (rank 2 x 32 = 64).
  const TransformerSpec moe = testing::TinyMoe(32000);
  Strategy e;
  e.tp = 2;
  e.ep = 8;
  e.gbs = 72;
  w.clear();
  ASSERT_TRUE(ResolveStrategy(moe, 144, 72, &e, &w).ok());
  ASSERT_EQ(e.dp, 72);
  EXPECT_EQ(StraddlingGroups(e, CommGroup::kEp, 72),
            (std::vector<std::array<int, 4>>{{0, 0, 32, 0}}));
  EXPECT_EQ(CommGroupRanks(e, CommGroup::kEp, {0, 0, 32, 0}).front(), 64);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("some EP groups straddle two NVLink domains of 72 GPUs (tp x ep = 16 "
                      "does not divide 72): their per-layer all-to-alls cross"),
            std::string::npos)
      << w[0];
}

TEST(Strategy, StraddlingPipelineSendFindsTheStageBoundaryThatCrossesARack) {
  // GB300 NVL72, 144 GPUs, tp 4, pp 4 (dp 9): a stage holds 36 consecutive ranks (pp slowest).
  // Rank 0's send goes 0 -> 36, inside domain 0; stage 1 -> 2 goes 36 -> 72, across: the first
  // such sender in rank order is stage 1's rank 36, coordinates {0, 0, 0, 1}.
  const TransformerSpec m = SmallGpt();
  Strategy s;
  s.tp = 4;
  s.pp = 4;
  s.gbs = 36;
  std::vector<std::string> w;
  ASSERT_TRUE(ResolveStrategy(m, 144, 72, &s, &w).ok());
  ASSERT_EQ(s.dp, 9);
  const std::optional<std::array<int, 4>> c = StraddlingPipelineSend(s, 72);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, (std::array<int, 4>{0, 0, 0, 1}));
  // pp 2 on 144: rank 0 sends 0 -> 72, across: priced so already.
  Strategy two;
  two.tp = 4;
  two.pp = 2;
  two.gbs = 18;
  ASSERT_TRUE(ResolveStrategy(m, 144, 72, &two, &w).ok());
  EXPECT_FALSE(StraddlingPipelineSend(two, 72).has_value());
}

TEST(Strategy, ExpertDegreeFollowsMegatronCoresRules) {
  const TransformerSpec moe = testing::TinyMoe(32000);  // 8 experts
  EXPECT_TRUE(CheckExpertDegree(moe, 1, 3).ok());
  EXPECT_TRUE(CheckExpertDegree(moe, 4, 8).ok());
  EXPECT_EQ(CheckExpertDegree(moe, 3, 6).code(), StatusCode::kInfeasible);  // 8 % 3
  EXPECT_EQ(CheckExpertDegree(moe, 4, 6).code(), StatusCode::kInfeasible);  // 6 % 4
  EXPECT_EQ(CheckExpertDegree(moe, 0, 8).code(), StatusCode::kInvalidInput);
  EXPECT_EQ(CheckExpertDegree(testing::SmallGpt(), 2, 8).code(), StatusCode::kInvalidInput);
  EXPECT_TRUE(CheckExpertDegree(testing::SmallGpt(), 1, 8).ok());
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
