// Tests for parallel/variability.h: the expected maximum of normal draws against published
// tables, the truncated case against its hand-derived limit, the straggler seconds on a hand-made
// breakdown, and the data file's strict reading.
#include "parallel/variability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ndt {
namespace {

// E[max of n iid N(0,1)], untruncated: closed forms for n = 2..4 (n = 2: E|X - Y| / 2 =
// 1/sqrt(pi); n = 3: 3 / (2 sqrt(pi)); n = 4: (3 / sqrt(pi)) (1/2 + asin(1/3) / pi)) and the
// tables of expected normal order statistics (Teichroew 1956; Harter 1961) for 5, 10, 100.
TEST(ExpectedMaxNormal, MatchesTablesUntruncated) {
  const double pi = std::acos(-1.0);
  EXPECT_NEAR(ExpectedMaxNormal(2, 0), 1 / std::sqrt(pi), 1e-6);        // 0.56419
  EXPECT_NEAR(ExpectedMaxNormal(3, 0), 3 / (2 * std::sqrt(pi)), 1e-6);  // 0.84628
  EXPECT_NEAR(ExpectedMaxNormal(4, 0), 3 / std::sqrt(pi) * (0.5 + std::asin(1.0 / 3) / pi),
              1e-6);  // 1.02938
  EXPECT_NEAR(ExpectedMaxNormal(5, 0), 1.16296, 1e-5);
  EXPECT_NEAR(ExpectedMaxNormal(10, 0), 1.53875, 1e-5);
  EXPECT_NEAR(ExpectedMaxNormal(100, 0), 2.50759, 1e-5);
}

TEST(ExpectedMaxNormal, OneDrawIsTheMean) {
  EXPECT_EQ(ExpectedMaxNormal(1, 0), 0.0);
  EXPECT_EQ(ExpectedMaxNormal(1, kTukeyFenceSigmas), 0.0);
}

// Truncated at the fences c: below the untruncated value, rising with n, and for large n close
// to c by the first-order gap integral_0^inf exp(-n phi(c) u / mass) du = mass / (n phi(c)),
// with phi(c) = 0.0104785 and mass = Phi(c) - Phi(-c) = 0.993023 at c = 2.697959:
// n = 16384: 2.697959 - 0.005784 = 2.692175 (the second-order term is under 1e-4 there).
TEST(ExpectedMaxNormal, TruncatedAtTheFences) {
  const double c = kTukeyFenceSigmas;
  double last = 0;
  for (int n : {2, 8, 64, 512, 3072, 16384}) {
    const double e = ExpectedMaxNormal(n, c);
    EXPECT_LT(e, ExpectedMaxNormal(n, 0)) << n;
    EXPECT_GT(e, last) << n;
    EXPECT_LT(e, c) << n;
    last = e;
  }
  EXPECT_NEAR(ExpectedMaxNormal(16384, c), 2.692175, 2e-4);
  // A truncation far out in the tail is no truncation.
  EXPECT_NEAR(ExpectedMaxNormal(10, 12.0), ExpectedMaxNormal(10, 0), 1e-9);
}

TEST(ExpectedMaxNormal, Deterministic) {
  EXPECT_EQ(ExpectedMaxNormal(777, kTukeyFenceSigmas), ExpectedMaxNormal(777, kTukeyFenceSigmas));
}

// Sinha's variability V is the fence range 2 c sigma: V = 8% gives sigma = 0.08 / 5.395918 =
// 1.48260%, and the slowest of 16,384 GPUs 1.48260% x 2.692175 = 3.9914% behind the median.
TEST(StragglerFraction, SigmaFromTheFenceRange) {
  GpuVariability v;
  v.variability = 0.08;
  EXPECT_NEAR(v.sigma(), 0.0148260, 1e-7);
  EXPECT_NEAR(StragglerFraction(v, 16384), 0.039914, 5e-6);
  EXPECT_EQ(StragglerFraction(v, 1), 0.0);
  EXPECT_EQ(StragglerFraction(GpuVariability{}, 16384), 0.0);
}

// compute 10 s, TP 2 s, bubble 3 s: the bubble's kernels are 3 x 10 / 12 = 2.5 s, the critical
// path's 12.5 s; at 4% the straggler is 0.5 s.
TEST(StragglerSeconds, KernelsOfTheCriticalPath) {
  TimeBreakdown bd;
  bd.compute_s = 10;
  bd.tp_comm_s = 2;
  bd.pp_bubble_s = 3;
  bd.dp_comm_s = 7;  // not scaled: communication after the pipeline
  EXPECT_NEAR(StragglerSeconds(bd, 0.04), 0.5, 1e-12);
  EXPECT_EQ(StragglerSeconds(bd, 0), 0.0);
  EXPECT_EQ(StragglerSeconds(TimeBreakdown{}, 0.04), 0.0);
}

TEST(ApplyStraggler, AddsToTheStepAndTheBreakdown) {
  TrainSimResult r;
  r.step_time_s = 20;
  r.breakdown.compute_s = 10;
  r.breakdown.tp_comm_s = 2;
  r.breakdown.pp_bubble_s = 3;
  TrainSimResult off = r;
  GpuVariability v;
  v.variability = 0.08;
  ApplyStraggler(v, 16384, &r);
  // 12.5 s of kernels x 3.9914%.
  EXPECT_NEAR(r.breakdown.straggler_s, 12.5 * 0.039914, 1e-4);
  EXPECT_NEAR(r.step_time_s, 20 + 12.5 * 0.039914, 1e-4);
  ApplyStraggler(GpuVariability{}, 16384, &off);
  EXPECT_EQ(off.step_time_s, 20.0);
  EXPECT_EQ(off.breakdown.straggler_s, 0.0);
}

TEST(GpuVariabilityFile, ParsesAndLooksUpByArch) {
  const std::string text = R"(archs:
  - arch: "hopper"
    variability: {value: 0.05, source: "test"}
    basis: "measured"
evidence:
  - {name: "n", finding: "f", used: "no"}
)";
  StatusOr<GpuVariabilityTable> t = ParseGpuVariability(text, "t.yaml");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->For("hopper").variability, 0.05);
  EXPECT_EQ(t->For("hopper").basis, "measured");
  EXPECT_EQ(t->For("ampere").variability, 0.0);  // no entry: no spread
}

