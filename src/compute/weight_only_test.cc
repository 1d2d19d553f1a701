// Weight-only quantized GEMMs (compute.h ArchCalibration::WeightOnlyGemm): narrow weights read
// from HBM, the math at the 16-bit rate over the kernel's own tiles, the dequantization beside it.
#include <gtest/gtest.h>

#include <string>

#include "compute/compute.h"
#include "compute/testing.h"

namespace ndt {
namespace {

using namespace compute_testing;

// C[m x n] = A[m x k] (bf16 activations) x W[k x n] stored at `weight_bytes` per element.
Op WeightGemm(int64_t m, int64_t n, int64_t k, double weight_bytes) {
  Op op = Gemm(m, n, k, Dtype::kBf16);
  op.weight_bytes = weight_bytes * static_cast<double>(k) * n;
  op.bytes = 2.0 * (m * k + m * n) + op.weight_bytes;
  return op;
}

// One decode row through an 8192 x 8192 fp8 weight on A100-SXM4-80GB (108 SMs, bf16 312 TFLOP/s
// at the fitted 0.84, fp32 19.5 TFLOP/s = 9.75e12 lane instructions/s, HBM 2039 GB/s at 0.8117):
//   16-row tiles: 1 x 64 tiles, no split-K (108 / 64 = 1), one wave of
//     math    108 x 16 x 128 x 2 x 8192 / 262.1e12 = 13.8 us
//     dequant 108 x 128 x 8192 x 3 / 9.75e12     = 34.8 us   (+ 2 us per wave: 36.8 us)
//   memory: (8192^2 x 1 + 2 x (8192 + 8192)) B / 1.655e12 B/s = 40.6 us -> memory-bound:
//   time = 40.6 us + 1.75 us launch.
// The same GEMM with bf16 weights runs the dense model's 16-row small-M tile (compute.yaml
// small_m_gemm): one wave of 108 x 16 x 128 x 2 x 8192 / 262.1e12 = 13.8 us + 2 us, under its
// (8192^2 x 2 + 2 x (8192 + 8192)) B / 1.655e12 B/s = 81.1 us of memory: 82.9 us, 1.96x the fp8
// weight-only time (the bytes' ratio, less the launch both pay).
TEST(WeightOnlyGemm, DecodeRowReadsTheNarrowWeights) {
  const GpuSpec g = Gpu("A100-SXM4-80GB");
  const ArchCalibration& a = Cal().For("ampere");
  ASSERT_TRUE(a.weight_only_gemm.has_value());
  const Op fp8 = WeightGemm(1, 8192, 8192, 1.0);
  const OpTiming t = OpTimeDetail(g, fp8, Cal());
  EXPECT_TRUE(t.memory_bound);
  const double memory = fp8.bytes / (g.memory_Bps * a.hbm_fraction);
  EXPECT_NEAR(t.time_s, memory + a.GemmFor(Precision::kBf16).launch_s, 1e-12);
  const double dequant = 108.0 * 128 * 8192 * 3 / (g.fp32_flops / 2) + 2e-6;
  EXPECT_NEAR(t.compute_s, dequant, 1e-9);
  const Op bf16_op = WeightGemm(1, 8192, 8192, 2.0);
  const double bf16 = OpTime(g, bf16_op, Cal());
  EXPECT_NEAR(bf16, bf16_op.bytes / (g.memory_Bps * a.hbm_fraction) + 1.75e-6, 1e-12);
  EXPECT_NEAR(bf16, 82.87e-6, 0.01e-6);
  EXPECT_LT(t.time_s, 0.52 * bf16);
  EXPECT_GT(t.time_s, 0.5 * bf16);
}

// 4-bit weights read half the bytes and convert with 1.9 instructions per element instead of 3:
// memory 33.6 MB / 1.655e12 B/s = 20.3 us, dequant 108 x 128 x 8192 x 1.9 / 9.75e12 = 22.1 us
// (+ 2 us per wave): the dequantization of the 64 busy SMs bounds it, 24.1 us + 1.75 us, faster
// than fp8's 42.3 us but not half of it.
TEST(WeightOnlyGemm, FourBitWeightsConvertWithTheirOwnCount) {
  const GpuSpec g = Gpu("A100-SXM4-80GB");
  const OpTiming t = OpTimeDetail(g, WeightGemm(1, 8192, 8192, 0.5), Cal());
  EXPECT_FALSE(t.memory_bound);
  EXPECT_NEAR(t.compute_s, 108.0 * 128 * 8192 * 1.9 / (g.fp32_flops / 2) + 2e-6, 1e-9);
  const double fp8 = OpTime(g, WeightGemm(1, 8192, 8192, 1.0), Cal());
  EXPECT_LT(t.time_s, fp8);
  EXPECT_GT(t.time_s, 0.5 * fp8);
}

// At a large batch the 128-row tile wins and its tensor work (110.6 us a wave) hides the
// dequantization (34.8 us): the weight-only GEMM runs at the dense bf16 GEMM's compute time
// (Ampere's dense tile is the same 128 x 128; 4096 rows: 32 x 64 = 2048 tiles, 19 waves).
TEST(WeightOnlyGemm, LargeBatchRunsAtTheSixteenBitRate) {
  const GpuSpec g = Gpu("A100-SXM4-80GB");
  const OpTiming wo = OpTimeDetail(g, WeightGemm(4096, 8192, 8192, 1.0), Cal());
  const OpTiming dense = OpTimeDetail(g, WeightGemm(4096, 8192, 8192, 2.0), Cal());
  EXPECT_DOUBLE_EQ(wo.compute_s, dense.compute_s);
  EXPECT_NEAR(wo.compute_s, 19 * (108.0 * 128 * 128 * 2 * 8192 / (312e12 * 0.84) + 2e-6), 1e-9);
}

// Hopper and Blackwell have no weight_only_gemm block: fp4 weights under fp8 math (H100) keep the
// dense model, whatever the stored width (only the bytes term sees it).
TEST(WeightOnlyGemm, HopperKeepsTheDenseModel) {
  EXPECT_FALSE(Cal().For("hopper").weight_only_gemm.has_value());
  EXPECT_FALSE(Cal().For("blackwell").weight_only_gemm.has_value());
  const GpuSpec g = Gpu("H100-SXM5-80GB");
  Op fp4 = WeightGemm(1, 8192, 8192, 0.5);
  fp4.math = Dtype::kFp8;
  Op fp8 = WeightGemm(1, 8192, 8192, 1.0);
  fp8.math = Dtype::kFp8;
  EXPECT_DOUBLE_EQ(OpTimeDetail(g, fp4, Cal()).compute_s, OpTimeDetail(g, fp8, Cal()).compute_s);
}

// 16-bit weights multiplied in fp32 (a GPU without 16-bit tensor cores) are not this kernel.
TEST(WeightOnlyGemm, SixteenBitWeightsAreNotWeightOnly) {
  GpuSpec g = Synthetic();
  g.fp16_flops = g.bf16_flops = 0;  // fp32 math only
  const Op op = WeightGemm(1, 8192, 8192, 2.0);
  Op dense = op;
  dense.weight_bytes = 0;
  EXPECT_DOUBLE_EQ(OpTimeDetail(g, op, Cal()).compute_s, OpTimeDetail(g, dense, Cal()).compute_s);
}

TEST(WeightOnlyGemm, LoaderErrors) {
  auto err = [](const std::string& body) {
    StatusOr<ComputeCalibration> c =
        ParseComputeCalibration(OneArch("    weight_only_gemm:\n" + body), "c.yaml");
    return c.ok() ? std::string("ok") : c.status().message();
  };
  const std::string rest =
      "      dequant_ops_8bit: 3\n      dequant_ops_4bit: 2\n      source: s\n";
  EXPECT_EQ(err("      tiles_m: [16, 128]\n      tile_n: 128\n" + rest), "ok");
  EXPECT_NE(err("      tiles_m: []\n      tile_n: 128\n" + rest).find("at least one tile"),
            std::string::npos);
  EXPECT_NE(err("      tiles_m: [0]\n      tile_n: 128\n" + rest).find("between 1 and 4096"),
            std::string::npos);
  EXPECT_NE(err("      tiles_m: [16]\n      tile_n: 128\n      dequant_ops_8bit: -1\n"
                "      dequant_ops_4bit: 2\n      source: s\n")
                .find("must be in [0, 100]"),
            std::string::npos);
  EXPECT_NE(err("      tiles_m: [16]\n      tile_n: 128\n      dequant_ops_8bit: 3\n"
                "      source: s\n")
                .find("dequant_ops_4bit"),
            std::string::npos);
}

}  // namespace
}  // namespace ndt
