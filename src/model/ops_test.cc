#include "model/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "model/testing.h"

namespace ndt {
namespace {

using model_testing::Find;
using model_testing::GemmFlop;
using model_testing::Preset;

// GPT layer: QKV 3h^2 + out h^2 + MLP 8h^2 = 12h^2 MACs per token -> 24 s h^2 FLOPs for b = 1;
// non-causal attention 2 (QK^T) + 2 (AV) MACs... = 4 s^2 h FLOPs.
TEST(LayerOps, GptForwardFlopsMatchHandDerivation) {
  const TransformerSpec s = Preset("megatron-18b");
  OpShape shape;
  shape.seq_len = 2048;
  shape.causal = false;
  const std::vector<Op> ops = LayerForwardOps(s, 0, shape);
  const double h = 6144, sq = 2048;
  EXPECT_DOUBLE_EQ(GemmFlop(ops), 24 * sq * h * h);
  EXPECT_DOUBLE_EQ(Find(ops, "attn_core").flop, 4 * sq * sq * h);
  // Causal: s(s+1)/2 query-key pairs instead of s^2.
  shape.causal = true;
  EXPECT_DOUBLE_EQ(Find(LayerForwardOps(s, 0, shape), "attn_core").flop, 4 * h * sq * (sq + 1) / 2);
}

// Megatron-LM 2021's unfused core on the 18B layer (a = 48 heads of d = 128, t = 8, b = 1):
// QK^T and PV each 2 (a/t) s^2 d FLOPs over the whole s x s rectangle even when causal (the
// 4 s^2 h / t above), scores through HBM: softmax 2 + 2 B/elem, dropout 2 + 2 + 1 (mask);
// backward softmax 6 and dropout 5 B/elem. GPT has learned positions: no per-layer RoPE.
TEST(LayerOps, UnfusedAttentionDoesTheFullScoreMatrix) {
  const TransformerSpec s = Preset("megatron-18b");
  OpShape shape;
  shape.seq_len = 2048;
  shape.tp = 8;
  shape.fused_attention = false;
  const std::vector<Op> fwd = LayerForwardOps(s, 0, shape);
  const double sq = 2048, d = 128, heads = 48.0 / 8, elems = heads * sq * sq;
  const Op& qk = Find(fwd, "attn_scores");
  EXPECT_EQ(qk.batch, 6);
  EXPECT_DOUBLE_EQ(qk.flop, 2 * elems * d);
  EXPECT_DOUBLE_EQ(Find(fwd, "attn_context").flop, 2 * elems * d);
  EXPECT_DOUBLE_EQ(Find(fwd, "attn_softmax").bytes, 4 * elems);
  EXPECT_DOUBLE_EQ(Find(fwd, "attn_dropout").bytes, 5 * elems);
  const std::vector<Op> bwd = LayerBackwardOps(s, 0, shape);
  EXPECT_DOUBLE_EQ(Find(bwd, "attn_softmax_bwd").bytes, 6 * elems);
  EXPECT_DOUBLE_EQ(Find(bwd, "attn_dropout_bwd").bytes, 5 * elems);
  EXPECT_TRUE(IsAttentionCore(Find(bwd, "attn_scores_dgrad")));
  for (const Op& o : fwd) {
    EXPECT_NE(o.kind, OpKind::kAttention);
    EXPECT_NE(o.name, "rope");
  }
}

// Without dropout the unfused core has no dropout pass: QK^T, softmax, PV only.
TEST(LayerOps, UnfusedAttentionWithoutDropoutSkipsIt) {
  TransformerSpec s = Preset("megatron-18b");
  s.dropout = 0;
  OpShape shape;
  shape.seq_len = 2048;
  shape.tp = 8;
  shape.fused_attention = false;
  for (const Op& o : LayerForwardOps(s, 0, shape)) EXPECT_NE(o.name, "attn_dropout");
  EXPECT_EQ(Find(LayerForwardOps(s, 0, shape), "attn_context").weight_bytes, 0);
  EXPECT_EQ(Find(LayerForwardOps(s, 0, shape), "attn_scores").weight_bytes, 0);
}

TEST(LayerOps, TensorParallelDividesGemmFlops) {
  const TransformerSpec s = Preset("llama2-70b");
  OpShape one, eight;
  eight.tp = 8;
  EXPECT_DOUBLE_EQ(GemmFlop(LayerForwardOps(s, 0, one)),
                   8 * GemmFlop(LayerForwardOps(s, 0, eight)));
  EXPECT_DOUBLE_EQ(Find(LayerForwardOps(s, 0, one), "attn_core").flop,
                   8 * Find(LayerForwardOps(s, 0, eight), "attn_core").flop);
}

TEST(LayerOps, BackwardGemmsAreTwiceForward) {
  const TransformerSpec s = Preset("mixtral-8x7b");
  OpShape shape;
  shape.seq_len = 4096;
  shape.tp = 2;
  const std::vector<Op> fwd = LayerForwardOps(s, 0, shape);
  const std::vector<Op> bwd = LayerBackwardOps(s, 0, shape);
  EXPECT_NEAR(GemmFlop(bwd), 2 * GemmFlop(fwd), 1e-6 * GemmFlop(fwd));
  // dW of out_proj: [k x n] = X^T [k x tokens] dY [tokens x n].
  const Op& f = Find(fwd, "out_proj");
  const Op& w = Find(bwd, "out_proj_wgrad");
  EXPECT_EQ(w.m, f.k);
  EXPECT_EQ(w.n, f.n);
  EXPECT_EQ(w.k, f.m);
  // Each backward GEMM moves the forward's three tensors (X, dY, W / dW, dX) once.
  EXPECT_DOUBLE_EQ(w.bytes, f.bytes);
  EXPECT_DOUBLE_EQ(Find(bwd, "out_proj_dgrad").bytes, f.bytes);
  EXPECT_EQ(bwd.front().name, "residual_mlp_bwd");  // reverse order
}

// The per-layer ops and the LM head add up to the model-level forward FLOPs per token
// (non-causal attention over s keys) times the tokens.
TEST(LayerOps, SumToModelForwardFlops) {
  for (const char* name : {"llama2-70b", "gpt3-175b", "mixtral-8x7b", "deepseek-v3"}) {
    const TransformerSpec s = Preset(name);
    OpShape shape;
    shape.seq_len = 1024;
    shape.causal = false;
    double flop = 0;
    for (int64_t l = 0; l < s.layers; ++l)
      flop += GemmFlop(LayerForwardOps(s, l, shape)) +
              Find(LayerForwardOps(s, l, shape), "attn_core").flop;
    flop += GemmFlop(LmHeadForwardOps(s, 1024, shape, true));
    // MoE routing is uniform with capacity 1: exactly top_k experts' work per token.
    EXPECT_NEAR(flop / (1024 * ForwardFlopsPerToken(s, 1024)), 1.0, 1e-9) << name;
  }
}

// Llama-2-70B decode at TP 8: one KV head per GPU; 1000 cached tokens of K and V (128 each)
// at 2 bytes = 512,000 bytes per sequence, plus Q and O of 8 heads x 256 x 2 bytes.
TEST(AttentionOps, DecodeReadsTheKvCache) {
  const TransformerSpec s = Preset("llama2-70b");
  OpShape shape;
  shape.tp = 8;
  const Op a = AttentionCoreOp(s, 1, 1, 1000, true, shape);
  EXPECT_DOUBLE_EQ(a.bytes, 1000 * 256 * 2.0 + 8 * 256 * 2.0);
  EXPECT_DOUBLE_EQ(a.flop, 2.0 * 8 * 1000 * 256);
  shape.kv = Dtype::kFp8;
  EXPECT_DOUBLE_EQ(AttentionCoreOp(s, 1, 1, 1000, true, shape).bytes,
                   1000 * 256 * 1.0 + 8 * 256 * 2.0);
}

TEST(AttentionOps, MlaDecodeReadsTheLatentOnce) {
  const TransformerSpec s = Preset("deepseek-v3");
  OpShape shape;
  const Op a = AttentionCoreOp(s, 1, 1, 1000, true, shape);
  // Cache per token and layer: 512 + 64 = 576 values, the same bytes as KvCacheBytesPerToken.
  const double q_o = 128.0 * (576 + 512) * 2;
  EXPECT_DOUBLE_EQ(a.bytes - q_o, 1000 * KvCacheBytesPerToken(s, Dtype::kBf16) / 61);
}

// An NVFP4 DeepSeek checkpoint that leaves self-attention unquantized, one token, TP1: q_down
// (7168 -> 1536) reads 7168 x 1536 bf16 weights, 2 bytes each = 22,020,096 B, and multiplies in
// bf16 (fp4: 0.5625 B per weight, NVFP4 with its scales); out_proj likewise (128 x 128 -> 7168:
// 16384 x 7168 x 2 B), with no NVFP4 quantization of the attention output before it; the
// experts stay fp4.
TEST(LayerOps, UnquantizedAttentionRunsSixteenBit) {
  const TransformerSpec s = Preset("deepseek-v3");
  OpShape shape;
  shape.math = shape.weights = Dtype::kFp4;
  shape.attention_unquantized = true;
  const std::vector<Op> ops = LayerTokenOps(s, 10, 1, shape);
  EXPECT_EQ(Find(ops, "q_down").math, Dtype::kBf16);
  EXPECT_DOUBLE_EQ(Find(ops, "q_down").weight_bytes, 7168.0 * 1536 * 2);
  EXPECT_EQ(Find(ops, "out_proj").math, Dtype::kBf16);
  EXPECT_DOUBLE_EQ(Find(ops, "out_proj").weight_bytes, 16384.0 * 7168 * 2);
  for (const Op& op : ops) EXPECT_NE(op.name, "attn_out_quant");
  EXPECT_EQ(Find(ops, "experts_gate_up").math, Dtype::kFp4);
  shape.attention_unquantized = false;
  EXPECT_EQ(Find(LayerTokenOps(s, 10, 1, shape), "q_down").math, Dtype::kFp4);
}

TEST(LayerOps, SequenceParallelShrinksNormsNotGemms) {
  const TransformerSpec s = Preset("gpt3-175b");
  OpShape tp, sp;
  tp.tp = sp.tp = 8;
  sp.sequence_parallel = true;
  const auto a = LayerForwardOps(s, 0, tp), b = LayerForwardOps(s, 0, sp);
  EXPECT_DOUBLE_EQ(GemmFlop(a), GemmFlop(b));
  EXPECT_NEAR(Find(a, "norm_attn").bytes - Find(a, "norm_attn").weight_bytes,
              8 * (Find(b, "norm_attn").bytes - Find(b, "norm_attn").weight_bytes), 1);
}

// Bytes (less weights) and kernel count of the ops whose name starts with `prefix`.
std::pair<double, int> Sum(const std::vector<Op>& ops, const std::string& prefix) {
  double bytes = 0;
  int n = 0;
  for (const Op& o : ops) {
    if (!o.name.starts_with(prefix)) continue;
    bytes += o.bytes - o.weight_bytes;
    ++n;
  }
  return {bytes, n};
}

// torchtitan's eager kernels on Llama 2 7B (h 4096, 32 heads of 128, MHA, ffn 11008, RMSNorm,
// SwiGLU), 1,000 tokens, bf16 (a = 2 B), by hand from the model code and PyTorch's autograd
// formulas (ops.cc EagerRmsNorm, the RoPE and SwiGLU comments):
//   RMSNorm, per element of [1000 x 4096]: forward 4a + 28 = 36 B in six full-size kernels plus
//     two per-row ones (+ eps, rsqrt: 8 B per row each); backward 8a + 76 = 92 B per element and
//     8 + 16 B per row. Fused: 2a = 4 B forward, 8 B backward, one kernel.
//   RoPE on Q and on K, per element of each [1000 x 32 x 128]: 2a + 16 = 20 B both ways, three
//     kernels per tensor. Fused: 2a = 4 B over both tensors together, one kernel.
//   SwiGLU, per element of [1000 x 11008]: forward 5a = 10 B in two kernels, backward 9a = 18 B.
//     Fused: 3a = 6 B forward, 12 B backward.
// The GEMMs and the attention core are the same kernels either way.
TEST(LayerOps, EagerElementwiseCountsTorchtitansKernels) {
  const TransformerSpec s = Preset("llama2-7b");
  OpShape fused, eager;
  fused.seq_len = eager.seq_len = 1000;
  eager.eager_elementwise = true;
  const std::vector<Op> f = LayerForwardOps(s, 0, fused), e = LayerForwardOps(s, 0, eager);
  const std::vector<Op> fb = BackwardOps(f), eb = BackwardOps(e);
  const double t = 1000, h = 4096, qk = 1000.0 * 32 * 128, ff = 1000.0 * 11008;
  EXPECT_DOUBLE_EQ(Sum(f, "norm_attn").first, 4 * t * h);
  EXPECT_EQ(Sum(f, "norm_attn").second, 1);
  EXPECT_DOUBLE_EQ(Sum(e, "norm_attn.").first, 36 * t * h + 16 * t);
  EXPECT_EQ(Sum(e, "norm_attn.").second, 8);
  EXPECT_DOUBLE_EQ(Sum(eb, "norm_attn.").first, 92 * t * h + 24 * t);
  EXPECT_DOUBLE_EQ(Sum(e, "norm_mlp.").first, Sum(e, "norm_attn.").first);
  EXPECT_DOUBLE_EQ(Sum(f, "rope").first, 4 * 2 * qk);
  EXPECT_DOUBLE_EQ(Sum(e, "rope_q.").first, 20 * qk);
  EXPECT_DOUBLE_EQ(Sum(eb, "rope_k.").first, 20 * qk);
  EXPECT_EQ(Sum(e, "rope_").second, 6);
  EXPECT_DOUBLE_EQ(Sum(f, "mlp_act").first, 6 * ff);
  EXPECT_DOUBLE_EQ(Sum(fb, "mlp_act").first, 12 * ff);
  EXPECT_DOUBLE_EQ(Sum(e, "mlp_act.").first, 10 * ff);
  EXPECT_DOUBLE_EQ(Sum(eb, "mlp_act.").first, 18 * ff);
  EXPECT_EQ(Sum(e, "mlp_act.").second, 2);
  EXPECT_DOUBLE_EQ(GemmFlop(f), GemmFlop(e));
  EXPECT_DOUBLE_EQ(Find(f, "attn_core").flop, Find(e, "attn_core").flop);
  // 1 + 1 + 1 fused kernels became 8 + 6 + 2 (and the second norm 1 -> 8).
  EXPECT_EQ(e.size(), f.size() + 7 + 5 + 1 + 7);
}

// GPT's LayerNorm and GELU are one PyTorch kernel each and it has no RoPE: eager changes nothing.
TEST(LayerOps, EagerElementwiseLeavesLayerNormAndGeluAlone) {
  const TransformerSpec s = Preset("gpt3-175b");
  OpShape fused, eager;
  eager.eager_elementwise = true;
  const std::vector<Op> f = LayerForwardOps(s, 0, fused), e = LayerForwardOps(s, 0, eager);
  ASSERT_EQ(f.size(), e.size());
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_EQ(f[i].name, e[i].name);
    EXPECT_DOUBLE_EQ(f[i].bytes, e[i].bytes);
  }
}

TEST(LayerOps, CrossEntropyRunsInFp32OverTheVocabSlice) {
  // gpt3-175b, tp 8, 1000 tokens, bf16 activations: each
  // element of the [1000 x vocab/8] slice moves 2 + 4 (upcast) + 4 (max) + 8 (subtract) + 8 (exp)
  // + 4 (sum) + 8 (divide) = 38 B forward and 8 (scale) + 4 + 2 (cast back) = 14 B backward.
  const TransformerSpec s = Preset("gpt3-175b");
  OpShape shape;
  shape.tp = 8;
  const auto fwd = LmHeadForwardOps(s, 1000, shape, true);
  const double elems = 1000.0 * static_cast<double>(s.vocab / 8);
  EXPECT_DOUBLE_EQ(Find(fwd, "loss").bytes, 38 * elems);
  EXPECT_DOUBLE_EQ(Find(BackwardOps(fwd), "loss_bwd").bytes, 14 * elems);
}

// NVFP4: 0.5 B of E2M1 values + one E4M3 scale per 16 elements = 0.5625 B per element.
TEST(Nvfp4, BytesIncludeBlockScales) {
  EXPECT_DOUBLE_EQ(DtypeBytes(Dtype::kFp4), 0.5625);
  const TransformerSpec s = Preset("llama2-70b");
  EXPECT_DOUBLE_EQ(WeightBytes(s, Dtype::kFp4), CountParams(s).total * 0.5625);
}

// llama2-70b decode, 1000 tokens, TP1, fp4 math and weights, 16-bit activations:
//   norm_attn writes its output quantized: 1000 x 8192 x (2 + 0.5625) + 8192 x 0.5625 (gamma).
//   attn_out_quant: 1000 x 64 x 128 = 8.192e6 elements read at 2 B, written at 0.5625 B.
//   act_quant: 1000 x 28672 elements, same; qkv_proj's A operand 1000 x 8192 at 0.5625 B.
TEST(Nvfp4, Fp4GemmsReadQuantizedActivations) {
  const TransformerSpec s = Preset("llama2-70b");
  OpShape shape;
  shape.math = shape.weights = Dtype::kFp4;
  shape.activations = shape.kv = Dtype::kBf16;
  const std::vector<Op> ops = LayerTokenOps(s, 0, 1000, shape);
  EXPECT_DOUBLE_EQ(Find(ops, "norm_attn").bytes, 1000.0 * 8192 * 2.5625 + 8192 * 0.5625);
  EXPECT_DOUBLE_EQ(Find(ops, "attn_out_quant").bytes, 8.192e6 * 2.5625);
  EXPECT_DOUBLE_EQ(Find(ops, "act_quant").bytes, 1000.0 * 28672 * 2.5625);
  const Op& qkv = Find(ops, "qkv_proj");  // n = (64 + 2 x 8) x 128 = 10240
  EXPECT_DOUBLE_EQ(qkv.bytes, 1000.0 * (8192 * 0.5625 + 10240 * 2) + 8192.0 * 10240 * 0.5625);
  // fp8 and 16-bit math: no quantize kernels (per-tensor scales fused in the producers).
  shape.math = shape.weights = Dtype::kFp8;
  for (const Op& o : LayerTokenOps(s, 0, 1000, shape)) {
    EXPECT_EQ(o.name.find("quant"), std::string::npos) << o.name;
  }
}

}  // namespace
}  // namespace ndt
