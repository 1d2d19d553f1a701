// Memory-bound kernels that write their output transposed (Op::transposes: Transformer Engine's
// FP8 cast-transpose family) at the arch's measured transpose rate (compute.h
// ArchCalibration::transpose_Bps, compute.yaml `transpose_kernels`), never above streaming's.
#include <gtest/gtest.h>

#include <string>

#include "compute/compute.h"
#include "compute/testing.h"
#include "model/ops.h"

namespace ndt {
namespace {

using namespace compute_testing;

// One arch: STREAM fraction 0.8, kernel overhead 2 us, and optionally a transpose block.
std::string Arch(const std::string& transpose) {
  return "how: x\narchs:\n  - arch: default\n    tile: [128, 128]\n    gemm:\n"
         "      fp16: {fraction: 0.8, launch: 0 us, wave_overhead: 0 us, residuals: r}\n"
         "    attention_fraction: 0.5\n    hbm_fraction: 0.8\n"
         "    unfused_attention_efficiency: 0.7\n    kernel_overhead: 2 us\n    how: h\n" +
         transpose;
}
const char* const kTranspose = "    transpose_kernels: {rate: 400 GB/s, source: s, how: h}\n";

// A memory-bound kernel of 1 GB (no FLOPs).
Op Copy(bool transposes) {
  Op op;
  op.name = "x_fp8_cast_transpose";
  op.kind = OpKind::kElementwise;
  op.bytes = 1e9;
  op.transposes = transposes;
  return op;
}

// On the synthetic GPU (1 TB/s): 1 GB streamed at 0.8 of 1 TB/s = 1.25 ms, transposed at 400 GB/s
// = 2.5 ms; each + 2 us. The rate is absolute: on a 2 TB/s card the transpose still takes 2.5 ms
// while streaming halves to 0.625 ms. A rate above streaming's is capped at it: at 1,000 GB/s
// against 0.8 x 1 TB/s the kernel streams (1.25 ms).
TEST(TransposeKernels, TransposingKernelsRunAtTheTransposeRate) {
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(Arch(kTranspose), "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->For("default").transpose_Bps, 400e9);
  GpuSpec g = Synthetic();
  EXPECT_NEAR(OpTime(g, Copy(true), *c), 2.5e-3 + 2e-6, 1e-12);
  EXPECT_NEAR(OpTime(g, Copy(false), *c), 1.25e-3 + 2e-6, 1e-12);
  g.memory_Bps = 2e12;
  EXPECT_NEAR(OpTime(g, Copy(true), *c), 2.5e-3 + 2e-6, 1e-12);
  EXPECT_NEAR(OpTime(g, Copy(false), *c), 0.625e-3 + 2e-6, 1e-12);
  StatusOr<ComputeCalibration> fast = ParseComputeCalibration(
      Arch("    transpose_kernels: {rate: 1000 GB/s, source: s, how: h}\n"), "c.yaml");
  ASSERT_TRUE(fast.ok()) << fast.status().message();
  EXPECT_NEAR(OpTime(Synthetic(), Copy(true), *fast), 1.25e-3 + 2e-6, 1e-12);
  // Without the block a transposing kernel streams like any other, as before.
  StatusOr<ComputeCalibration> plain = ParseComputeCalibration(Arch(""), "c.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_NEAR(OpTime(Synthetic(), Copy(true), *plain), 1.25e-3 + 2e-6, 1e-12);
}

TEST(TransposeKernels, LoaderChecksTheBlock) {
  auto err = [](const std::string& block) {
    StatusOr<ComputeCalibration> c = ParseComputeCalibration(Arch(block), "c.yaml");
    return c.ok() ? std::string("ok") : c.status().message();
  };
  EXPECT_EQ(err(kTranspose), "ok");
  const std::string zero = err("    transpose_kernels: {rate: 0 GB/s, source: s, how: h}\n");
  EXPECT_NE(zero.find("rate: must be positive"), std::string::npos) << zero;
  const std::string unit = err("    transpose_kernels: {rate: 400 us, source: s, how: h}\n");
  EXPECT_NE(unit.find("rate"), std::string::npos) << unit;
  EXPECT_NE(unit, "ok");
  const std::string missing = err("    transpose_kernels: {rate: 400 GB/s, how: h}\n");
  EXPECT_NE(missing.find("source"), std::string::npos) << missing;
  const std::string extra =
      err("    transpose_kernels: {rate: 400 GB/s, source: s, how: h, speed: 2}\n");
  EXPECT_NE(extra.find("speed: unknown key"), std::string::npos) << extra;
}

// The committed Hopper value, from TE PR #101's H100 SXM timing of cast_transpose on 4096 x 4096
// FP16 -> FP8: 16.78M x (2 + 1 + 1) B = 67.1 MB in 51.53 us, less the arch's 3.0 us kernel
// overhead: 67.1e6 / 48.53e-6 = 1,384 GB/s. So the H100 prices that kernel back at the measured
// 51.5 us (67.1e6 / 1.384e12 + 3.0 us = 51.5 us), where the STREAM rate gave 26.2 us, and the H200
// at the same time. Blackwell has no block (TE keeps no transposed FP8 copy there): a
// transposing op there streams at hbm_fraction.
TEST(TransposeKernels, CommittedHopperValueGivesBackTheMeasuredKernel) {
  const ArchCalibration& h = Cal().For("hopper");
  EXPECT_DOUBLE_EQ(h.transpose_Bps, 1384e9);
  Op op = Copy(true);
  op.bytes = 4096.0 * 4096.0 * 4.0;
  EXPECT_NEAR(OpTime(Gpu("H100-SXM5-80GB"), op, Cal()), 51.53e-6, 0.1e-6);
  EXPECT_NEAR(OpTime(Gpu("H200-141GB"), op, Cal()), 51.53e-6, 0.1e-6);
  EXPECT_EQ(Cal().For("blackwell").transpose_Bps, 0);
  const GpuSpec gb200 = Gpu("GB200");
  EXPECT_DOUBLE_EQ(OpTime(gb200, Copy(true), Cal()), OpTime(gb200, Copy(false), Cal()));
}

}  // namespace
}  // namespace ndt
