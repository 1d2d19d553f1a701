#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/ops.h"
#include "model/testing.h"

// Transformer Engine's FP8 recipe in training (model/ops.h): the cast / cast-transpose kernels
// around each GEMM, the FP8 outputs of the fused norms and activations, the 16-bit output layer.
namespace ndt {
namespace {

using model_testing::Find;
using model_testing::Preset;

// Transformer Engine's FP8 recipe on a Llama 2 7B layer (h 4096, 32 heads of 128, ffn 11008,
// SwiGLU, RMSNorm), 1000 tokens, tp 1, bf16 activations (a = 2 B), fp8 math:
//   norm_attn / norm_mlp write the GEMM input in FP8: 1000 x 4096 x (2 + 1) + 4096 x 2 (gamma),
//     the backward keeps the bf16 2 x (1000 x 4096 x 4 + 8192).
//   qkv_proj (n 3 x 4096 = 12288): reads x and W in FP8, writes bf16:
//     1000 x (4096 x 1 + 12288 x 2) + 4096 x 12288 x 1; backward: dY cast-transpose
//     1000 x 12288 x (2 + 1 + 1), x transpose 1000 x 4096 x (1 + 1).
//   out_proj's input (attention output, bf16) cast-transposed before it: 1000 x 4096 x 4,
//     no backward; its dY 1000 x 4096 x 4.
//   mlp_act (SwiGLU, reads 2 x 11008 writes 11008 per token): 1000 x 11008 x (2 x 2 + 1),
//     backward 2 x 1000 x 11008 x 6.
//   mlp_gate_up's dY (1000 x 22016) x 4; mlp_down's x transpose 1000 x 11008 x 2, dY
//     1000 x 4096 x 4.
TEST(Fp8Recipe, CastTransposeKernelsOfALayer) {
  const TransformerSpec s = Preset("llama2-7b");
  OpShape shape;
  shape.seq_len = 1000;
  shape.math = Dtype::kFp8;
  const std::vector<Op> fwd = LayerForwardOps(s, 0, shape);
  const Op& norm = Find(fwd, "norm_attn");
  EXPECT_DOUBLE_EQ(norm.bytes, 1000.0 * 4096 * 3 + 8192);
  EXPECT_DOUBLE_EQ(norm.backward_bytes, 2 * (1000.0 * 4096 * 4 + 8192));
  const Op& qkv = Find(fwd, "qkv_proj");
  EXPECT_DOUBLE_EQ(qkv.bytes, 1000.0 * (4096 + 12288 * 2) + 4096.0 * 12288);
  EXPECT_DOUBLE_EQ(qkv.fp8_dy_cast_bytes, 1000.0 * 12288 * 4);
  EXPECT_DOUBLE_EQ(qkv.fp8_x_transpose_bytes, 1000.0 * 4096 * 2);
  const Op& cast = Find(fwd, "out_proj_x_fp8_cast_transpose");
  EXPECT_DOUBLE_EQ(cast.bytes, 1000.0 * 4096 * 4);
  EXPECT_TRUE(cast.no_backward);
  EXPECT_DOUBLE_EQ(Find(fwd, "out_proj").fp8_dy_cast_bytes, 1000.0 * 4096 * 4);
  EXPECT_DOUBLE_EQ(Find(fwd, "out_proj").fp8_x_transpose_bytes, 0);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_act").bytes, 1000.0 * 11008 * 5);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_act").backward_bytes, 2 * 1000.0 * 11008 * 6);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_gate_up").fp8_dy_cast_bytes, 1000.0 * 22016 * 4);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_down").fp8_x_transpose_bytes, 1000.0 * 11008 * 2);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_down").fp8_dy_cast_bytes, 1000.0 * 4096 * 4);
  // Only the attention output is cast by a kernel of its own in the forward.
  int casts = 0;
  for (const Op& o : fwd) casts += o.name.ends_with("_fp8_cast_transpose");
  EXPECT_EQ(casts, 1);
  // Backward: the output gradient's cast-transpose and the input's transpose run before the
  // GEMM's data gradient; the forward cast has no backward.
  const std::vector<Op> bwd = BackwardOps(fwd);
  auto at = [&](const std::string& n) {
    for (size_t i = 0; i < bwd.size(); ++i) {
      if (bwd[i].name == n) return static_cast<int>(i);
    }
    return -1;
  };
  EXPECT_GE(at("mlp_down_dy_fp8_cast_transpose"), 0);
  EXPECT_LT(at("mlp_down_dy_fp8_cast_transpose"), at("mlp_down_dgrad"));
  EXPECT_LT(at("qkv_proj_x_fp8_transpose"), at("qkv_proj_dgrad"));
  EXPECT_DOUBLE_EQ(bwd[at("qkv_proj_dy_fp8_cast_transpose")].bytes, 1000.0 * 12288 * 4);
  EXPECT_EQ(at("out_proj_x_fp8_cast_transpose_bwd"), -1);
  // 16-bit math: none of these kernels, and the norm writes bf16.
  shape.math = Dtype::kBf16;
  for (const Op& o : LayerBackwardOps(s, 0, shape)) {
    EXPECT_EQ(o.name.find("fp8"), std::string::npos) << o.name;
  }
  EXPECT_DOUBLE_EQ(Find(LayerForwardOps(s, 0, shape), "norm_attn").bytes, 1000.0 * 4096 * 4 + 8192);
}

