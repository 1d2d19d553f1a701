#include "compute/compute.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "compute/testing.h"
#include "hw/catalog.h"
#include "model/ops.h"

namespace ndt {
namespace {

using namespace compute_testing;

// 4096^3 fp16 on A100-SXM4-80GB (108 SMs, 312 TFLOP/s, ampere fit 0.84, 1.75 us + 2 us/wave; 1024
// tiles > 108 SMs: no split-K): tiles 32*32 = 1024, waves ceil(1024/108) = 10, per wave
// 108*128*128*2*4096/(312e12*0.84) = 55.31 us + 2 us; 10 waves = 573.1 us, + 1.75 us launch = 574.9
// us (memory: 100 MB, 61 us).
TEST(Gemm, HandDerivedA100Example) {
  const double t = OpTime(Gpu("A100-SXM4-80GB"), Gemm(4096, 4096, 4096, Dtype::kFp16), Cal());
  const double wave = 108.0 * 128 * 128 * 2 * 4096 / (312e12 * 0.84) + 2e-6;
  EXPECT_NEAR(t, 10 * wave + 1.75e-6, 1e-9);
}

TEST(Roofline, TinyFlopIsMemoryBound) {
  const GpuSpec g = Synthetic();
  Op op;
  op.kind = OpKind::kElementwise;
  op.flop = 1e6;
  op.bytes = 1e9;
  const OpTiming t = OpTimeDetail(g, op, Cal());
  EXPECT_TRUE(t.memory_bound);
  const ArchCalibration& a = Cal().For("ampere");
  EXPECT_NEAR(t.time_s, 1e9 / (1e12 * a.hbm_fraction) + a.kernel_overhead_s, 1e-12);
}

TEST(Roofline, HugeGemmReachesTheCalibratedFraction) {
  const GpuSpec g = Synthetic();
  // m = n = 128 * 100 * 8: exactly 6400 tiles = 64 full waves of 100 SMs, no padding.
  const int64_t n = 128 * 80;
  const double eff = GemmEfficiency(g, n, n, 16384, 1, Precision::kBf16, Cal());
  const GemmFit& f = Cal().For("ampere").GemmFor(Precision::kBf16);
  // Only the per-wave overhead separates it from the fraction: under 1% here.
  EXPECT_LT(eff, f.fraction);
  EXPECT_GT(eff, 0.99 * f.fraction);
}

TEST(Gemm, WaveQuantizationStep) {
  const GpuSpec g = Synthetic();
  // 100 tiles of 128x128 fill one wave of 100 SMs; 101 tiles need two.
  const double one = OpTime(g, Gemm(128 * 100, 128, 4096), Cal());
  const double two = OpTime(g, Gemm(128 * 101, 128, 4096), Cal());
  const double launch = Cal().For("ampere").GemmFor(Precision::kBf16).launch_s;
  EXPECT_NEAR((two - launch) / (one - launch), 2.0, 1e-9);
  // Rows inside the same tile cost nothing more.
  EXPECT_DOUBLE_EQ(OpTime(g, Gemm(128 * 100 - 5, 128, 4096), Cal()), one);
}

// Skinny GEMM on the synthetic GPU: m = 128, n = 1280, k = 8192 -> 1 x 10 tiles of 128x128 on
// 100 SMs, so K splits 10 ways (8192 / 256 = 32 allows it): one wave of 100 units of k = 819.2
// each: 100*128*128*2*819.2 / (100e12 * 0.84) + 2 us, plus 1.75 us launch. With m = 64 (under
// the 128-row tile) the 64-row small-M tile runs instead: 1 x 10 tiles of 64x128, the same 10-way
// split, 100*64*128*2*819.2 / (100e12 * 0.84) + 2 us (the 32-row tile ties: 2 x 10 tiles split 5
// ways, 32 x 1638.4 = 64 x 819.2; the 16-row tile's 40 tiles split 2 ways cost 16 x 4096: more).
TEST(Gemm, SkinnyGemmSplitsK) {
  const GpuSpec g = Synthetic();
  const OpTiming t = OpTimeDetail(g, Gemm(128, 1280, 8192), Cal());
  EXPECT_NEAR(t.compute_s, 100 * 128 * 128 * 2 * 819.2 / (100e12 * 0.84) + 2e-6, 1e-12);
  EXPECT_NEAR(t.time_s, std::max(t.compute_s, t.memory_s) + 1.75e-6, 1e-12);
  const OpTiming small = OpTimeDetail(g, Gemm(64, 1280, 8192), Cal());
  EXPECT_NEAR(small.compute_s, 100 * 64 * 128 * 2 * 819.2 / (100e12 * 0.84) + 2e-6, 1e-12);
}

// Batch-1 decode: Llama-2-70B's gate_up projection under TP 8 (m = 1 token, n = 2 x 28672 / 8 =
// 7168, k = 8192), bf16 on A100-SXM4-80GB (108 SMs, 312 TFLOP/s, fit 0.84, 1.75 us launch + 2 us
// per wave, 2039 GB/s x STREAM 0.8117):
// - small-M tile 16 x 128: 1 x 56 tiles, split-K min(108 div 56, 8192 div 256) = 1, one wave:
//   108*16*128*2*8192 / (312e12*0.84) = 13.82 us + 2 us = 15.82 us of tensor work;
// - weights 2 x (1 x 8192 + 8192 x 7168 + 1 x 7168) = 117,471,232 B / (2039e9 x 0.8117) = 70.98 us,
//   the larger: 70.98 + 1.75 = 72.73 us (weight-streaming speed, 1.62 TB/s of weights);
// - the 128-row tile alone (what the model charged before small_m_gemm): 56 tiles in one wave of
//   108*128*128*2*8192 / (312e12*0.84) = 110.6 us + 2 us, above the weights' 71 us.
// The transposed GEMM (the token on the N side) takes the same time.
TEST(Gemm, OneRowGemmOnA100StreamsItsWeights) {
  const GpuSpec a100 = Gpu("A100-SXM4-80GB");
  const OpTiming t = OpTimeDetail(a100, Gemm(1, 7168, 8192), Cal());
  const double tensor = 108.0 * 16 * 128 * 2 * 8192 / (312e12 * 0.84) + 2e-6;
  const double weights = 2.0 * (8192 + 8192.0 * 7168 + 7168) / (2039e9 * 0.8117);
  EXPECT_NEAR(t.compute_s, tensor, 1e-12);
  EXPECT_NEAR(t.memory_s, weights, 1e-12);
  EXPECT_TRUE(t.memory_bound);
  EXPECT_NEAR(t.time_s, weights + 1.75e-6, 1e-12);
  EXPECT_NEAR(t.time_s, 72.73e-6, 0.01e-6);
  EXPECT_DOUBLE_EQ(OpTime(a100, Gemm(7168, 1, 8192), Cal()), t.time_s);
  ComputeCalibration one_tile = Cal();
  one_tile.archs.at("ampere").small_m_tiles.clear();
  const double old_tensor = 108.0 * 128 * 128 * 2 * 8192 / (312e12 * 0.84) + 2e-6;
  EXPECT_NEAR(OpTimeDetail(a100, Gemm(1, 7168, 8192), one_tile).compute_s, old_tensor, 1e-12);
}

// A GEMM with both sides >= the 128-row tile never tries the small-M tiles: the microbenchmark
// shapes (and training's) keep their time exactly (4096^3: HandDerivedA100Example's 574.9 us; m
// = 128: one 128-row tile, which is where the small tiles stop).
TEST(Gemm, LargeGemmIgnoresSmallMTiles) {
  const GpuSpec a100 = Gpu("A100-SXM4-80GB");
  ComputeCalibration one_tile = Cal();
  one_tile.archs.at("ampere").small_m_tiles.clear();
  for (const Op& op : {Gemm(4096, 4096, 4096), Gemm(128, 7168, 8192), Gemm(7168, 128, 8192),
                       Gemm(802816, 192, 768), Gemm(1024, 2145, 1024)}) {
    EXPECT_DOUBLE_EQ(OpTime(a100, op, Cal()), OpTime(a100, op, one_tile)) << op.m << "x" << op.n;
  }
  EXPECT_LT(OpTime(a100, Gemm(127, 7168, 8192), Cal()),
            OpTime(a100, Gemm(127, 7168, 8192), one_tile));
}

TEST(Roofline, MoreBandwidthOrPeakIsNeverSlower) {
  StatusOr<TransformerSpec> llama = LoadModel("llama2-70b", ModelsDir(""));
  ASSERT_TRUE(llama.ok());
  OpShape shape;
  shape.micro_batch = 1;
  shape.seq_len = 4096;
  shape.tp = 8;
  std::vector<Op> ops = LayerForwardOps(*llama, 0, shape);
  for (const Op& b : LayerBackwardOps(*llama, 0, shape)) ops.push_back(b);
  for (const Op& d : LayerTokenOps(*llama, 0, 16, shape)) ops.push_back(d);
  ops.push_back(AttentionCoreOp(*llama, 16, 1, 2000, true, shape));
  const GpuSpec base = Gpu("H100-SXM5-80GB");
  for (const Op& op : ops) {
    GpuSpec more_bw = base, more_peak = base;
    more_bw.memory_Bps *= 1.5;
    more_peak.bf16_flops *= 1.5;
    more_peak.fp16_flops *= 1.5;
    more_peak.fp8_flops *= 1.5;
    const double t = OpTime(base, op, Cal());
    EXPECT_LE(OpTime(more_bw, op, Cal()), t) << op.name;
    EXPECT_LE(OpTime(more_peak, op, Cal()), t) << op.name;
    EXPECT_GT(t, 0) << op.name;
  }
}

TEST(Precision, UnsupportedFormatsRunAtTheNextWiderRate) {
  const GpuSpec a100 = Gpu("A100-SXM4-80GB");
  const Precision p = EffectivePrecision(a100, Dtype::kFp8);
  EXPECT_TRUE(p == Precision::kFp16 || p == Precision::kBf16);
  EXPECT_EQ(EffectivePrecision(Gpu("H100-SXM5-80GB"), Dtype::kFp4), Precision::kFp8);
  EXPECT_EQ(EffectivePrecision(Gpu("GB200"), Dtype::kFp4), Precision::kFp4);
  EXPECT_EQ(EffectivePrecision(Gpu("V100-SXM2-32GB"), Dtype::kBf16), Precision::kFp16);
  EXPECT_EQ(PrecisionNote(Gpu("A100-SXM4-80GB"), Dtype::kFp4),
            "A100-SXM4-80GB has no fp4 tensor cores: the GEMMs run in bf16 (weight-only "
            "quantization: fp4 storage)");
  EXPECT_EQ(PrecisionNote(Gpu("V100-SXM2-32GB"), Dtype::kBf16),
            "V100-SXM2-32GB has no bf16 tensor cores: the GEMMs run in fp16");
  EXPECT_EQ(PrecisionNote(Gpu("GB200"), Dtype::kFp4), "");
}

// GB300 has no microbench rows: Blackwell's fit on GB300's own peaks. Its fp4 peak is 1.5x
// GB200's, so a large fp4 GEMM is faster on GB300 by about that ratio (SMs 160 vs 148 aside).
TEST(Calibration, BlackwellUltraFollowsBlackwell) {
  const ArchCalibration& u = Cal().For("blackwell_ultra");
  const ArchCalibration& b = Cal().For("blackwell");
  EXPECT_EQ(u.fallback, "blackwell");
  EXPECT_DOUBLE_EQ(u.GemmFor(Precision::kFp4).fraction, b.GemmFor(Precision::kFp4).fraction);
  const double f200 = GemmFlops(Gpu("GB200"), 16384, 16384, 16384, Precision::kFp4, Cal());
  const double f300 = GemmFlops(Gpu("GB300"), 16384, 16384, 16384, Precision::kFp4, Cal());
  EXPECT_GT(f300 / f200, 1.3);
  EXPECT_LT(f300 / f200, 1.55);
  EXPECT_EQ(&Cal().For("some-future-arch"), &Cal().For("default"));
}

// fused_attention_ratio (compute.h AttentionRateRatio) is a fallback arch's own: carried through
// the fallback's resolution, At(B) = gpu.Rate(B) / fallback.Rate(B). Here gpu 0.8 x B / (B + 2),
// fallback 0.5 x B / (B + 4): At(4) = (0.8 x 4 / 6) / (0.5 x 4 / 8) = 0.533333 / 0.25 = 2.133333;
// At(0) (no shape) = 0.8 / 0.5 = 1.6. The fitted arch itself may not state one (an unknown key),
// nor a fraction outside (0, 1].
TEST(Calibration, FusedAttentionRatioBelongsToFallbackArchs) {
  const std::string fit =
      "    tile: [128, 128]\n    gemm: {fp16: {fraction: 0.8, launch: 1 us, wave_overhead: 1 "
      "us, residuals: r}}\n    attention_fraction: 0.5\n    hbm_fraction: 0.9\n"
      "    unfused_attention_efficiency: 0.7\n    kernel_overhead: 2 us\n    how: h\n";
  auto ratio = [](const std::string& fraction) {
    return "    fused_attention_ratio:\n      forward: {fraction: " + fraction +
           ", overhead_blocks: 2, fallback_fraction: 0.5, fallback_overhead_blocks: 4}\n"
           "      backward: {fraction: 0.6, overhead_blocks: 0, fallback_fraction: 0.6, "
           "fallback_overhead_blocks: 0}\n      unit: u\n      source: s\n      residuals: r\n"
           "      how: h\n";
  };
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(
      "how: x\narchs:\n  - arch: a\n" + fit + "  - arch: b\n    fallback: a\n" + ratio("0.8") +
          "    how: y\n  - arch: default\n    fallback: a\n    how: z\n",
      "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->For("b").fused_attention_ratio_forward.has_value());
  EXPECT_NEAR(c->For("b").fused_attention_ratio_forward->At(4), 2.133333, 1e-6);
  EXPECT_DOUBLE_EQ(c->For("b").fused_attention_ratio_forward->At(0), 1.6);
  EXPECT_DOUBLE_EQ(c->For("b").fused_attention_ratio_backward->At(7), 1.0);
  EXPECT_FALSE(c->For("a").fused_attention_ratio_forward.has_value());
  EXPECT_FALSE(c->For("default").fused_attention_ratio_forward.has_value());
  StatusOr<ComputeCalibration> own =
      ParseComputeCalibration("how: x\narchs:\n  - arch: default\n" + fit + ratio("0.8"), "c.yaml");
  EXPECT_FALSE(own.ok());
  StatusOr<ComputeCalibration> bad = ParseComputeCalibration(
      "how: x\narchs:\n  - arch: a\n" + fit + "  - arch: default\n    fallback: a\n" +
          ratio("1.5") + "    how: z\n",
      "c.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fraction"), std::string::npos) << bad.status().message();
}

// serving_caveat is optional: Blackwell states one, GB300 (a fallback) inherits it, Hopper has
// none; a fallback that states its own keeps it.
TEST(Calibration, ServingCaveatIsInheritedByFallbacks) {
  EXPECT_NE(Cal().For("blackwell").serving_caveat.find("fitted"), std::string::npos);
  EXPECT_EQ(Cal().For("blackwell_ultra").serving_caveat, Cal().For("blackwell").serving_caveat);
  EXPECT_EQ(Cal().For("hopper").serving_caveat, "");
  const std::string fit =
      "    tile: [128, 128]\n    gemm: {fp16: {fraction: 0.8, launch: 1 us, wave_overhead: 1 "
      "us, residuals: r}}\n    attention_fraction: 0.5\n    hbm_fraction: 0.9\n"
      "    unfused_attention_efficiency: 0.7\n    kernel_overhead: 2 us\n    how: h\n";
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(
      "how: x\narchs:\n  - arch: a\n    serving_caveat: from a\n" + fit +
          "  - arch: b\n    fallback: a\n    how: y\n"
          "  - arch: default\n    fallback: a\n    serving_caveat: own\n    how: z\n",
      "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->For("b").serving_caveat, "from a");
  EXPECT_EQ(c->For("default").serving_caveat, "own");
}

// ServingCalibration swaps in the serving GEMM fraction, attention fraction and attention memory
// fraction; the microbenchmark fit is untouched without it, and applying it twice changes
// nothing. On the synthetic GPU (100 SMs, 100 TFLOP/s fp16, 1 TB/s), 128x128 tiles:
//  - GEMM 12800 x 1280 x 4096: 100 x 10 = 1000 tiles = 10 waves of 128*128*2*4096 = 134.2 MFLOP
//    per SM; at 0.8 x 1 TFLOP/s per SM = 167.8 us per wave -> 1.678 ms; at 0.4 -> 3.355 ms.
//  - attention op of 1e9 bytes and 1e9 FLOP: memory 1e9 / (1e12 x 0.8) = 1.25 ms, compute
//    1e9 / (100e12 x 0.5) = 20 us -> 1.25 ms + 2 us; serving: 1e9 / (1e12 x 0.5) = 2 ms + 2 us.
//  - an element-wise op of 1e9 bytes stays at the STREAM fraction: 1.25 ms + 2 us.
TEST(Calibration, ServingFitSwapsGemmAndAttentionFractions) {
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(OneArch(kServing), "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const ArchCalibration& a = c->For("default");
  ASSERT_TRUE(a.serving.has_value());
  EXPECT_DOUBLE_EQ(a.serving->iteration_overhead_s, 3e-3);
  EXPECT_DOUBLE_EQ(a.serving->overhead_per_seq_s, 10e-6);
  const ComputeCalibration s = ServingCalibration(*c);
  const GpuSpec g = Synthetic();
  const Op gemm = Gemm(12800, 1280, 4096);
  EXPECT_NEAR(OpTime(g, gemm, *c), 1.6777e-3, 1e-7);
  EXPECT_NEAR(OpTime(g, gemm, s), 3.3554e-3, 1e-7);
  Op attn;
  attn.kind = OpKind::kAttention;
  attn.flop = 1e9;
  attn.bytes = 1e9;
  attn.math = Dtype::kBf16;
  EXPECT_NEAR(OpTime(g, attn, *c), 1.25e-3 + 2e-6, 1e-12);
  EXPECT_NEAR(OpTime(g, attn, s), 2e-3 + 2e-6, 1e-12);
  Op elem;
  elem.kind = OpKind::kElementwise;
  elem.bytes = 1e9;
  elem.math = Dtype::kBf16;
  EXPECT_NEAR(OpTime(g, elem, s), 1.25e-3 + 2e-6, 1e-12);
  const ComputeCalibration twice = ServingCalibration(s);
  EXPECT_DOUBLE_EQ(OpTime(g, gemm, twice), OpTime(g, gemm, s));
  EXPECT_DOUBLE_EQ(OpTime(g, attn, twice), OpTime(g, attn, s));
  StatusOr<ComputeCalibration> plain = ParseComputeCalibration(OneArch(""), "c.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->For("default").serving.has_value());
  EXPECT_DOUBLE_EQ(OpTime(g, gemm, ServingCalibration(*plain)), OpTime(g, gemm, *plain));
}

// The committed fit: Blackwell and Hopper have a serving block, GB300 inherits Blackwell's, and a
// large fp4 GEMM on GB200 (wave overhead 0 in the fp4 fit) slows by exactly the ratio of the two
// fractions.
TEST(Calibration, CommittedServingFit) {
  const ArchCalibration& b = Cal().For("blackwell");
  ASSERT_TRUE(b.serving.has_value());
  ASSERT_TRUE(Cal().For("hopper").serving.has_value());
  ASSERT_TRUE(Cal().For("blackwell_ultra").serving.has_value());
  EXPECT_EQ(Cal().For("blackwell_ultra").serving->gemm_fraction, b.serving->gemm_fraction);
  const ComputeCalibration s = ServingCalibration(Cal());
  const GpuSpec gb200 = Gpu("GB200");
  const double micro = GemmEfficiency(gb200, 16384, 16384, 16384, 1, Precision::kFp4, Cal());
  const double serve = GemmEfficiency(gb200, 16384, 16384, 16384, 1, Precision::kFp4, s);
  EXPECT_NEAR(serve / micro,
              b.serving->gemm_fraction.at(Precision::kFp4) / b.GemmFor(Precision::kFp4).fraction,
              1e-9);
}

TEST(Calibration, ServingBlockErrors) {
  auto err = [](const std::string& serving) {
    StatusOr<ComputeCalibration> c = ParseComputeCalibration(OneArch(serving), "c.yaml");
    return c.ok() ? std::string("ok") : c.status().message();
  };
  std::string s = kServing;
  EXPECT_NE(err(std::string(s).replace(s.find("fp16: 0.4"), 9, "fp16: 1.5"))
                .find("gemm_fraction.fp16: must be in (0, 1]"),
            std::string::npos)
      << err(std::string(s).replace(s.find("fp16: 0.4"), 9, "fp16: 1.5"));
  EXPECT_NE(err(std::string(s).replace(s.find("fp16: 0.4"), 9, "fp4: 0.4"))
                .find("no microbenchmark GEMM fit"),
            std::string::npos);
  EXPECT_NE(err(std::string(s).replace(s.find("fp16: 0.4"), 9, "xyz: 0.4")).find("not a precision"),
            std::string::npos);
  EXPECT_NE(err(std::string(s).replace(s.find("0.5\n"), 3, "0.0"))
                .find("attention_hbm_fraction: must be in (0, 1]"),
            std::string::npos);
  const std::string negative = err(std::string(s).replace(s.find("10 us"), 5, "-1 us"));
  EXPECT_NE(negative.find("overhead_per_seq"), std::string::npos) << negative;
}

// small_m_gemm loads its rows, rejects a tile not under tile_m, and a serving fit (fitted on one
// tile shape) clears it, as it clears more_tiles: on the synthetic GPU a 1 x 1280 x 8192 GEMM's
// tensor work is 100*16*128*2*819.2 / (100e12 x 0.8) + 0 us = 4.19 us with the 16-row tile (10
// tiles split 10 ways) and 100*128*128*2*819.2 / (100e12 x 0.4) = 67.1 us with the 128-row tile
// at the serving fraction.
TEST(Calibration, SmallMTilesLoadAndServingClearsThem) {
  const std::string small = "    small_m_gemm: {tiles_m: [16, 64], source: s}\n";
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(OneArch(small + kServing), "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->For("default").small_m_tiles, (std::vector<int>{16, 64}));
  const ComputeCalibration s = ServingCalibration(*c);
  EXPECT_TRUE(s.For("default").small_m_tiles.empty());
  const GpuSpec g = Synthetic();
  EXPECT_NEAR(OpTimeDetail(g, Gemm(1, 1280, 8192), *c).compute_s,
              100.0 * 16 * 128 * 2 * 819.2 / (100e12 * 0.8), 1e-12);
  EXPECT_NEAR(OpTimeDetail(g, Gemm(1, 1280, 8192), s).compute_s,
              100.0 * 128 * 128 * 2 * 819.2 / (100e12 * 0.4), 1e-12);
  StatusOr<ComputeCalibration> bad = ParseComputeCalibration(
      OneArch("    small_m_gemm: {tiles_m: [16, 128], source: s}\n"), "c.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("between 1 and the arch's tile_m - 1 (127)"),
            std::string::npos)
      << bad.status().message();
}

TEST(Calibration, StrictLoaderRejectsUnknownKeysAndMissingDefault) {
  StatusOr<ComputeCalibration> c = ParseComputeCalibration(
      "how: x\narchs:\n  - arch: default\n    fallback: ampere\n    how: y\n    speed: 3\n",
      "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("speed: unknown key"), std::string::npos);
  c = ParseComputeCalibration(
      "how: x\narchs:\n  - arch: a\n    tile: [128, 128]\n    gemm: {fp16: {fraction: 0.8, "
      "launch: 1 us, wave_overhead: 1 us, residuals: r}}\n    attention_fraction: 0.5\n"
      "    hbm_fraction: 0.9\n    unfused_attention_efficiency: 0.7\n    kernel_overhead: 2 us\n"
      "    how: h\n",
      "c.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "c.yaml: needs an arch 'default' entry");
}

// The 'Standard attention (PyTorch)' row on A100 (46.0 TFLOP/s): flash-attention's benchmark,
// batch 2, seq 8192, head_dim 64, 32 heads, non-causal, no dropout, forward + backward credited
// 3.5 x 4 b s^2 h d FLOPs. Its unfused ops (softmax, QK^T, PV and their gradients) at the fitted
// unfused_attention_efficiency reproduce it (the efficiency is fitted on this row alone).
TEST(Microbench, UnfusedAttentionReproducesStandardAttentionRow) {
  TransformerSpec m;
  m.hidden = 2048;
  m.heads = m.kv_heads = 32;
  m.head_dim = 64;
  m.learned_positions = true;
  OpShape shape;
  shape.micro_batch = 2;
  shape.seq_len = 8192;
  shape.fused_attention = false;
  shape.math = Dtype::kFp16;
  std::vector<Op> core;
  for (const Op& o : LayerForwardOps(m, 0, shape)) {
    if (IsAttentionCore(o) && o.name != "attn_dropout") core.push_back(o);
  }
  ASSERT_EQ(core.size(), 3u);
  const std::vector<Op> bwd = BackwardOps(core);
  core.insert(core.end(), bwd.begin(), bwd.end());
  const double flop = 3.5 * 4 * 2 * 8192.0 * 8192.0 * 32 * 64;
  const double tflops = flop / OpsTime(Gpu("A100-SXM4-80GB"), core, Cal()) / 1e12;
  EXPECT_NEAR(tflops, 46.0, 0.5);
}

// Every calibration row of microbench.csv, re-predicted through the public API. The fit's
// residuals (also in compute.yaml): all GEMM rows within 22%, HBM and FlashAttention rows
// within 4% (STREAM Copy/Mul vs Add/Triad differ by 5%; one fraction per GPU).
TEST(Microbench, ResidualsStayWithinTheFit) {
  const std::map<std::string, std::string> gpu_of = {
      {"ND A100 v4 (A100-SXM4-80GB)", "A100-SXM4-80GB"},
      {"ND H100 v5", "H100-SXM5-80GB"},
      {"ND H200 v5", "H200-141GB"},
      {"ND GB200 v6", "GB200"}};
  std::ifstream in(std::string(NDT_SHARED_DIR) + "/validation/calibration/microbench.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);
  int gemm_rows = 0;
  double worst = 0;
  while (std::getline(in, line)) {
    // system,benchmark,parameter,value,... (benchmark and parameter may be quoted).
    std::vector<std::string> f;
    std::string cur;
    bool q = false;
    for (char ch : line) {
      if (ch == '"') {
        q = !q;
      } else if (ch == ',' && !q) {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    f.push_back(cur);
    if (f.size() < 4 || !gpu_of.count(f[0])) continue;
    const GpuSpec g = Gpu(gpu_of.at(f[0]));
    const double measured = std::stod(f[3]) * 1e12;
    double predicted = 0;
    if (f[1].rfind("GEMM", 0) == 0 && f[2].find("m x n x k") != std::string::npos) {
      int64_t m, n, k;
      ASSERT_EQ(std::sscanf(f[2].c_str(), "m x n x k = %ldx%ldx%ld", &m, &n, &k), 3);
      const Precision p = f[1].find("FP16") != std::string::npos  ? Precision::kFp16
                          : f[1].find("FP8") != std::string::npos ? Precision::kFp8
                                                                  : Precision::kFp4;
      predicted = GemmFlops(g, m, n, k, p, Cal());
      ++gemm_rows;
    } else if (f[1].rfind("HBM", 0) == 0 && f[2] != "Dot") {  // STREAM and GB200's row
      Op copy;                                                // 4 GB copied
      copy.kind = OpKind::kElementwise;
      copy.bytes = 4e9;
      predicted = copy.bytes / (OpTime(g, copy, Cal()) - Cal().For(g.arch).kernel_overhead_s);
    } else if (f[1].rfind("attention", 0) == 0 && f[2].rfind("FlashAttention", 0) == 0) {
      const int64_t hd = f[2].find("head_dim 64") != std::string::npos ? 64 : 128;
      Op a;  // batch 2, seq 8192, hidden 2048, non-causal: 4 b s^2 h_total flop
      a.kind = OpKind::kAttention;
      a.flop = 4.0 * 2 * 8192.0 * 8192.0 * 2048;
      a.bytes = 4 * 2 * 8192.0 * 2048 * 2;
      a.heads = 2048 / hd;
      predicted = a.flop / OpTime(g, a, Cal());
    } else {
      continue;
    }
    const double err = predicted / measured - 1;
    std::printf("%-30s %-45s %-22s measured %8.1f predicted %8.1f %+6.1f%%\n", f[0].c_str(),
                f[1].substr(0, 45).c_str(), f[2].substr(0, 22).c_str(), measured / 1e12,
                predicted / 1e12, 100 * err);
    worst = std::max(worst, std::fabs(err));
    if (f[1].rfind("GEMM", 0) == 0) {
      EXPECT_LT(std::fabs(err), 0.22) << line;
    } else {
      EXPECT_LT(std::fabs(err), 0.06) << line;
    }
  }
  EXPECT_EQ(gemm_rows, 43);
}

// The GB200 fp4 microbenchmark row 802816x192x768 (measured 2216.7 TFLOP/s) is memory bound once
// NVFP4's block scales are counted: bytes = (m k + k n) x (0.5 + 1/16) + m n x 2 = 655.18 MB,
// / (8000 GB/s x 0.9187) = 89.15 us > compute 41.07 us (tiles 6272 x 1 -> 43 waves of
// 148 x 128 x 256 x 2 x 768 / (10 PF x 0.78) = 0.955 us), + 7.25 us launch = 96.40 us
// -> 2 x 802816 x 192 x 768 / 96.40 us = 2456.1 TFLOP/s (+10.8%; without the scales 2597, +17.2%).
TEST(Gemm, Nvfp4ScalesInTheMemoryRoofline) {
  const double f = GemmFlops(Gpu("GB200"), 802816, 192, 768, Precision::kFp4, Cal());
  EXPECT_NEAR(f / 1e12, 2456.1, 1.0);
}

}  // namespace
}  // namespace ndt
