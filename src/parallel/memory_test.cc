#include "parallel/memory.h"

#include <gtest/gtest.h>

#include "parallel/testing.h"
#include "parallel/train_sim.h"

namespace ndt {
namespace {

using testing::FakeCosts;
using testing::Resolve;
using testing::SmallGpt;

TEST(Memory, UnevenStagesHoldEveryParameterOnce) {
  // 10 layers on pp 4 (3 + 3 at the middle, 2 + 2 at the ends): the stages' parameters add up to
  // the model's, and the step simulates.
  InlineModelArgs a;
  a.layers = 10;
  a.hidden = 1024;
  a.heads = 16;
  a.seq = 1024;
  a.vocab = 51200;
  TransformerSpec m = BuildInlineModel(a).value();
  m.tied_embeddings = false;  // a tied head would be a second copy on the last stage
  Strategy s;
  s.gbs = 8;
  s.pp = 4;
  s.uneven_stages = true;
  s = Resolve(m, s, 4);
  double sum = 0;
  for (int st = 0; st < 4; ++st) sum += StageParamsPerGpu(m, s, st);
  const double total = CountParams(m).total;
  EXPECT_NEAR(sum, total, 1e-9 * total);
  FakeCosts costs;
  EXPECT_TRUE(SimulateTrainingStep(m, s, costs, {}).ok());
}

TEST(Memory, OptimizerStatesFollowTheZeroStage) {
  // bf16 (the default): 18 B/param = 2 (weights) + 4 (fp32 main_grad) + 12 (fp32 master, m, v);
  // ZeRO-1 divides the 12 by dp: 6 + 12/d, Megatron's distributed-optimizer table. fp16: fp16
  // gradients (2) and an fp32 gradient copy in the optimizer (16): 4 + 16/d.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s = Resolve(m, s, 8);
  MemoryBreakdown z0 = EstimateMemory(m, s);
  const double p = CountParams(m).total;
  EXPECT_NEAR(z0.params_per_gpu, p, 1e-6 * p);
  EXPECT_NEAR(z0.weights_bytes, 2 * p, 1e-6 * p);
  EXPECT_NEAR(z0.gradients_bytes, 4 * p, 1e-6 * p);
  EXPECT_NEAR(z0.optimizer_bytes, 12 * p, 1e-6 * p);
  s.zero = 1;
  MemoryBreakdown z1 = EstimateMemory(m, s);
  EXPECT_NEAR(z1.optimizer_bytes, 12 * p / 8, 1e-6 * p);
  EXPECT_NEAR(z1.gradients_bytes, 4 * p, 1e-6 * p);
  s.zero = 2;
  EXPECT_NEAR(EstimateMemory(m, s).gradients_bytes, 4 * p / 8, 1e-6 * p);
  s.zero = 3;
  MemoryBreakdown z3 = EstimateMemory(m, s);
  EXPECT_NEAR(z3.weights_bytes, 2 * p / 8, 1e-6 * p);
  s.zero = 1;
  s.precision = Dtype::kFp16;
  MemoryBreakdown h1 = EstimateMemory(m, s);
  EXPECT_NEAR(h1.gradients_bytes, 2 * p, 1e-6 * p);
  EXPECT_NEAR(h1.optimizer_bytes, 16 * p / 8, 1e-6 * p);
}

TEST(Memory, ZeroShardsOverContextParallelRanksToo) {
  // 8 GPUs as cp 2 x dp 4: all 8 hold the same weights, so ZeRO-1 divides the 12 B/param by 8
  // (Megatron-core shards the distributed optimizer over DP x CP), not by dp = 4.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.cp = 2;
  s.zero = 1;
  s = Resolve(m, s, 8);
  ASSERT_EQ(s.dp, 4);
  const double p = CountParams(m).total;
  EXPECT_NEAR(EstimateMemory(m, s).optimizer_bytes, 12 * p / 8, 1e-6 * p);
}

TEST(Memory, ZeroShardsExpertsOverTheExpertDataParallelGroup) {
  // Mixtral-style MoE (8 experts) on 16 GPUs as dp 16 with ep 8: each GPU holds 1 expert of 8 per
  // layer, and only the 16 / 8 = 2 GPUs of its expert-data-parallel group hold a copy of it, so
  // ZeRO-1 divides the experts' 12 B/param by 2 and the rest's by 16. (Dividing the experts' by
  // 16 too, as before, undercounted their optimizer states eightfold.)
  TransformerSpec m = testing::TinyMoe(32000);
  ASSERT_TRUE(m.IsMoeLayer(0));
  Strategy s;
  s.gbs = 16;
  s.ep = 8;
  s.zero = 1;
  s = Resolve(m, s, 16);
  ASSERT_EQ(s.dp, 16);
  const ParamCounts pc = CountParams(m);
  const double expert = 4 * pc.moe_mlp_per_layer / 8;  // 4 layers, split by ep 8
  EXPECT_NEAR(StageExpertParamsPerGpu(m, s, 0), expert, 1e-9 * expert);
  const double params = StageParamsPerGpu(m, s, 0);
  const double dense = params - expert;
  MemoryBreakdown z1 = EstimateMemory(m, s);
  EXPECT_NEAR(z1.optimizer_bytes, 12 * (dense / 16 + expert / 2), 1e-6 * params);
  EXPECT_NEAR(z1.expert_weights_bytes, 2 * expert, 1e-6 * params);  // unsharded below ZeRO-3
  s.zero = 3;
  MemoryBreakdown z3 = EstimateMemory(m, s);
  EXPECT_NEAR(z3.weights_bytes, 2 * (dense / 16 + expert / 2), 1e-6 * params);
  EXPECT_NEAR(z3.expert_weights_bytes, 2 * expert / 2, 1e-6 * params);
  EXPECT_NEAR(z3.gradients_bytes, 4 * (dense / 16 + expert / 2), 1e-6 * params);
  // ep 1: every GPU holds every expert, the 16 shards apply to all of it.
  s.ep = 1;
  s.zero = 1;
  const double all = StageParamsPerGpu(m, s, 0);
  EXPECT_NEAR(EstimateMemory(m, s).optimizer_bytes, 12 * all / 16, 1e-6 * all);
}

TEST(Memory, FullRecomputeKeepsOnlyLayerInputs) {
  // GPT, no TP: full recompute stores 2sbh per layer (Korthikanti Table 2) for L layers, plus one
  // layer's full set sbh(34 + 5as/h) as the recompute working set, plus fp32 logits 8 s b V.
  // With flash attention the working set keeps 4a/h (log-sum-exp) instead of 5as/h.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 1;
  s.recompute = Recompute::kFull;
  s.flash_attention = false;
  s = Resolve(m, s, 1);
  MemoryBreakdown b = EstimateMemory(m, s);
  const double sbh = 1024.0 * 1 * 1024;
  const double full_layer = sbh * (34 + 5.0 * 16 * 1024 / 1024);
  const double logits = 8.0 * 1024 * 51200;
  EXPECT_NEAR(b.activations_bytes, 8 * 2 * sbh + full_layer + logits, 1e-6 * b.activations_bytes);
  s.flash_attention = true;
  b = EstimateMemory(m, s);
  const double flash_layer = sbh * (34 + 4.0 * 16 / 1024);
  EXPECT_NEAR(b.activations_bytes, 8 * 2 * sbh + flash_layer + logits, 1e-6 * b.activations_bytes);
}

// Llama 3 8B's shape (h 4096, 32 heads, 8 K/V heads of 128, ffn 14336, vocab 128256, seq 8192)
// as an inline model of `layers` layers.
TransformerSpec Llama3_8bShape(int layers) {
  InlineModelArgs a;
  a.arch = "llama";
  a.layers = layers;
  a.hidden = 4096;
  a.heads = 32;
  a.kv_heads = 8;
  a.ffn = 14336;
  a.vocab = 128256;
  a.seq = 8192;
  return BuildInlineModel(a).value();
}

TEST(Memory, AlternateMatmulCheckpointingKeepsTheSavedOpsOutputs) {
  // torchtitan's op-level selective checkpointing (SelectiveRecompute::kAlternateMatmuls) keeps
  // the block input and the outputs of wq, wv, w1, SDPA (+ fp32 log-sum-exp) and w2. Llama 3 8B
  // shape (h 4096, 32 heads, 8 K/V heads of 128, ffn 14336), no TP, per token (s = b = 1):
  //   2*4096 + 2*(4096 + 1024 + 14336 + 4096) + 4*32 + 2*4096 = 63,616 B
  // against ActivationBytesPerLayer's no-recompute count with flash attention (no dropout):
  //   replicated 8h = 32,768 + split 2*(q + k + v + o) + 2*3*ffn = 20,480 + 86,016 + lse 128
  //   = 139,392 B.
  const TransformerSpec m = Llama3_8bShape(2);
  EXPECT_DOUBLE_EQ(AlternateMatmulsActivationBytes(m, 0, 1, 1, 1, false, true), 63616.0);
  EXPECT_DOUBLE_EQ(ActivationBytesPerLayer(m, 0, 1, 1, 1, false, Recompute::kNone, true), 139392.0);
  // TP 2 with SP: the input and what is split halve, w2's partial-sum output stays full and the
  // two reduce-scatter outputs add 2 * 2h / 2:
  //   8192/2 + 47104/2 + 128/2 + 8192 + 2*4096 = 4096 + 23552 + 64 + 8192 + 8192 = 44,096 B.
  EXPECT_DOUBLE_EQ(AlternateMatmulsActivationBytes(m, 0, 1, 1, 2, true, true), 44096.0);
  // The strategy picks it only for selective recompute with the alternate-matmul policy.
  Strategy s;
  s.selective_recompute = SelectiveRecompute::kAlternateMatmuls;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, 0, 2, 8192, Recompute::kSelective),
                   2 * 8192 * 63616.0);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, 0, 2, 8192, Recompute::kNone), 2 * 8192 * 139392.0);
  s.selective_recompute = SelectiveRecompute::kAttentionCore;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, 0, 2, 8192, Recompute::kSelective),
                   ActivationBytesPerLayer(m, 0, 2, 8192, 1, false, Recompute::kSelective, true));
}

