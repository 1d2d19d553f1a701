// cuDNN's fused attention (AttentionKernel::kCudnnFused) on the committed calibration: Hopper's
// and Blackwell's own curves (compute.yaml `fused_attention`), GB300 at its measured speed over
// GB200's (`fused_attention_ratio`), FlashAttention-2 otherwise.
#include <gtest/gtest.h>

#include <vector>

#include "compute/compute.h"
#include "compute/testing.h"

namespace ndt {
namespace {

using namespace compute_testing;

// Llama 3 8B's attention core at micro-batch 2: 2 sequences x 32 heads x 8192 tokens, causal,
// head_dim 128, bf16.
// 8192 x 8193 / 2 = 33,558,528 causal pairs per sequence and head.
Op Llama3Core(AttentionKernel kernel) { return CausalAttentionCore(2, 32, 8192, kernel); }

// Efficiency = the op's FLOPs / (the 16-bit peak x its compute time) = the rate of the curve.
// Mean keys per query 8193 / 2 = 4096.5, B = 4096.5 / 128 = 32.0039 blocks of 128 keys.
//  - GB200 cudnn_fused (compute.yaml blackwell, from NVIDIA's B200 cuDNN 9.10.2 rows): forward
//    0.675 x 32.0039 / (32.0039 + 6.44) = 0.561926, backward 0.525 x 32.0039 / 36.8739 = 0.455662.
//  - GB200 fa2 (a stack that runs FlashAttention-2, e.g. torchtitan 2024): 0.1496 forward,
//    0.1496 x 0.859 = 0.128506 backward, as before Blackwell had a fused curve.
//  - H100 cudnn_fused (compute.yaml hopper): 0.596 x 32.0039 / 34.1039 = 0.559300, backward
//    0.553 x 32.0039 / 37.1039 = 0.476989.
//  - GB300 (blackwell_ultra) on Blackwell's curve x its measured speed over GB200's (compute.yaml
//    blackwell_ultra fused_attention_ratio, cuDNN 9.17 rows): forward (0.8533 / 0.7206) x
//    (32.0039 + 5.258) / (32.0039 + 4.776) = 1.184152 x 1.013105 = 1.199670, 0.561926 x 1.199670
//    = 0.674126; backward (0.6637 / 0.6042) x (32.0039 + 9.040) / (32.0039 + 10.711) = 1.098477 x
//    0.960894 = 1.055505, 0.455662 x 1.055505 = 0.480954. Both GPUs' 16-bit peak is 2500 TFLOP/s,
//    so GB300's time is GB200's / 1.199670 (forward) and / 1.055505 (backward).
//  - GB300 fa2: 0.1496 as on GB200 (no ratio: the same runs' FlashAttention-2 reads GB300/GB200
//    1.004-1.019).
TEST(FusedAttention, BlackwellRunsCudnnCurveUnderTheTraitAndFa2Otherwise) {
  const GpuSpec gb200 = Gpu("GB200"), gb300 = Gpu("GB300"), h100 = Gpu("H100-SXM5-80GB");
  ASSERT_EQ(gb200.arch, "blackwell");
  ASSERT_EQ(gb300.arch, "blackwell_ultra");
  const Op fused = Llama3Core(AttentionKernel::kCudnnFused);
  const Op fa2 = Llama3Core(AttentionKernel::kFlash2);
  const Op fused_bwd = BackwardOps({fused})[0];
  const Op fa2_bwd = BackwardOps({fa2})[0];
  auto eff = [](const GpuSpec& g, const Op& op) { return OpTimeDetail(g, op, Cal()).efficiency; };
  EXPECT_NEAR(eff(gb200, fused), 0.561926, 1e-6);
  EXPECT_NEAR(eff(gb200, fused_bwd), 0.455662, 1e-6);
  EXPECT_NEAR(eff(gb200, fa2), 0.1496, 1e-9);
  EXPECT_NEAR(eff(gb200, fa2_bwd), 0.128506, 1e-6);
  EXPECT_NEAR(eff(h100, fused), 0.559300, 1e-6);
  EXPECT_NEAR(eff(h100, fused_bwd), 0.476989, 1e-6);
  EXPECT_NEAR(eff(gb300, fused), 0.674126, 1e-6);
  EXPECT_NEAR(eff(gb300, fused_bwd), 0.480954, 1e-6);
  auto time = [](const GpuSpec& g, const Op& op) { return OpTimeDetail(g, op, Cal()).compute_s; };
  EXPECT_NEAR(time(gb300, fused) * 1.199670, time(gb200, fused), 1e-6 * time(gb200, fused));
  EXPECT_NEAR(time(gb300, fused_bwd) * 1.055505, time(gb200, fused_bwd),
              1e-6 * time(gb200, fused_bwd));
  EXPECT_NEAR(eff(gb300, fa2), 0.1496, 1e-9);
  EXPECT_NEAR(eff(gb300, fa2_bwd), 0.128506, 1e-6);
  // Serving prices its attention with its own fraction (compute.yaml blackwell serving), not
  // with training's curve: the fused kernel there runs at serving's 0.5479 flat on GB200, and on
  // GB300 x the forward ratio at the op's B: 0.5479 x 1.199670 = 0.657299.
  const ComputeCalibration serving = ServingCalibration(Cal());
  EXPECT_NEAR(OpTimeDetail(gb200, fa2, serving).efficiency, 0.5479, 1e-9);
  EXPECT_NEAR(OpTimeDetail(gb300, fa2, serving).efficiency, 0.657299, 1e-6);
}

}  // namespace
}  // namespace ndt
