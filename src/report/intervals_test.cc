#include "report/intervals.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ndt {
namespace {

TEST(Quantile, LinearInterpolationBetweenOrderStatistics) {
  // Sorted {1,2,3,4,5}, n = 5. p10: h = 4 * 0.1 = 0.4 -> 1 + 0.4 * (2 - 1) = 1.4.
  // p90: h = 4 * 0.9 = 3.6 -> 4 + 0.6 * (5 - 4) = 4.6. p50: h = 2 -> 3. The input order does
  // not matter.
  const std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(Quantile(v, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 3);
  EXPECT_DOUBLE_EQ(Quantile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Quantile(v, 1), 5);
  // Two values {0.9, 1.1}: p10 h = 0.1 -> 0.9 + 0.1 * 0.2 = 0.92; p90 h = 0.9 -> 1.08.
  EXPECT_DOUBLE_EQ(Quantile({1.1, 0.9}, 0.1), 0.92);
  EXPECT_DOUBLE_EQ(Quantile({1.1, 0.9}, 0.9), 1.08);
  EXPECT_DOUBLE_EQ(Quantile({2}, 0.1), 2);
}

TEST(Intervals, RateAndTimeBounds) {
  // A rate scales with measured/predicted; a time (1 / rate) with its inverse:
  // p10 0.8, p90 1.25: rate 100 -> [80, 125]; time 10 s -> [10 / 1.25, 10 / 0.8] = [8, 12.5].
  IntervalClass c;
  c.p10 = 0.8;
  c.p90 = 1.25;
  EXPECT_DOUBLE_EQ(c.OfRate(100).first, 80);
  EXPECT_DOUBLE_EQ(c.OfRate(100).second, 125);
  EXPECT_DOUBLE_EQ(c.OfTime(10).first, 8);
  EXPECT_DOUBLE_EQ(c.OfTime(10).second, 12.5);
}

std::vector<Residual> Rows() {
  std::vector<Residual> r;
  // Hopper serving: ratios measured/predicted 0.8, 0.9, 1.0, 1.1 (validation) and 3
  // (calibration). Fewer than 10 validation cases: pooled, sorted {0.8, 0.9, 1.0, 1.1, 3}, n = 5;
  // p10 h = 4 * 0.1 = 0.4 -> 0.8 + 0.4 * 0.1 = 0.84; p90 h = 3.6 -> 1.1 + 0.6 * (3 - 1.1) = 2.24.
  // It is the only serving class, so the parent (all serving) is the same five cases.
  for (double m : {110.0, 80.0, 100.0, 90.0})
    r.push_back({"Hopper", "serving", "t", m, 100, false});
  r.push_back({"Hopper", "serving", "t", 300, 100, true});
  // Ampere collectives-large: calibration rows only, ratios 1, 2, 3: p10 h = 0.2 -> 1.2; p90 2.8.
  for (double m : {3.0, 1.0, 2.0}) r.push_back({"Ampere", "collectives-large", "bw", m, 1, true});
  // Blackwell training: 2 cases, fewer than 3.
  for (double m : {1.0, 1.1}) r.push_back({"Blackwell", "training", "tf", m, 1, false});
  return r;
}

TEST(Intervals, ComputePerClassPoolingCalibrationWhereValidationIsScarce) {
  const Intervals iv = ComputeIntervals(Rows(), {{"Hopper serving", 1}});
  ASSERT_EQ(iv.classes.size(), 3u);  // sorted by name
  EXPECT_EQ(iv.classes[0].name, "Ampere collectives-large");
  EXPECT_EQ(iv.classes[1].name, "Blackwell training");
  EXPECT_EQ(iv.classes[2].name, "Hopper serving");
  const IntervalClass& hs = iv.classes[2];
  EXPECT_EQ(hs.cases, 5);
  EXPECT_NEAR(hs.p10, 0.84, 1e-12);
  EXPECT_NEAR(hs.p90, 2.24, 1e-12);
  EXPECT_FALSE(hs.default_width);
  EXPECT_NE(hs.basis.find("4 cases of validation (held-out) and 1 case of calibration (fit "
                          "residuals) pooled"),
            std::string::npos)
      << hs.basis;
  EXPECT_NE(hs.basis.find("1 case the model refused"), std::string::npos);
  const IntervalClass& ac = iv.classes[0];
  EXPECT_EQ(ac.cases, 3);
  EXPECT_NEAR(ac.p10, 1.2, 1e-12);
  EXPECT_NEAR(ac.p90, 2.8, 1e-12);
  EXPECT_NE(ac.basis.find("calibration cases (fit residuals)"), std::string::npos);
  EXPECT_TRUE(iv.classes[1].default_width);

  // Lookup: a class with enough cases is itself; too few or none take the default.
  EXPECT_NEAR(iv.For("Hopper", "serving").p10, 0.84, 1e-12);
  const IntervalClass bt = iv.For("Blackwell", "training");
  EXPECT_TRUE(bt.default_width);
  EXPECT_EQ(bt.cases, 2);
  EXPECT_DOUBLE_EQ(bt.p10, 0.75);  // training default +-25%: no training class to widen it
  EXPECT_DOUBLE_EQ(bt.p90, 1.25);
  EXPECT_NE(bt.basis.find("fewer than 3 cases: default width"), std::string::npos);
  // Serving default: +-35% (0.65-1.35) widened to the envelope of Hopper serving (0.84-2.24).
  const IntervalClass vs = iv.For("Volta", "serving");
  EXPECT_EQ(vs.cases, 0);
  EXPECT_DOUBLE_EQ(vs.p10, 0.65);
  EXPECT_NEAR(vs.p90, 2.24, 1e-12);
  EXPECT_NE(vs.basis.find("envelope of its 1 measured classes"), std::string::npos) << vs.basis;
  // collectives-large: +-30% widened to Ampere's 1.2-2.8; collectives-small: +-50%, no class.
  EXPECT_DOUBLE_EQ(iv.For("Volta", "collectives-large").p10, 0.7);
  EXPECT_NEAR(iv.For("Volta", "collectives-large").p90, 2.8, 1e-12);
  EXPECT_EQ(iv.For("Volta", "collectives-small").p90, 1.5);
}

TEST(Intervals, ScarceClassesWidenToTheWorkloadsCasesOnEveryArchitecture) {
  std::vector<Residual> r;
  // Hopper serving: 3 validation cases at 1.0 and calibration 0.9 and 1.1, pooled: sorted
  // {0.9, 1, 1, 1, 1.1}, p10 h = 0.4 -> 0.94, p90 h = 3.6 -> 1.06.
  for (double m : {1.0, 1.0, 1.0}) r.push_back({"Hopper", "serving", "t", m, 1, false});
  for (double m : {0.9, 1.1}) r.push_back({"Hopper", "serving", "t", m, 1, true});
  // Blackwell serving: calibration {0.5, 0.7, 0.9, 1.3, 1.5}: p10 h = 0.4 -> 0.5 + 0.4 * 0.2 =
  // 0.58; p90 h = 3.6 -> 1.3 + 0.6 * 0.2 = 1.42.
  for (double m : {0.5, 0.7, 0.9, 1.3, 1.5}) r.push_back({"Blackwell", "serving", "t", m, 1, true});
  // All serving, sorted {0.5, 0.7, 0.9, 0.9, 1, 1, 1, 1.1, 1.3, 1.5}: p10 h = 0.9 -> 0.5 + 0.9 *
  // 0.2 = 0.68; p90 h = 8.1 -> 1.3 + 0.1 * 0.2 = 1.32. Hopper widens to [0.68, 1.32]; Blackwell's
  // own [0.58, 1.42] already covers it.
  // Ampere training: 10 validation cases, 0.95 x 5 and 1.05 x 5: alone, p10 h = 0.9 -> 0.95,
  // p90 h = 8.1 -> 1.05; its calibration case (2.0) left out.
  for (int i = 0; i < 5; ++i) {
    r.push_back({"Ampere", "training", "tf", 0.95, 1, false});
    r.push_back({"Ampere", "training", "tf", 1.05, 1, false});
  }
  r.push_back({"Ampere", "training", "tf", 2.0, 1, true});
  const Intervals iv = ComputeIntervals(r, {});
  ASSERT_EQ(iv.classes.size(), 3u);
  const IntervalClass& at = iv.classes[0];
  EXPECT_EQ(at.name, "Ampere training");
  EXPECT_EQ(at.cases, 10);
  EXPECT_NEAR(at.p10, 0.95, 1e-12);
  EXPECT_NEAR(at.p90, 1.05, 1e-12);
  EXPECT_NE(at.basis.find("its 1 case of calibration left out"), std::string::npos) << at.basis;
  const IntervalClass& bs = iv.classes[1];
  EXPECT_EQ(bs.name, "Blackwell serving");
  EXPECT_NEAR(bs.p10, 0.58, 1e-12);
  EXPECT_NEAR(bs.p90, 1.42, 1e-12);
  const IntervalClass& hs = iv.classes[2];
  EXPECT_EQ(hs.name, "Hopper serving");
  EXPECT_EQ(hs.cases, 5);
  EXPECT_NEAR(hs.p10, 0.68, 1e-12);
  EXPECT_NEAR(hs.p90, 1.32, 1e-12);
  EXPECT_NE(hs.basis.find("own p10-p90 0.9400-1.0600 widened to all serving's (10 cases, "
                          "0.6800-1.3200)"),
            std::string::npos)
      << hs.basis;
  // The serving default: +-35% (0.65-1.35) widened to the envelope of both classes, [0.58,
  // 1.42]. Training: +-25% widened to Ampere's [0.95, 1.05]: stays [0.75, 1.25].
  const IntervalClass as = iv.For("Ampere", "serving");
  EXPECT_TRUE(as.default_width);
  EXPECT_NEAR(as.p10, 0.58, 1e-12);
  EXPECT_NEAR(as.p90, 1.42, 1e-12);
  EXPECT_DOUBLE_EQ(iv.For("Hopper", "training").p10, 0.75);
  EXPECT_DOUBLE_EQ(iv.For("Hopper", "training").p90, 1.25);
  // The envelope travels through the file.
  StatusOr<Intervals> back = ParseIntervals(IntervalsYaml(iv), "intervals.yaml");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_NEAR(back->For("Ampere", "serving").p90, 1.42, 1e-4);
  EXPECT_EQ(back->held_out_alone, 10);
}

TEST(Intervals, DefaultIgnoresTheClassForARunOutsideItsCases) {
  // Ampere collectives-large has 3 cases (1.2-2.8), but a run outside what they measured (more
  // than one VM) takes the workload's default: +-30% (0.7-1.3) widened to the envelope of the
  // measured classes, here that same class: [min(0.7, 1.2), max(1.3, 2.8)] = [0.7, 2.8].
  const Intervals iv = ComputeIntervals(Rows(), {});
  const IntervalClass c =
      iv.Default("Ampere", "collectives-large", "no case spans more than one VM");
  EXPECT_TRUE(c.default_width);
  EXPECT_EQ(c.cases, 3);
  EXPECT_DOUBLE_EQ(c.p10, 0.7);
  EXPECT_NEAR(c.p90, 2.8, 1e-12);
  EXPECT_EQ(c.default_why, "no case spans more than one VM");
  EXPECT_EQ(c.basis.rfind("no case spans more than one VM: default width +-30%", 0), 0u) << c.basis;
  EXPECT_EQ(iv.For("Ampere", "collectives-large").p10, 1.2);  // For keeps the class's own
  EXPECT_EQ(iv.For("Blackwell", "training").default_why, "fewer than 3 cases");
}

TEST(Intervals, ArchClassNames) {
  EXPECT_EQ(ArchClassName("ampere"), "Ampere");
  EXPECT_EQ(ArchClassName("hopper"), "Hopper");
  EXPECT_EQ(ArchClassName("blackwell"), "Blackwell");
  EXPECT_EQ(ArchClassName("blackwell_ultra"), "Blackwell");
}

TEST(IntervalsYaml, RoundTripsThroughTheStrictLoader) {
  const Intervals iv = ComputeIntervals(Rows(), {});
  const std::string text = IntervalsYaml(iv);
  EXPECT_EQ(text.rfind("# generated by `ndtwin validate --write-intervals`", 0), 0u);
  StatusOr<Intervals> back = ParseIntervals(text, "intervals.yaml");
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->classes.size(), 3u);
  EXPECT_EQ(back->classes[2].name, "Hopper serving");
  EXPECT_NEAR(back->classes[2].p10, 0.84, 1e-4);  // written with 4 decimals
  EXPECT_EQ(back->classes[2].cases, 5);
  EXPECT_EQ(back->defaults.size(), 6u);
  EXPECT_EQ(IntervalsYaml(*back), text);  // deterministic and lossless at 4 decimals
}

TEST(IntervalsYaml, TheBuiltInFileLoads) {
  StatusOr<Intervals> iv = LoadIntervals(NDT_DATA_DIR);
  ASSERT_TRUE(iv.ok()) << iv.status().message();
  EXPECT_EQ(iv->defaults.size(), 6u);
}

const char* kGood =
    "min_cases: 3\n"
    "defaults:\n"
    "  - {workload: training, half_width: 0.25, reason: r}\n"
    "  - {workload: training-zero3, half_width: 0.25, reason: r}\n"
    "  - {workload: serving, half_width: 0.35, reason: r}\n"
    "  - {workload: collectives-small, half_width: 0.5, reason: r}\n"
    "  - {workload: collectives-medium, half_width: 0.3, reason: r}\n"
    "  - {workload: collectives-large, half_width: 0.3, reason: r}\n"
    "classes:\n"
    "  - class: Hopper serving\n"
    "    arch: Hopper\n"
    "    workload: serving\n"
    "    metric: output_tokens_per_s\n"
    "    cases: 4\n"
    "    p10: 0.8\n"
    "    p90: 1.1\n"
    "    default_width: false\n"
    "    basis: b\n";

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(IntervalsYaml, BadFilesAreOneLineErrorsWithFileAndLine) {
  ASSERT_TRUE(ParseIntervals(kGood, "iv.yaml").ok());
  struct Bad {
    std::string text, want;
  };
  const std::vector<Bad> bad = {
      {Replace(kGood, "p90: 1.1", "p90: 0.7"), "iv.yaml:16: classes[0].p90: must be >= p10"},
      {Replace(kGood, "p10: 0.8", "p10: 0"), "p10: must be > 0"},
      {Replace(kGood, "class: Hopper serving", "class: Hopper training"), "is not arch + workload"},
      {Replace(kGood, "workload: serving\n", "workload: inference\n"),
       "use training, training-zero3, serving"},
      {Replace(kGood, "default_width: false", "default_width: true"),
       "must be true exactly when cases < min_cases"},
      {Replace(kGood, "half_width: 0.35", "half_width: 35"), "must be between 0 and 1"},
      {Replace(kGood, "  - {workload: collectives-large, half_width: 0.3, reason: r}\n", ""),
       "no default width for collectives-large"},
      {Replace(kGood, "    basis: b\n", "    basis: b\n    color: red\n"), "color"},
      {Replace(kGood, "cases: 4", "cases: 0"), "cases: must be >= 1"},
      {Replace(kGood, "min_cases: 3\n", "min_cases: 3\nheld_out_alone: 0\n"),
       "held_out_alone: must be >= 1"},
      {Replace(kGood, "{workload: serving, half_width: 0.35, reason: r}",
               "{workload: serving, half_width: 0.35, envelope_classes: 1, envelope_p10: 1.2, "
               "envelope_p90: 1.1, reason: r}"),
       "envelope_p90: must be >= envelope_p10"},
      {Replace(kGood, "{workload: serving, half_width: 0.35, reason: r}",
               "{workload: serving, half_width: 0.35, envelope_classes: 1, reason: r}"),
       "envelope_p10"},
  };
  for (const Bad& b : bad) {
    StatusOr<Intervals> r = ParseIntervals(b.text, "iv.yaml");
    ASSERT_FALSE(r.ok()) << b.want;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << r.status().message();
    EXPECT_NE(r.status().message().find(b.want), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
  }
  StatusOr<Intervals> missing = LoadIntervals("/nonexistent-ndtwin-data");
  EXPECT_FALSE(missing.ok());
}

}  // namespace
}  // namespace ndt