TEST(Memory, TeFp8SavesTheGemmInputsItCastsInOneByte) {
  // Transformer Engine's FP8 recipe (TE 1.11): QKV's and FC1's LayerNormLinear save ln_out in FP8,
  // FC2's te.Linear its FP8 input, the output projection's te.Linear an FP8 copy of the attention
  // output that cuDNN's fused attention also keeps in 16-bit. Llama 3 8B shape, no TP, per token
  // (s = b = 1), no recompute, from the 16-bit 139,392 B:
  //   - 4096 (QKV ln_out) - 4096 (FC1 ln_out) - 14336 (FC2 input) + 4096 (proj FP8 input)
  //   = 139,392 - 18,432 = 120,960 B.
  const TransformerSpec m = Llama3_8bShape(2);
  Strategy s;
  s.precision = Dtype::kFp8;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, 0, 1, 1, Recompute::kNone), 120960.0);
  // Selective recompute re-runs the attention core, which then keeps nothing: the projection's
  // input is its FP8 copy only, 1 B instead of 2. 16-bit selective: 139,392 - 128 (lse) =
  // 139,264; FP8: 139,264 - 4096 - 4096 - 14336 - 4096 = 112,640 B.
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, 0, 1, 1, Recompute::kSelective), 112640.0);
  // Full recompute keeps the 16-bit layer input only: 2h = 8,192 B either way.
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, 0, 1, 1, Recompute::kFull), 8192.0);
  // TP 2 with SP: the norm outputs are sequence-split, the rest TP-split:
  //   -4096/2 + 4096/2 - 4096/2 - 14336/2 = -9,216 B against the 16-bit count.
  s.tp = 2;
  s.sp = true;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, s, 0, 1, 1, Recompute::kNone) -
                       ActivationBytesPerLayer(m, 0, 1, 1, 2, true, Recompute::kNone, true),
                   -9216.0);
  // Not TE: bf16, or fp8 through an eager stack (torchao float8): the 16-bit count.
  s.eager_elementwise = true;
  EXPECT_DOUBLE_EQ(TeFp8ActivationDelta(m, s, 0, 1, 1, Recompute::kNone), 0.0);
  s.eager_elementwise = false;
  s.precision = Dtype::kBf16;
  EXPECT_DOUBLE_EQ(TeFp8ActivationDelta(m, s, 0, 1, 1, Recompute::kNone), 0.0);
}