// The kernels that write a transposed copy (Op::transposes; compute/ prices them at the arch's
// transpose rate) are exactly TE's cast-transpose and fp8_transpose kernels of the recipe: on a
// Llama 2 7B layer, the forward's one cast of the attention output, and in the backward each of
// the 4 GEMMs' output-gradient cast-transpose (qkv, out, gate_up, down) plus the transposes of
// the 2 FP8 inputs a fused norm wrote (qkv, gate_up) and of the one the activation wrote (down):
// 1 + 4 + 3 = 8. Norms, residuals, RoPE, the activation and the GEMMs stream as before, and a
// 16-bit layer has none.
TEST(Fp8Recipe, OnlyTheCastTransposeKernelsAreMarkedTransposing) {
  const TransformerSpec s = Preset("llama2-7b");
  OpShape shape;
  shape.seq_len = 1000;
  shape.math = Dtype::kFp8;
  std::vector<Op> ops = LayerForwardOps(s, 0, shape);
  const std::vector<Op> bwd = LayerBackwardOps(s, 0, shape);
  ops.insert(ops.end(), bwd.begin(), bwd.end());
  int marked = 0;
  for (const Op& o : ops) {
    const bool cast = o.name.ends_with("_fp8_cast_transpose") || o.name.ends_with("_fp8_transpose");
    EXPECT_EQ(o.transposes, cast) << o.name;
    marked += o.transposes;
  }
  EXPECT_EQ(marked, 8);
  shape.math = Dtype::kBf16;
  for (const Op& o : LayerBackwardOps(s, 0, shape)) EXPECT_FALSE(o.transposes) << o.name;
  for (const Op& o : LayerForwardOps(s, 0, shape)) EXPECT_FALSE(o.transposes) << o.name;
}

// GELU (GPT-3 6.7B, ffn 16384): LayerNormMLP casts FC1's output gradient inside the GELU
// backward, so mlp_up has no cast-transpose of its own; FC2's still does (1000 x 4096 x 4).
TEST(Fp8Recipe, GeluBackwardFusesFc1GradientCast) {
  const TransformerSpec s = Preset("gpt3-6.7b");
  OpShape shape;
  shape.seq_len = 1000;
  shape.math = Dtype::kFp8;
  const std::vector<Op> fwd = LayerForwardOps(s, 0, shape);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_up").fp8_dy_cast_bytes, 0);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_up").fp8_x_transpose_bytes, 1000.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_down").fp8_dy_cast_bytes, 1000.0 * 4096 * 4);
}

