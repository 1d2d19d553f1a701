// FP8 GEMMs with the split accumulator (compute.h GemmFit::split_accumulate_fraction): training's
// backward FP8 GEMMs run at that fraction, everything else at the fast kernel's.
#include <gtest/gtest.h>

#include <string>

#include "compute/compute.h"
#include "compute/testing.h"
#include "model/ops.h"

namespace ndt {
namespace {

using namespace compute_testing;

// One arch with an fp8 fit of fraction 0.8 (no launch or per-wave cost) and, optionally, a split
// accumulator block.
std::string Fp8Arch(const std::string& split) {
  return "how: x\narchs:\n  - arch: default\n    tile: [128, 128]\n    gemm:\n"
         "      fp16: {fraction: 0.8, launch: 0 us, wave_overhead: 0 us, residuals: r}\n"
         "      fp8:\n        fraction: 0.8\n        launch: 0 us\n        wave_overhead: 0 us\n"
         "        residuals: r\n" +
         split +
         "    attention_fraction: 0.5\n    hbm_fraction: 0.8\n"
         "    unfused_attention_efficiency: 0.7\n    kernel_overhead: 2 us\n    how: h\n";
}
const char* const kSplit = "        split_accumulate: {fraction: 0.6, residuals: r, how: h}\n";

// The synthetic GPU (100 SMs, 1 TB/s) with 200 TFLOP/s of fp8.
GpuSpec Fp8Gpu() {
  GpuSpec g = Synthetic();
  g.fp8_flops = 200e12;
  return g;
}

Op WithPass(Op op, Pass p) {
  op.pass = p;
  return op;
}

// 12800 x 1280 x 4096 fp8 on the synthetic GPU: 100 x 10 = 1000 tiles of 128x128 = 10 full waves of
// 100 SMs, no split-K, so the compute term is exactly flop / (200e12 x fraction): 2 x 12800 x 1280
// x 4096 = 134.2 GFLOP -> 838.9 us at 0.8 (forward), 1118.5 us at 0.6 (backward). Bytes (2 B each
// in the fixture) 147.8 MB / (1e12 x 0.8) = 184.8 us: compute-bound.
TEST(SplitAccumulate, BackwardFp8GemmRunsTheSplitFraction) {
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(Fp8Arch(kSplit), "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->For("default").GemmFor(Precision::kFp8).split_accumulate_fraction, 0.6);
  const GpuSpec g = Fp8Gpu();
  const Op gemm = Gemm(12800, 1280, 4096, Dtype::kFp8);
  const double flop = 2.0 * 12800 * 1280 * 4096;
  EXPECT_NEAR(OpTime(g, WithPass(gemm, Pass::kForward), *c), flop / (200e12 * 0.8), 1e-12);
  EXPECT_NEAR(OpTime(g, WithPass(gemm, Pass::kBackward), *c), flop / (200e12 * 0.6), 1e-12);
  // 16-bit backward GEMMs keep their own fraction (no split accumulator on the 16-bit path).
  const Op bf16 = Gemm(12800, 1280, 4096, Dtype::kBf16);
  EXPECT_DOUBLE_EQ(OpTime(g, WithPass(bf16, Pass::kBackward), *c),
                   OpTime(g, WithPass(bf16, Pass::kForward), *c));
  // Without the block the backward runs the fast fraction, as before.
  StatusOr<ComputeCalibration> plain = ParseComputeCalibration(Fp8Arch(""), "c.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_DOUBLE_EQ(OpTime(g, WithPass(gemm, Pass::kBackward), *plain),
                   OpTime(g, WithPass(gemm, Pass::kForward), *plain));
}

TEST(SplitAccumulate, LoaderChecksTheBlock) {
  auto err = [](const std::string& split) {
    StatusOr<ComputeCalibration> c = ParseComputeCalibration(Fp8Arch(split), "c.yaml");
    return c.ok() ? std::string("ok") : c.status().message();
  };
  EXPECT_EQ(err(kSplit), "ok");
  const std::string big = err("        split_accumulate: {fraction: 1.5, residuals: r, how: h}\n");
  EXPECT_NE(big.find("fraction: must be in (0, 1]"), std::string::npos) << big;
  const std::string missing = err("        split_accumulate: {fraction: 0.6, residuals: r}\n");
  EXPECT_NE(missing.find("how"), std::string::npos) << missing;
  const std::string extra =
      err("        split_accumulate: {fraction: 0.6, residuals: r, how: h, speed: 2}\n");
  EXPECT_NE(extra.find("speed: unknown key"), std::string::npos) << extra;
}

// The committed Hopper fit: the split fraction is below the fast one, so an H100 backward FP8
// GEMM of a Llama 3 8B layer (4096 tokens x 4096 x 28672: FC1's dgrad k) takes longer than the
// same shape forward, by at most the ratio of the fractions (launch and per-wave costs stay), and
// serving (forward only) keeps its own fraction. Blackwell has no such block: unchanged.
TEST(SplitAccumulate, CommittedHopperFit) {
  const GemmFit& f = Cal().For("hopper").GemmFor(Precision::kFp8);
  ASSERT_GT(f.split_accumulate_fraction, 0);
  EXPECT_LT(f.split_accumulate_fraction, f.fraction);
  const GpuSpec h100 = Gpu("H100-SXM5-80GB");
  const Op gemm = Gemm(4096, 4096, 28672, Dtype::kFp8);
  const OpTiming fwd = OpTimeDetail(h100, WithPass(gemm, Pass::kForward), Cal());
  const OpTiming bwd = OpTimeDetail(h100, WithPass(gemm, Pass::kBackward), Cal());
  EXPECT_GT(bwd.compute_s, fwd.compute_s);
  EXPECT_LE(bwd.compute_s / fwd.compute_s, f.fraction / f.split_accumulate_fraction + 1e-12);
  EXPECT_GT(bwd.compute_s / fwd.compute_s,
            1.0 + 0.9 * (f.fraction / f.split_accumulate_fraction - 1));
  EXPECT_EQ(Cal().For("blackwell").GemmFor(Precision::kFp8).split_accumulate_fraction, 0);
  const GpuSpec gb200 = Gpu("GB200");
  EXPECT_DOUBLE_EQ(OpTime(gb200, WithPass(gemm, Pass::kBackward), Cal()),
                   OpTime(gb200, WithPass(gemm, Pass::kForward), Cal()));
}

}  // namespace
}  // namespace ndt