TEST(Memory, TeFp8CachesFp8WeightsAndTheirTransposes) {
  // TE keeps a uint8 copy and a uint8 transpose of each linear weight across micro-batches: 2 B
  // per parameter of the layers' linear weights. Llama 3 8B shape, per layer:
  //   attention 4096 * (4096 + 1024 + 1024 + 4096) = 41,943,040
  //   + MLP 3 * 4096 * 14336 = 176,160,768  -> 218,103,808 parameters, 436,207,616 B;
  // not the norms, the embedding or the output layer. Two layers on one GPU: 872,415,232 B.
  const TransformerSpec m = Llama3_8bShape(2);
  Strategy s;
  s.gbs = 1;
  s.precision = Dtype::kFp8;
  s = Resolve(m, s, 1);
  MemoryBreakdown fp8 = EstimateMemory(m, s);
  EXPECT_DOUBLE_EQ(fp8.fp8_weight_cache_bytes, 872415232.0);
  EXPECT_DOUBLE_EQ(fp8.weights_bytes, 2 * fp8.params_per_gpu + 872415232.0);
  // pp 2: each stage holds one layer (and the embedding or the output layer, not cached).
  Strategy p = s;
  p.gbs = 2;
  p.pp = 2;
  p = Resolve(m, p, 2);
  EXPECT_DOUBLE_EQ(StageMemoryOf(m, p, 0).fp8_weight_cache_bytes, 436207616.0);
  EXPECT_DOUBLE_EQ(StageMemoryOf(m, p, 1).fp8_weight_cache_bytes, 436207616.0);
  // bf16: none.
  s.precision = Dtype::kBf16;
  EXPECT_DOUBLE_EQ(EstimateMemory(m, s).fp8_weight_cache_bytes, 0.0);
}