// Current scaling (OpShape::fp8_current_scaling, TE 2.2) on the same Llama 2 7B layer, 1000
// tokens, tp 1, a = 2 B:
//   norm_attn keeps its bf16 write: 1000 x 4096 x 4 + 8192 (as at 16-bit), and a kernel of its
//     own reads that output twice (amax, cast) and writes FP8: 1000 x 4096 x (2 + 2 + 1), no
//     backward; the GEMM still reads FP8 and its backward still transposes the FP8 input.
//   mlp_act (SwiGLU) writes bf16: 1000 x 11008 x (2 x 2 + 2); mlp_act_fp8_quantize
//     1000 x 11008 x 5.
//   out_proj's own cast reads its input once more for the amax: 1000 x 4096 x (2 + 2 + 1 + 1).
//   every output-gradient cast likewise: qkv 1000 x 12288 x (2 + 4), mlp_down 1000 x 4096 x 6.
// Over delayed scaling that is 3a = 6 B per element of each fused FP8 output and a = 2 B per
// element of each cast.
TEST(Fp8Recipe, CurrentScalingReadsEachCastInputForItsAmax) {
  const TransformerSpec s = Preset("llama2-7b");
  OpShape shape;
  shape.seq_len = 1000;
  shape.math = Dtype::kFp8;
  shape.fp8_current_scaling = true;
  const std::vector<Op> fwd = LayerForwardOps(s, 0, shape);
  EXPECT_DOUBLE_EQ(Find(fwd, "norm_attn").bytes, 1000.0 * 4096 * 4 + 8192);
  const Op& q = Find(fwd, "norm_attn_fp8_quantize");
  EXPECT_DOUBLE_EQ(q.bytes, 1000.0 * 4096 * 5);
  EXPECT_TRUE(q.no_backward);
  EXPECT_DOUBLE_EQ(Find(fwd, "qkv_proj").bytes, 1000.0 * (4096 + 12288 * 2) + 4096.0 * 12288);
  EXPECT_DOUBLE_EQ(Find(fwd, "qkv_proj").fp8_x_transpose_bytes, 1000.0 * 4096 * 2);
  EXPECT_DOUBLE_EQ(Find(fwd, "qkv_proj").fp8_dy_cast_bytes, 1000.0 * 12288 * 6);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_act").bytes, 1000.0 * 11008 * 6);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_act_fp8_quantize").bytes, 1000.0 * 11008 * 5);
  EXPECT_DOUBLE_EQ(Find(fwd, "out_proj_x_fp8_cast_transpose").bytes, 1000.0 * 4096 * 6);
  EXPECT_DOUBLE_EQ(Find(fwd, "mlp_down").fp8_dy_cast_bytes, 1000.0 * 4096 * 6);
  // Three quantize kernels (two norms, the activation); their ops run once, in the forward.
  int quantize = 0;
  for (const Op& o : fwd) quantize += o.name.ends_with("_fp8_quantize");
  EXPECT_EQ(quantize, 3);
  for (const Op& o : BackwardOps(fwd)) EXPECT_FALSE(o.name.ends_with("_fp8_quantize_bwd"));
  // Without FP8 math the flag changes nothing.
  shape.math = Dtype::kBf16;
  OpShape plain = shape;
  plain.fp8_current_scaling = false;
  EXPECT_EQ(LayerForwardOps(s, 0, shape).size(), LayerForwardOps(s, 0, plain).size());
  EXPECT_DOUBLE_EQ(Find(LayerForwardOps(s, 0, shape), "norm_attn").bytes,
                   Find(LayerForwardOps(s, 0, plain), "norm_attn").bytes);
}

// GELU under current scaling: TE 2.2 has no fused dgelu-cast for it, so FC1's output gradient
// (GPT-3 6.7B, 1000 x 16384) gets its cast-transpose kernel with the amax read: x (2 + 2 + 2).
TEST(Fp8Recipe, CurrentScalingUnfusesGeluBackwardCast) {
  const TransformerSpec s = Preset("gpt3-6.7b");
  OpShape shape;
  shape.seq_len = 1000;
  shape.math = Dtype::kFp8;
  shape.fp8_current_scaling = true;
  EXPECT_DOUBLE_EQ(Find(LayerForwardOps(s, 0, shape), "mlp_up").fp8_dy_cast_bytes,
                   1000.0 * 16384 * 6);
}

// The output layer is not an FP8 module in training (Megatron-Core's ColumnParallelLinear):
// with the loss (training) its GEMM runs at bf16; serving's head (no loss) keeps fp8 math.
TEST(Fp8Recipe, TrainingLmHeadRunsIn16Bit) {
  const TransformerSpec s = Preset("llama2-7b");
  OpShape shape;
  shape.math = Dtype::kFp8;
  EXPECT_EQ(Find(LmHeadForwardOps(s, 100, shape, true), "lm_head").math, Dtype::kBf16);
  EXPECT_EQ(Find(LmHeadForwardOps(s, 100, shape, false), "lm_head").math, Dtype::kFp8);
}

}  // namespace
}  // namespace ndt