TEST(GpuVariabilityFile, RejectsBadEntries) {
  auto err = [](const std::string& text) {
    StatusOr<GpuVariabilityTable> t = ParseGpuVariability(text, "t.yaml");
    return t.ok() ? std::string() : t.status().message();
  };
  const std::string entry = "  - arch: \"hopper\"\n    basis: \"b\"\n";
  EXPECT_NE(err("archs:\n" + entry + "    variability: {value: 1.5, source: \"s\"}\n")
                .find("variability"),
            std::string::npos);
  EXPECT_NE(
      err("archs:\n" + entry + "    variability: {value: 0.08, source: \"\"}\n").find("source"),
      std::string::npos);
  EXPECT_NE(err("archs:\n" + entry + "    variability: {value: 0.08, source: \"s\"}\n" + entry +
                "    variability: {value: 0.08, source: \"s\"}\n")
                .find("twice"),
            std::string::npos);
  EXPECT_NE(
      err("archs:\n" + entry + "    variability: {value: 0.08, source: \"s\"}\n    bogus_key: 1\n")
          .find("bogus_key"),
      std::string::npos);
  EXPECT_NE(err("archs: []\n").find("archs"), std::string::npos);
}

// The shipped file: every architecture of the catalog has an entry, each with its source.
TEST(GpuVariabilityFile, ShippedDataLoads) {
  StatusOr<GpuVariabilityTable> t = LoadGpuVariability(NDT_DATA_DIR);
  ASSERT_TRUE(t.ok()) << t.status().message();
  for (const char* arch : {"pascal", "volta", "ampere", "hopper", "blackwell", "blackwell_ultra"}) {
    EXPECT_GT(t->For(arch).variability, 0) << arch;
    EXPECT_FALSE(t->For(arch).basis.empty()) << arch;
  }
}

}  // namespace
}  // namespace ndt