TEST(Memory, GradientsFollowTheStacksGradDtype) {
  // A stack whose grad_dtype is bf16 (Strategy::grad_bytes_per_param 2) keeps 2 B per parameter
  // of gradients for bf16 and fp8 training instead of the fp32 main_grad's 4; fp16 keeps its fp16
  // gradients (2) whatever the trait says.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s = Resolve(m, s, 8);
  const double p = CountParams(m).total;
  EXPECT_DOUBLE_EQ(GradBytesPerParam(s), 4.0);
  s.grad_bytes_per_param = 2;
  EXPECT_DOUBLE_EQ(GradBytesPerParam(s), 2.0);
  EXPECT_NEAR(EstimateMemory(m, s).gradients_bytes, 2 * p, 1e-6 * p);
  s.precision = Dtype::kFp8;
  EXPECT_NEAR(EstimateMemory(m, s).gradients_bytes, 2 * p, 1e-6 * p);
  s.precision = Dtype::kFp16;
  s.grad_bytes_per_param = 4;
  EXPECT_DOUBLE_EQ(GradBytesPerParam(s), 2.0);
}

TEST(Memory, AnOutOfPlaceFp32LossCopyCostsOneMoreFp32Logits) {
  // torchtitan's loss (Strategy::loss_fp32_copy) holds three fp32 logits tensors at its peak
  // against two otherwise, on the last stage only. Llama 3 8B at torchtitan's 2024 config
  // (seq 8192, micro-batch 1, vocab 128256, no TP): one fp32 copy is
  //   4 * 8192 * 128256 = 4,202,692,608 B (3.91 GiB; the two already counted are 7.83 GiB).
  const TransformerSpec m = Llama3_8bShape(4);
  auto activations = [&](int tp, int pp, bool copy, int stage) {
    Strategy s;
    s.gbs = 1;
    s.mbs = 1;
    s.tp = tp;
    s.pp = pp;
    s.loss_fp32_copy = copy;
    s = Resolve(m, s, tp * pp);
    EXPECT_EQ(s.loss_fp32_copy, copy);
    return StageMemoryOf(m, s, stage).activations_bytes;
  };
  EXPECT_DOUBLE_EQ(activations(1, 1, true, 0) - activations(1, 1, false, 0), 4202692608.0);
  // TP 2 splits the vocabulary: half of it. The first of two stages holds no logits.
  EXPECT_DOUBLE_EQ(activations(2, 1, true, 0) - activations(2, 1, false, 0), 4202692608.0 / 2);
  EXPECT_DOUBLE_EQ(activations(1, 2, true, 1) - activations(1, 2, false, 1), 4202692608.0);
  EXPECT_DOUBLE_EQ(activations(1, 2, true, 0), activations(1, 2, false, 0));
}

