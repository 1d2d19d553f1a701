// MoE operators (model/ops.h) and the routing statistics they use (model/moe_load.cc): which
// experts a token reaches, the busiest expert-parallel rank, the grouped expert GEMMs and the
// kernels that sort tokens to experts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "model/ops.h"
#include "model/testing.h"

namespace ndt {
namespace {

using model_testing::Find;
using model_testing::GemmFlop;
using model_testing::Preset;

// Decode of one token on DeepSeek-V3: 8 of 256 experts receive it, so 8 experts' weights are
// read (3 x 7168 x 2048 x 2 bytes each).
TEST(MoeOps, DecodeReadsOnlyTheActiveExperts) {
  const TransformerSpec s = Preset("deepseek-v3");
  OpShape shape;
  const std::vector<Op> ops = LayerTokenOps(s, 10, 1, shape);
  const Op& up = Find(ops, "experts_gate_up");
  const Op& down = Find(ops, "experts_down");
  EXPECT_EQ(up.batch, 8);
  EXPECT_DOUBLE_EQ(up.weight_bytes + down.weight_bytes, 8 * 3 * 7168.0 * 2048 * 2);
  // A large batch touches all 256 experts.
  EXPECT_EQ(Find(LayerTokenOps(s, 10, 8192, shape), "experts_gate_up").batch, 256);
  // Expert parallelism over 8 GPUs: 32 local experts.
  shape.ep = 8;
  EXPECT_EQ(Find(LayerTokenOps(s, 10, 8192, shape), "experts_gate_up").batch, 32);
}

// Routing statistics by hand, Mixtral's 8 experts, top 2:
// - 4 tokens, all 8 experts local: distinct experts hit = 8 x (1 - (1 - 2/8)^4) = 8 x (1 -
//   0.31640625) = 5.46875. Largest load: 8 pairs into 8 bins, Binomial(8, 1/8): F(0) = (7/8)^8 =
//   0.34361, F(1) = 0.73631, F(2) = 0.93266, F(3) = 0.98876, F(4) = 0.99878, F(5) = 0.99992;
//   E[max] = sum (1 - F(x)^8) = 0.99981 + 0.91360 + 0.42751 + 0.08645 + 0.00972 + 0.00064 +
//   ~0.00003 = 2.4378.
// - 1 token: 2 pairs; the independent-bins sum is 1.0003, clamped to 1 (a token enters an
//   expert once); the mean 2/8 = 0.25 is the floor.
// - One local expert: the max is its mean load, 4 x 2 / 8 = 1.
TEST(MoeOps, RoutingStatisticsByHand) {
  EXPECT_DOUBLE_EQ(ExpectedDistinctExperts(4, 8, 2, 8), 5.46875);
  EXPECT_NEAR(ExpectedMaxExpertLoad(4, 8, 2, 8), 2.4378, 5e-4);
  EXPECT_DOUBLE_EQ(ExpectedMaxExpertLoad(1, 8, 2, 8), 1.0);
  EXPECT_DOUBLE_EQ(ExpectedMaxExpertLoad(4, 8, 2, 1), 1.0);
  // Many tokens: the max approaches the mean from above (relative spread ~ 1/sqrt(pairs)).
  const double big = ExpectedMaxExpertLoad(1 << 20, 8, 2, 8);
  EXPECT_GT(big, (1 << 20) * 2 / 8.0);
  EXPECT_LT(big, (1 << 20) * 2 / 8.0 * 1.01);
}

// The busiest EP rank under skewed routing, DeepSeek-V3's measured imbalance (data/models:
// ratio 1.564 at EP 32, 256 experts, top 8): load = 1 + 1.564 x ep / 32, capped at
// ep x min(256 / ep, 8) / 8.
// - EP 8 (32 experts per rank): 1 + 1.564 x 8 / 32 = 1.391 (cap 8).
// - EP 32, where it was measured: 1 + 1.564 = 2.564.
// - EP 256 (one expert per rank): 1 + 1.564 x 8 = 13.512 (cap 256 x 1 / 8 = 32).
// - EP 1: one rank, 1. Mixtral (no measurement): uniform, 1 at any EP.
// - A cap that binds: 8 experts, top 2, ratio 1 measured at EP 2; at EP 8 (one expert per rank)
//   1 + 1 x 8 / 2 = 5 > 8 x min(1, 2) / 2 = 4 (a rank of one expert gets at most every token).
TEST(MoeOps, BusiestRankLoadByHand) {
  const TransformerSpec ds = Preset("deepseek-v3");
  EXPECT_DOUBLE_EQ(ds.moe.imbalance_ratio, 1.564);
  EXPECT_EQ(ds.moe.imbalance_ep, 32);
  EXPECT_DOUBLE_EQ(BusiestRankLoad(ds.moe, 8), 1.391);
  EXPECT_DOUBLE_EQ(BusiestRankLoad(ds.moe, 32), 2.564);
  EXPECT_NEAR(BusiestRankLoad(ds.moe, 256), 13.512, 1e-12);
  EXPECT_DOUBLE_EQ(BusiestRankLoad(ds.moe, 1), 1.0);
  EXPECT_DOUBLE_EQ(BusiestRankLoad(Preset("mixtral-8x7b").moe, 8), 1.0);
  MoeSpec small;
  small.experts = 8;
  small.top_k = 2;
  small.imbalance_ratio = 1.0;
  small.imbalance_ep = 2;
  EXPECT_DOUBLE_EQ(BusiestRankLoad(small, 8), 4.0);
}

// The busiest rank's experts compute `load` x the mean rank's pairs. DeepSeek-V3, 1,024 tokens
// per rank, EP 8 over the ranks (attention-DP): uniform, 1,024 x 8 = 8,192 pairs on the 32 local
// experts; at load 1.391, 11,395.072 pairs, so experts_gate_up's FLOPs are 2 x 11,395.072 x
// (2 x 2048) x 7168 and its rows per expert the expected largest load of 1,024 x 8 x 1.391
// routed tokens (ExpectedMaxExpertLoad, above). EP inside TP 8: 1,024 x 8 / 8 = 1,024 pairs ->
// 1,424.384. Without EP the load is ignored (one rank holds every expert).
TEST(MoeOps, TheBusiestRankComputesItsShareOfPairs) {
  const TransformerSpec s = Preset("deepseek-v3");
  OpShape dp;
  dp.ep = 8;
  OpShape skew = dp;
  skew.moe_rank_load = 1.391;
  const Op u = Find(LayerTokenOps(s, 10, 1024, dp), "experts_gate_up");
  const Op k = Find(LayerTokenOps(s, 10, 1024, skew), "experts_gate_up");
  EXPECT_DOUBLE_EQ(u.flop, 2.0 * 8192 * 4096 * 7168);
  EXPECT_NEAR(k.flop, 2.0 * 11395.072 * 4096 * 7168, 1e-6 * k.flop);
  EXPECT_EQ(k.batch, 32);
  EXPECT_EQ(k.m, static_cast<int64_t>(std::ceil(ExpectedMaxExpertLoad(11395.072, 256, 8, 32))));
  EXPECT_GT(k.m, u.m);
  OpShape in_tp;
  in_tp.tp = in_tp.ep = 8;
  in_tp.ep_within_tp = true;
  in_tp.moe_rank_load = 1.391;
  const Op t = Find(LayerTokenOps(s, 10, 1024, in_tp), "experts_gate_up");
  EXPECT_NEAR(t.flop, 2.0 * 1424.384 * 4096 * 7168, 1e-6 * t.flop);
  OpShape one;
  one.moe_rank_load = 1.391;
  EXPECT_DOUBLE_EQ(Find(LayerTokenOps(s, 10, 1024, one), "experts_gate_up").flop,
                   Find(LayerTokenOps(s, 10, 1024, OpShape{}), "experts_gate_up").flop);
}

// Mixtral 8x7B (8 experts, top 2, expert ffn 14336, hidden 4096), 4096 tokens (every expert
// gets some) at TP 4. Mean rows per expert and the grouped GEMM's rows (the expected largest
// load of the local experts, ExpectedMaxExpertLoad: Binomial(pairs, 1/8) loads, sigma =
// sqrt(8192 x 1/8 x 7/8) = 29.9 for 4096 tokens; the max of 8 sits ~1.42 sigma above the mean,
// of 2 ~0.56 sigma; the exact sums, by the same formula in Python, are 1066.8, 1040.9, 4129.8):
// - EP 1: 8 experts, each 14336/4 = 3584 wide, 4096 x 2 = 8192 pairs -> 1024 rows per expert on
//   average, the most loaded ~1067.
// - EP 4 inside the TP group (inference): 8/4 = 2 local experts, each 14336/(4/4) = 14336 wide,
//   8192/4 = 2048 pairs -> 1024 rows per expert, max of 2 ~1041. Same FLOPs (2 x 14336 = 8 x
//   3584 columns) and the same weight bytes per GPU as EP 1: EP only changes the GEMM shapes.
// - EP 4 over DP (training): the 4 ranks' tokens meet, 32768 pairs over 8 experts, 4096 rows
//   each on the 2 local ones (sigma 59.9, max of 2 ~4130), each 3584 wide: the same FLOPs again
//   but a quarter of the weights.
TEST(MoeOps, ExpertParallelInsideTensorParallelSplitsPairsNotWork) {
  const TransformerSpec s = Preset("mixtral-8x7b");
  OpShape tp4;
  tp4.tp = 4;
  OpShape ep_in = tp4, ep_dp = tp4;
  ep_in.ep = ep_dp.ep = 4;
  ep_in.ep_within_tp = true;
  auto moe = [&](const OpShape& sh) {
    std::vector<Op> ops = LayerTokenOps(s, 0, 4096, sh);
    return std::vector<Op>{Find(ops, "experts_gate_up"), Find(ops, "experts_down")};
  };
  const std::vector<Op> a = moe(tp4), b = moe(ep_in), c = moe(ep_dp);
  EXPECT_EQ(a[0].batch, 8);
  EXPECT_EQ(a[0].m, 1067);
  EXPECT_EQ(a[0].n, 2 * 3584);
  EXPECT_EQ(b[0].batch, 2);
  EXPECT_EQ(b[0].m, 1041);
  EXPECT_EQ(b[0].n, 2 * 14336);
  EXPECT_EQ(c[0].batch, 2);
  EXPECT_EQ(c[0].m, 4130);
  EXPECT_EQ(c[0].n, 2 * 3584);
  EXPECT_DOUBLE_EQ(GemmFlop(a), GemmFlop(b));
  EXPECT_DOUBLE_EQ(GemmFlop(a), GemmFlop(c));
  EXPECT_DOUBLE_EQ(a[0].weight_bytes + a[1].weight_bytes, b[0].weight_bytes + b[1].weight_bytes);
  EXPECT_DOUBLE_EQ(a[0].weight_bytes + a[1].weight_bytes,
                   4 * (c[0].weight_bytes + c[1].weight_bytes));
}

// Which GEMMs run as a grouped kernel (compute/ prices its own rate for them): the experts' two
// GEMMs, over their rows per expert as priced (m: Mixtral at TP 4, 4096 tokens, the expected
// largest load 1067, see above), forward and dgrad; not the weight gradient (grouped along k),
// not the router, not a dense MLP, not DeepSeek's per-head batched q_absorb (batch = heads).
TEST(MoeOps, ExpertGemmsAreGroupedOverTheirRows) {
  const TransformerSpec s = Preset("mixtral-8x7b");
  OpShape tp4;
  tp4.tp = 4;
  const std::vector<Op> ops = LayerTokenOps(s, 0, 4096, tp4);
  EXPECT_DOUBLE_EQ(Find(ops, "experts_gate_up").grouped_rows, 1067);
  EXPECT_DOUBLE_EQ(Find(ops, "experts_down").grouped_rows, 1067);
  EXPECT_EQ(Find(ops, "router").grouped_rows, 0);
  tp4.seq_len = 4096;
  const std::vector<Op> bwd = LayerBackwardOps(s, 0, tp4);
  EXPECT_DOUBLE_EQ(Find(bwd, "experts_gate_up_dgrad").grouped_rows, 1067);
  EXPECT_EQ(Find(bwd, "experts_gate_up_wgrad").grouped_rows, 0);
  const TransformerSpec dense = Preset("llama3-8b");
  for (const Op& o : LayerTokenOps(dense, 0, 4096, tp4)) EXPECT_EQ(o.grouped_rows, 0) << o.name;
  const TransformerSpec ds = Preset("deepseek-v3");
  OpShape one;
  for (const Op& o : LayerTokenOps(ds, 10, 16, one)) {  // absorbed MLA: q_absorb, v_up
    if (!o.name.starts_with("experts_")) {
      EXPECT_EQ(o.grouped_rows, 0) << o.name;
    }
  }
  EXPECT_GT(Find(LayerTokenOps(ds, 10, 16, one), "q_absorb").batch, 1);
}

// Attention-DP serving (OpShape::moe_all_gathered): the fused MoE op is given every EP rank's
// tokens, so it sorts all of their pairs and writes a row for each of them; by hand for
// DeepSeek-V3 (top 8, hidden 7168, bf16), 100 tokens per rank, EP 8 over DP: 800 gathered tokens,
// 6,400 pairs: sort 6,400 x 16 = 102,400 bytes, offsets 6,400 x 4 = 25,600, output rows 800 x
// 7168 x 2 = 11,468,800 (the reduce-scatter's input). The GPU's own tokens without the flag
// (training's all-to-all): 12,800, 3,200, 1,433,600; and with EP inside TP the flag changes
// nothing (the group's one set of tokens). The expert GEMMs' pairs do not depend on it.
TEST(MoeOps, AllGatheredTokensAreSortedAndWrittenByHand) {
  const TransformerSpec s = Preset("deepseek-v3");
  OpShape dp;
  dp.ep = 8;
  OpShape gathered = dp;
  gathered.moe_all_gathered = true;
  const std::vector<Op> own = LayerTokenOps(s, 10, 100, dp);
  const std::vector<Op> all = LayerTokenOps(s, 10, 100, gathered);
  EXPECT_DOUBLE_EQ(Find(all, "moe_sort").bytes, 102400);
  EXPECT_DOUBLE_EQ(Find(all, "moe_expert_offsets").bytes, 25600);
  EXPECT_DOUBLE_EQ(Find(all, "moe_combine_out").bytes, 11468800);
  EXPECT_DOUBLE_EQ(Find(own, "moe_sort").bytes, 12800);
  EXPECT_DOUBLE_EQ(Find(own, "moe_expert_offsets").bytes, 3200);
  EXPECT_DOUBLE_EQ(Find(own, "moe_combine_out").bytes, 1433600);
  EXPECT_DOUBLE_EQ(Find(all, "experts_gate_up").flop, Find(own, "experts_gate_up").flop);
  OpShape in_tp;
  in_tp.tp = in_tp.ep = 8;
  in_tp.ep_within_tp = true;
  OpShape in_tp_flag = in_tp;
  in_tp_flag.moe_all_gathered = true;
  EXPECT_DOUBLE_EQ(Find(LayerTokenOps(s, 10, 100, in_tp_flag), "moe_combine_out").bytes,
                   Find(LayerTokenOps(s, 10, 100, in_tp), "moe_combine_out").bytes);
}

// The expert grouping TensorRT-LLM's runMoe launches before the grouped GEMM (radix sort of the
// pairs, then the per-expert offsets), by hand for Mixtral (top 2), 1000 tokens: 2000 int32
// (expert, row) pairs; the sort reads and writes keys and values, 2000 x 4 x 2 x 2 = 32,000
// bytes; the offsets read the 2000 sorted keys, 8,000 bytes. Neither depends on the activation
// dtype, neither has FLOPs, and training's backward does not repeat them (it reuses the order):
// no "moe_sort_bwd". A dense layer has neither.
TEST(MoeOps, ExpertGroupingKernelsByHand) {
  const TransformerSpec s = Preset("mixtral-8x7b");
  OpShape shape;
  for (Dtype act : {Dtype::kBf16, Dtype::kFp32}) {
    shape.activations = act;
    const std::vector<Op> ops = LayerTokenOps(s, 0, 1000, shape);
    EXPECT_DOUBLE_EQ(Find(ops, "moe_sort").bytes, 32000);
    EXPECT_DOUBLE_EQ(Find(ops, "moe_expert_offsets").bytes, 8000);
    EXPECT_EQ(Find(ops, "moe_sort").flop, 0);
  }
  shape.seq_len = 1000;
  for (const Op& o : LayerBackwardOps(s, 0, shape)) {
    EXPECT_EQ(o.name.rfind("moe_sort", 0), std::string::npos) << o.name;
    EXPECT_EQ(o.name.rfind("moe_expert_offsets", 0), std::string::npos) << o.name;
  }
  int grouping = 0;
  for (const Op& o : LayerTokenOps(Preset("llama2-70b"), 0, 1000, shape)) {
    grouping += o.name == "moe_sort" || o.name == "moe_expert_offsets";
  }
  EXPECT_EQ(grouping, 0);
}

}  // namespace
}  // namespace ndt
