// Attention forward/backward kernels, extra GEMM tiles and their calibration keys.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compute/compute.h"
#include "compute/testing.h"

namespace ndt {
namespace {

using namespace compute_testing;

// A one-arch calibration with the attention split and extra tiles (tests below).
std::string SplitArch(const std::string& extra) {
  return "how: x\narchs:\n  - arch: default\n    tile: [128, 128]\n" + extra +
         "    gemm: {fp16: {fraction: 0.8, launch: 0 us, wave_overhead: 0 us, residuals: r}}\n"
         "    attention_fraction: 0.5\n    attention_backward_ratio: 0.8\n"
         "    fused_attention:\n      kv_block: 128\n"
         "      forward: {fraction: 0.6, overhead_blocks: 2}\n"
         "      backward: {fraction: 0.55, overhead_blocks: 6}\n"
         "      residuals: r\n      how: h\n"
         "    hbm_fraction: 0.8\n    unfused_attention_efficiency: 0.7\n"
         "    kernel_overhead: 0 us\n    how: h\n";
}

// One causal attention core of 2 sequences x 32 heads x 2048 tokens, head_dim 128:
// 2048 * 2049 / 2 = 2,098,176 causal pairs per sequence and head.
Op CausalAttention(AttentionKernel kernel) { return CausalAttentionCore(2, 32, 2048, kernel); }

// The attention backward is its own mechanism. On the synthetic GPU (100 TFLOP/s 16-bit):
//  - FA2 forward at 0.5 of peak: flop / 50e12; FA2 backward (2.5x the FLOPs) at 0.5 x 0.8 = 0.4:
//    2.5 flop / 40e12, i.e. 2.5 / 0.8 = 3.125x the forward's time.
//  - Hopper-fused (the calibration has it): mean keys per query = 2049 / 2 = 1024.5, B = 8.004
//    blocks of 128; forward rate 0.6 x 8.004 / 10.004 = 0.48004, backward 0.55 x 8.004 / 14.004
//    = 0.31435 of peak.
//  - A calibration without fused_attention runs the Hopper-fused kernel at FA2's fractions.
TEST(Attention, BackwardAndHopperFusedKernelsHaveTheirOwnRates) {
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(SplitArch(""), "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const GpuSpec g = Synthetic();
  const Op fwd = CausalAttention(AttentionKernel::kFlash2);
  const std::vector<Op> bwd = BackwardOps({fwd});
  ASSERT_EQ(bwd.size(), 1u);
  const double flop = fwd.flop;
  EXPECT_NEAR(OpTimeDetail(g, fwd, *c).compute_s, flop / 50e12, 1e-12);
  EXPECT_NEAR(OpTimeDetail(g, bwd[0], *c).compute_s, 2.5 * flop / 40e12, 1e-12);

  const Op hf = CausalAttention(AttentionKernel::kCudnnFused);
  const std::vector<Op> hb = BackwardOps({hf});
  const double blocks = 1024.5 / 128;
  EXPECT_NEAR(OpTimeDetail(g, hf, *c).efficiency, 0.6 * blocks / (blocks + 2), 1e-9);
  EXPECT_NEAR(OpTimeDetail(g, hb[0], *c).efficiency, 0.55 * blocks / (blocks + 6), 1e-9);

  StatusOr<ComputeCalibration> plain = ParseComputeCalibration(OneArch(""), "c.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_NEAR(OpTimeDetail(g, hf, *plain).compute_s, flop / 50e12, 1e-12);
  // No attention_backward_ratio: the backward runs at the forward's fraction.
  EXPECT_NEAR(OpTimeDetail(g, BackwardOps({fwd})[0], *plain).compute_s, 2.5 * flop / 50e12, 1e-12);
}

// The GEMM takes the fastest of its CTA tiles. Synthetic GPU (100 SMs, 100 TFLOP/s at 0.8:
// 0.8 TFLOP/s per SM), m = 128, n = 12800, k = 256 (no split-K room: k / 256 = 1):
//  - 128x256 only: 1 x 50 tiles, one wave of 128*256*2*256 = 16.78 MFLOP per SM -> 20.97 us
//    (the 256x128 orientation: 1 x 100 tiles, one wave of the same work);
//  - 128x128 added: 100 tiles, one wave of 128*128*2*256 = 8.39 MFLOP -> 10.49 us.
TEST(Gemm, MoreTilesTakeTheFastest) {
  const GpuSpec g = Synthetic();
  // The same one-arch calibration with a 128x256 tile, and optionally more tiles.
  auto tiles = [](const std::string& more_tiles) {
    return ParseComputeCalibration(
        "how: x\narchs:\n  - arch: default\n    tile: [128, 256]\n" + more_tiles +
            "    gemm: {fp16: {fraction: 0.8, launch: 0 us, wave_overhead: 0 us, residuals: r}}\n"
            "    attention_fraction: 0.5\n    hbm_fraction: 0.8\n"
            "    unfused_attention_efficiency: 0.7\n    kernel_overhead: 0 us\n    how: h\n",
        "c.yaml");
  };
  StatusOr<ComputeCalibration> one = tiles("");
  ASSERT_TRUE(one.ok()) << one.status().message();
  StatusOr<ComputeCalibration> more = tiles("    more_tiles: [128, 128]\n");
  ASSERT_TRUE(more.ok()) << more.status().message();
  Op op = Gemm(128, 12800, 256);
  op.bytes = 0;  // compute only
  EXPECT_NEAR(OpTimeDetail(g, op, *one).compute_s, 128.0 * 256 * 2 * 256 / 0.8e12, 1e-12);
  EXPECT_NEAR(OpTimeDetail(g, op, *more).compute_s, 128.0 * 128 * 2 * 256 / 0.8e12, 1e-12);
  // Serving keeps the one tile its fractions were fitted with (an arch with a serving fit).
  std::string served = SplitArch("    more_tiles: [128, 128]\n");
  served.replace(served.rfind("    how: h\n"), 11, std::string(kServing) + "    how: h\n");
  StatusOr<ComputeCalibration> with_serving = ParseComputeCalibration(served, "c.yaml");
  ASSERT_TRUE(with_serving.ok()) << with_serving.status().message();
  EXPECT_EQ(with_serving->For("default").more_tiles.size(), 1u);
  EXPECT_TRUE(ServingCalibration(*with_serving).For("default").more_tiles.empty());
}

TEST(Calibration, SplitKeysRejectBadValues) {
  StatusOr<ComputeCalibration> c =
      ParseComputeCalibration(SplitArch("    more_tiles: [128, 192, 128]\n"), "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("more_tiles"), std::string::npos);
  std::string bad = SplitArch("");
  bad.replace(bad.find("fraction: 0.55"), 14, "fraction: 1.55");
  c = ParseComputeCalibration(bad, "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("fraction: must be in (0, 1]"), std::string::npos);
  bad = SplitArch("");
  bad.replace(bad.find("attention_backward_ratio: 0.8"), 29, "attention_backward_ratio: 0");
  c = ParseComputeCalibration(bad, "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("attention_backward_ratio"), std::string::npos);
}

}  // namespace
}  // namespace ndt