TEST(Memory, TpOverlapHoldsTenUserbuffersOfTheGatheredActivation) {
  // Transformer Engine registers one userbuffer of [seq * mbs / cp, hidden] per overlapped GEMM,
  // ten in all (four all-gathers, two pipelined and four bulk overlaps). Llama 3 8B (seq 8192,
  // hidden 4096), micro-batch 2, TP 4, bf16: 8192 * 2 * 4096 elements * 2 B * 10
  //   = 1,342,177,280 B (1.25 GiB), whatever the TP degree; fp8 keeps the four all-gather
  // buffers in 1 B: 8192 * 2 * 4096 * (4 + 12) = 1,073,741,824 B; CP 2 halves the rows.
  const TransformerSpec m = Llama3_8bShape(4);
  auto comm = [&](bool overlap, Dtype precision, int cp) {
    Strategy s;
    s.gbs = 8;
    s.mbs = 2;
    s.tp = 4;
    s.cp = cp;
    s.sp = true;
    s.tp_overlap = overlap;
    s.precision = precision;
    s = Resolve(m, s, 4 * cp);
    EXPECT_EQ(s.tp_overlap, overlap);
    // Allocated outside PyTorch's caching allocator: in the reserve, not the breakdown.
    EXPECT_EQ(StageMemoryOf(m, s, 0).comm_buffers_bytes, 0.0);
    return UserbufferBytes(m, s);
  };
  EXPECT_DOUBLE_EQ(comm(false, Dtype::kBf16, 1), 0.0);
  EXPECT_DOUBLE_EQ(comm(true, Dtype::kBf16, 1), 1342177280.0);
  EXPECT_DOUBLE_EQ(comm(true, Dtype::kFp8, 1), 1073741824.0);
  EXPECT_DOUBLE_EQ(comm(true, Dtype::kBf16, 2), 1342177280.0 / 2);
}

TEST(Memory, InterleavedInFlightFollowsTheSchedule) {
  // GPT 8 layers, no TP, pp 2, 4 micro-batches. 1F1B: stage 0 holds pp = 2 micro-batches of its
  // 4 layers. Interleaved vpp 2 (chunks of 2 layers): warm-up (pp - 1) * 2 + (vpp - 1) * pp = 4
  // chunk passes, then one more forward before the first backward: 5 chunk passes = 2.5
  // stage micro-batches (Korthikanti: 1 + (pp - 1) / (pp * vpp) = 1.25 times 1F1B's 2).
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 4;
  s.pp = 2;
  s = Resolve(m, s, 2);
  const double per_layer = ActivationBytesPerLayer(m, 0, 1, 1024, 1, false, Recompute::kNone, true);
  EXPECT_NEAR(StageMemoryOf(m, s, 0).inflight_microbatches, 2.0, 1e-9);
  EXPECT_NEAR(StageMemoryOf(m, s, 0).activations_bytes, 2 * 4 * per_layer, 1e-6 * per_layer);
  s.vpp = 2;
  s = Resolve(m, s, 2);
  const MemoryBreakdown bi = StageMemoryOf(m, s, 0);
  EXPECT_NEAR(bi.inflight_microbatches, 2.5, 1e-9);
  EXPECT_NEAR(bi.activations_bytes, 5 * 2 * per_layer, 1e-6 * per_layer);
}

