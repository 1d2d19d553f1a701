// Grouped (MoE) GEMMs: compute.yaml `grouped_gemm` factors, their use in OpTime, the loader.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compute/compute.h"
#include "compute/testing.h"
#include "hw/catalog.h"
#include "model/ops.h"

namespace ndt {
namespace {

using namespace compute_testing;

// The committed Hopper grouped-GEMM factors (compute.yaml `grouped_gemm`, ndtwin's own rows of
// torch._scaled_grouped_mm with fast accumulation, data/measured/*_moe*_2026-11-27.csv): the
// arch's (H100) list has 1.139 at 128 rows per group and 1.241 at 512 (256 left out), so at 256,
// half way in log2, (1.139 + 1.241) / 2 = 1.19; end values held outside (8 rows: 1.162, 4096:
// 1.106). The H200 has its own list (128: 1.411, 512: 1.241 -> 256: 1.326); a GPU without one
// (or no name) takes the arch's. Ampere has no grouped row: 1 everywhere.
TEST(GroupedGemm, SlowdownIsLinearInLog2RowsAndHoldsTheEnds) {
  const ArchCalibration& h = Cal().For("hopper");
  EXPECT_DOUBLE_EQ(h.GroupedGemmSlowdown(8), 1.162);
  EXPECT_DOUBLE_EQ(h.GroupedGemmSlowdown(16), 1.162);
  EXPECT_DOUBLE_EQ(h.GroupedGemmSlowdown(128), 1.139);
  EXPECT_NEAR(h.GroupedGemmSlowdown(256), 1.19, 1e-12);
  EXPECT_DOUBLE_EQ(h.GroupedGemmSlowdown(512), 1.241);
  EXPECT_DOUBLE_EQ(h.GroupedGemmSlowdown(4096), 1.106);
  EXPECT_DOUBLE_EQ(h.GroupedGemmSlowdown(256, "H100-SXM5-80GB"), h.GroupedGemmSlowdown(256));
  EXPECT_NEAR(h.GroupedGemmSlowdown(256, "H200-141GB"), 1.326, 1e-12);
  EXPECT_DOUBLE_EQ(h.GroupedGemmSlowdown(64, "H200-141GB"), 1.424);
  EXPECT_DOUBLE_EQ(Cal().For("ampere").GroupedGemmSlowdown(256), 1.0);
  // The per-GPU key is a catalog name (a misspelt key would silently fall back to the arch list).
  EXPECT_EQ(h.grouped_gemm_slowdown_by_gpu.count(Gpu("H200").name), 1u);
}

// Mixtral's gate_up at decode on H100: 8 experts x 128 rows, n 28672, k 4096, FP8, with the
// Hopper fp8 fit (0.725, 3 us launch, 2.5 us per wave, 128x256 tile, hbm 0.8628):
// - tiles ceil(128/128) x ceil(28672/256) x 8 = 896 > 132 SMs, no split-K, ceil(896/132) = 7
//   waves of 132 x 128 x 256 x 2 x 4096 / (1978.9e12 x 0.725) + 2.5 us = 27.2 us: 190.4 us (the
//   256x128 tile needs 14 waves);
// - bytes 8 x (128 x 4096 + 4096 x 28672 + 2 x 128 x 28672) = 1,002,438,656 / (3350e9 x 0.8628) =
//   346.8 us, the larger;
// dense model 346.8 + 3 = 349.8 us; as a grouped FP8 kernel of 128-row groups x 1.139: 398.0 us
// (measured with fast accumulation: 366.0 us at this n x k; the factor is the geometric mean over
// four n x k). On the H200 (4800 GB/s) the memory term is 242.1 us, x 1.411 = 341.5 us
// + 3. In BF16 the same grouped op takes the bf16 list (`by_precision: bf16`): H100 128 rows,
// between 84 (1.036) and 145 (1.119) in log2: 1.036 + log2(128/84)/log2(145/84) x 0.083 =
// 1.036 + 0.6077/0.7876 x 0.083 = 1.1000; FP16 reads the same list. One group, an op not marked
// grouped, or a precision with no list (fp4 on Hopper) keeps the dense model.
TEST(GroupedGemm, MixtralDecodeGateUpByHand) {
  const GpuSpec h100 = Gpu("H100-SXM5-80GB");
  Op op = Gemm(128, 28672, 4096, Dtype::kFp8);
  op.batch = 8;
  op.flop = 2.0 * 8 * 128 * 28672 * 4096;
  op.bytes = 8.0 * (128.0 * 4096 + 4096.0 * 28672 + 2.0 * 128 * 28672);
  const double compute = 7 * (132.0 * 128 * 256 * 2 * 4096 / (1978.9e12 * 0.725) + 2.5e-6);
  const double memory = op.bytes / (3350e9 * 0.8628);
  ASSERT_GT(memory, compute);
  EXPECT_NEAR(OpTime(h100, op, Cal()), memory + 3e-6, 1e-10);
  op.grouped_rows = 128;
  EXPECT_NEAR(OpTime(h100, op, Cal()), memory * 1.139 + 3e-6, 1e-10);
  EXPECT_NEAR(OpTime(h100, op, Cal()), 398.0e-6, 0.1e-6);
  const OpTiming d = OpTimeDetail(h100, op, Cal());
  EXPECT_NEAR(d.compute_s, compute * 1.139, 1e-12);  // both terms stretch
  EXPECT_TRUE(d.memory_bound);
  const GpuSpec h200 = Gpu("H200-141GB");
  EXPECT_NEAR(OpTime(h200, op, Cal()), op.bytes / (4800e9 * 0.8628) * 1.411 + 3e-6, 1e-10);
  Op bf16 = op;
  bf16.math = Dtype::kBf16;
  Op bf16_dense = bf16;
  bf16_dense.grouped_rows = 0;
  const OpTiming b = OpTimeDetail(h100, bf16, Cal());
  const OpTiming bd = OpTimeDetail(h100, bf16_dense, Cal());
  const double f128 = 1.036 + std::log2(128.0 / 84) / std::log2(145.0 / 84) * (1.119 - 1.036);
  EXPECT_NEAR(f128, 1.1000, 1e-4);
  EXPECT_NEAR(b.compute_s, bd.compute_s * f128, 1e-12);
  EXPECT_NEAR(b.memory_s, bd.memory_s * f128, 1e-12);
  Op fp16 = bf16;
  fp16.math = Dtype::kFp16;
  EXPECT_DOUBLE_EQ(OpTime(h100, fp16, Cal()), OpTime(h100, bf16, Cal()));
  EXPECT_DOUBLE_EQ(Cal().For("hopper").GroupedGemmSlowdownIn(Precision::kFp4, 128, h100.name), 1.0);
  op.batch = 1;
  op.flop /= 8;
  op.bytes /= 8;
  Op dense = op;
  dense.grouped_rows = 0;
  EXPECT_DOUBLE_EQ(OpTime(h100, op, Cal()), OpTime(h100, dense, Cal()));
}

TEST(GroupedGemm, LoaderErrors) {
  auto err = [](const std::string& block) {
    StatusOr<ComputeCalibration> c = ParseComputeCalibration(OneArch(block), "c.yaml");
    return c.ok() ? std::string("ok") : c.status().message();
  };
  auto block = [](const std::string& list) {
    return "    grouped_gemm:\n      slowdown: " + list + "\n      residuals: r\n      how: h\n";
  };
  EXPECT_EQ(err(block("[256, 1.2, 1024, 1]")), "ok");
  EXPECT_NE(err(block("[256, 1.2, 1024]")).find("must list [rows, factor] pairs"),
            std::string::npos);
  EXPECT_NE(err(block("[1024, 1.2, 256, 1]")).find("strictly ascending"), std::string::npos);
  EXPECT_NE(err(block("[256, 0.9]")).find("factors must be in [1, 4]"), std::string::npos);
  StatusOr<ComputeCalibration> c =
      ParseComputeCalibration(OneArch(block("[256, 2, 1024, 1]")), "c");
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->For("default").GroupedGemmSlowdown(512), 1.5);   // half way in log2
  EXPECT_FALSE(c->For("default").grouped_gemm_precision.has_value());  // every precision
  auto with = [](const std::string& extra) {
    return "    grouped_gemm:\n      slowdown: [256, 2]\n" + extra +
           "      residuals: r\n      how: h\n";
  };
  EXPECT_NE(err(with("      precision: fp7\n")).find("must be a precision such as fp8 (got fp7)"),
            std::string::npos);
  EXPECT_NE(err(with("      by_gpu:\n        X: [256]\n")).find("must list [rows, factor] pairs"),
            std::string::npos);
  StatusOr<ComputeCalibration> g = ParseComputeCalibration(
      OneArch(with("      precision: fp8\n      by_gpu:\n        X: [16, 3]\n")), "c");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->For("default").grouped_gemm_precision, Precision::kFp8);
  EXPECT_DOUBLE_EQ(g->For("default").GroupedGemmSlowdown(256, "X"), 3.0);
  EXPECT_DOUBLE_EQ(g->For("default").GroupedGemmSlowdown(256, "Y"), 2.0);
  // by_precision: another precision's lists, read the same way; fp16 reads bf16's.
  const std::string bf16 = "      by_precision:\n        bf16:\n          slowdown: [16, 1.5]\n";
  EXPECT_NE(err(with(bf16)).find("needs `precision:`"), std::string::npos);
  EXPECT_NE(err(with("      precision: fp8\n      by_precision:\n        fp8:\n          "
                     "slowdown: [16, 1.5]\n"))
                .find("must be a precision other than the main list's"),
            std::string::npos);
  EXPECT_NE(err(with("      precision: fp8\n" + bf16 + "          bogus: 1\n")).find("bogus"),
            std::string::npos);
  StatusOr<ComputeCalibration> m =
      ParseComputeCalibration(OneArch(with("      precision: fp8\n" + bf16 +
                                           "          by_gpu:\n            X: [16, 1.25]\n")),
                              "c");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const ArchCalibration& d = m->For("default");
  EXPECT_DOUBLE_EQ(d.GroupedGemmSlowdownIn(Precision::kFp8, 256, "Y"), 2.0);
  EXPECT_DOUBLE_EQ(d.GroupedGemmSlowdownIn(Precision::kBf16, 256, "Y"), 1.5);
  EXPECT_DOUBLE_EQ(d.GroupedGemmSlowdownIn(Precision::kFp16, 256, "X"), 1.25);
  EXPECT_DOUBLE_EQ(d.GroupedGemmSlowdownIn(Precision::kFp4, 256, "X"), 1.0);
}

}  // namespace
}  // namespace ndt