TEST(Memory, EmptyFirstChunkAddsNothingForItsExtraWarmup) {
  // Llama 3's layout: 6 layers on pp 2 x vpp 4 = 8 virtual stages with uneven stages: one layer
  // each, v = 0 (embedding only) and v = 7 (LM head only) hold none. Stage 0 has chunks v = 0, 2,
  // 4, 6 = 0, 1, 1, 1 layers. With 4 micro-batches its warm-up is (pp - 1) * 2 + (vpp - 1) * pp
  // = 8 chunk passes: chunk 0 mb 0-1, chunk 1 mb 0-1, chunk 2 mb 0-1, chunk 3 mb 0-1, then the
  // 9th forward is chunk 0 mb 2 (empty) before the first backward: 6 layer passes held, where
  // equal chunks of 3/4 layer would count 9 x 0.75 = 6.75 (and 1F1B holds 2 x 3 = 6).
  InlineModelArgs a;
  a.layers = 6;
  a.hidden = 1024;
  a.heads = 16;
  a.seq = 1024;
  a.vocab = 51200;
  TransformerSpec m = BuildInlineModel(a).value();
  Strategy s;
  s.gbs = 4;
  s.pp = 2;
  s.vpp = 4;
  s.uneven_stages = true;
  s = Resolve(m, s, 2);
  EXPECT_EQ(ChunkLayers(6, 2, 4, 0).count, 0);
  EXPECT_EQ(ChunkLayers(6, 2, 4, 7).count, 0);
  const double per_layer = ActivationBytesPerLayer(m, 0, 1, 1024, 1, false, Recompute::kNone, true);
  EXPECT_NEAR(StageMemoryOf(m, s, 0).activations_bytes, 6 * per_layer, 1e-6 * per_layer);
  FakeCosts costs;
  EXPECT_TRUE(SimulateTrainingStep(m, s, costs, {}).ok());
  TrainSimOptions cf;
  cf.closed_form = true;
  EXPECT_TRUE(SimulateTrainingStep(m, s, costs, cf).ok());
  // Without uneven stages, or with an empty middle stage, it is refused.
  Strategy bad = s;
  bad.uneven_stages = false;
  std::vector<std::string> w;
  EXPECT_EQ(ResolveStrategy(m, 2, 8, &bad, &w).code(), StatusCode::kInfeasible);
  bad = s;
  bad.vpp = 8;  // 16 virtual stages for 6 layers
  EXPECT_EQ(ResolveStrategy(m, 2, 8, &bad, &w).code(), StatusCode::kInfeasible);
}

TEST(Memory, DoesNotFitNamesTheLargestPart) {
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 1;
  s = Resolve(m, s, 1);
  MemoryBreakdown b = EstimateMemory(m, s);
  ReserveBreakdown r;
  r.cuda_context_bytes = 0.25e9;
  Status st = CheckFits(b, r, 1e9, s);
  EXPECT_EQ(st.code(), StatusCode::kDoesNotFit);
  EXPECT_NE(st.message().find("does not fit"), std::string::npos);
  // 1e9 - 0.25e9 = 0.75e9 B = 0.7 GiB usable, 1e9 B = 0.9 GiB less a reserve of 0.2 GiB.
  EXPECT_NE(st.message().find("> 0.7 GiB usable (0.9 GiB less a reserve of 0.2 GiB"),
            std::string::npos)
      << st.message();
  // The breakdown fits exactly in the capacity less the reserve, and not a byte less.
  EXPECT_TRUE(CheckFits(b, r, b.total_bytes() + 0.25e9, s).ok());
  EXPECT_FALSE(CheckFits(b, r, b.total_bytes() + 0.25e9 - 1, s).ok());
}

// Weights and optimizer state dominate (a tiny batch) with dp 8 and ZeRO 1: the error suggests
// --zero 2, plainly where the stack runs it (or says nothing of stages), and "with a --stack that
// runs it" where the stack's runnable stages are 0 and 1 (megatron-core-2024).
TEST(Memory, DoesNotFitSuggestsZeroTheStackRuns) {
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.zero = 1;
  s = Resolve(m, s, 8);
  ASSERT_EQ(s.dp, 8);
  const MemoryBreakdown b = EstimateMemory(m, s);
  ASSERT_GE(b.weights_bytes + b.gradients_bytes + b.optimizer_bytes, b.activations_bytes);
  const double cap = b.total_bytes() / 2;  // far too small
  const ReserveBreakdown r;                // none
  const std::vector<int> core = {0, 1}, fsdp = {0, 2, 3};
  EXPECT_NE(CheckFits(b, r, cap, s).message().find("--zero 2"), std::string::npos);
  EXPECT_EQ(CheckFits(b, r, cap, s).message().find("with a --stack"), std::string::npos);
  EXPECT_EQ(CheckFits(b, r, cap, s, fsdp).message().find("with a --stack"), std::string::npos);
  EXPECT_NE(CheckFits(b, r, cap, s, core).message().find("--zero 2 with a --stack that runs it"),
            std::string::npos);
}

}  // namespace
}  // namespace ndt
