#include "report/intervals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
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

TEST(StudentT, QuantilesAgainstClosedFormsAndTables) {
  // df 1 (Cauchy): t = tan(pi (p - 1/2)) = tan(0.4 pi) = 3.0777. df 2: P(T <= t) = 1/2 + t /
  // (2 sqrt(t^2 + 2)), so t = (2p - 1) / sqrt(2 p (1 - p)) = 0.8 / sqrt(0.18) = 1.8856.
  EXPECT_NEAR(StudentTQuantile(0.9, 1), std::tan(0.4 * std::numbers::pi), 1e-9);
  EXPECT_NEAR(StudentTQuantile(0.9, 2), 0.8 / std::sqrt(0.18), 1e-9);
  // Tables (e.g. A&S Table 26.10, t at P(T <= t) = 0.90): 1.638 (3), 1.533 (4), 1.372 (10); and
  // toward the normal's 1.2816 as df grows; p = 0.5 is 0.
  EXPECT_NEAR(StudentTQuantile(0.9, 3), 1.6377, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.9, 4), 1.5332, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.9, 10), 1.3722, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.9, 100000), 1.2816, 1e-4);
  EXPECT_NEAR(StudentTQuantile(0.5, 3), 0, 1e-9);
}

TEST(SourceKey, ThePaperOrTheRepositoryThatPublishedTheFigure) {
  EXPECT_EQ(SourceKey("arXiv:2104.04473 Table 1"), "arXiv:2104.04473");
  EXPECT_EQ(SourceKey("Narayanan et al. SC21 arXiv:2104.04473, Table 1 (Weak-scaling)"),
            "arXiv:2104.04473");
  EXPECT_EQ(SourceKey("github.com/Azure/AI-benchmarking-guide Azure_Results/ND_H100_v5.md"),
            "Azure/AI-benchmarking-guide");
  EXPECT_EQ(SourceKey("Azure/AI-benchmarking-guide Azure_Results/ND_GB200_v6_results.md (@2a)"),
            "Azure/AI-benchmarking-guide");
  EXPECT_EQ(SourceKey("mlcommons/inference_results_v4.1 @a2f5d66d closed/NVIDIA/results/x"),
            "mlcommons/inference_results_v4.1");
  EXPECT_EQ(SourceKey("  https://www.example.com/blog/post, read 2025"), "example.com/blog/post");
  EXPECT_EQ(SourceKey(""), "");
}

// ln ratios: source a {0.1, 0.3}, b {-0.1, 0.1}, c {-0.2, 0}, each source two cases.
std::vector<std::pair<std::string, double>> ThreeSources() {
  return {{"a", std::exp(0.1)}, {"a", std::exp(0.3)},  {"b", std::exp(-0.1)},
          {"b", std::exp(0.1)}, {"c", std::exp(-0.2)}, {"c", std::exp(0.0)}};
}

TEST(RandomEffects, WithinAndBetweenSourceSpreadByHand) {
  // Source means 0.2, 0, -0.1: mu = 0.1 / 3 = 0.03333. Within: each source's squares 0.01 +
  // 0.01, s_w^2 = 0.06 / (6 - 3) = 0.02. Between: (0.16667^2 + 0.03333^2 + 0.13333^2) / 2 =
  // 0.046667 / 2 = 0.023333; tau^2 = 0.023333 - 0.02 * mean(1/2) = 0.013333. V = 0.013333 +
  // 0.02 + 0.023333 / 3 = 0.041111, sqrt 0.202759; t(0.9, 2) = 1.885618: half-width 0.382327.
  // p10 = exp(0.033333 - 0.382327) = 0.705399, p90 = exp(0.415660) = 1.515369.
  const SourceSpread r = RandomEffectsInterval(ThreeSources());
  EXPECT_EQ(r.sources, 3);
  EXPECT_EQ(r.cases, 6);
  EXPECT_NEAR(r.center, std::exp(0.1 / 3), 1e-12);
  EXPECT_NEAR(r.within_sd, std::sqrt(0.02), 1e-12);
  EXPECT_NEAR(r.between_sd, std::sqrt(0.04 / 3), 1e-12);
  EXPECT_NEAR(r.t, 0.8 / std::sqrt(0.18), 1e-9);
  EXPECT_NEAR(r.p10, 0.705399, 1e-6);
  EXPECT_NEAR(r.p90, 1.515369, 1e-6);
  // One case per source (ln 0, 0.1, 0.2): no within-source term (0 degrees of freedom), so
  // tau^2 = s_b^2 = 0.01 and V = 0.01 (1 + 1/3), the usual prediction interval of a new draw:
  // half-width 1.885618 * 0.115470 = 0.217732; p10 = exp(0.1 - 0.217732) = 0.888934, p90 =
  // exp(0.317732) = 1.374009.
  const SourceSpread one =
      RandomEffectsInterval({{"a", 1.0}, {"b", std::exp(0.1)}, {"c", std::exp(0.2)}});
  EXPECT_EQ(one.within_sd, 0);
  EXPECT_NEAR(one.p10, 0.888934, 1e-6);
  EXPECT_NEAR(one.p90, 1.374009, 1e-6);
  // The same six ratios as one source each would be six independent cases: a narrower interval
  // than three sources of two (the effective sample is the sources).
  std::vector<std::pair<std::string, double>> six = ThreeSources();
  for (size_t i = 0; i < six.size(); ++i) six[i].first = std::to_string(i);
  const SourceSpread indep = RandomEffectsInterval(six);
  EXPECT_GT(indep.p10, r.p10);
  EXPECT_LT(indep.p90, r.p90);
}

std::vector<Residual> Rows() {
  std::vector<Residual> r;
  // Hopper serving: validation from source a ({0.1, 0.3} in ln), calibration from b and c (as
  // ThreeSources): the validation alone is 1 source, so pooled: 3 sources, rule 2, p10 0.705399,
  // p90 1.515369 (RandomEffects test).
  for (const auto& [src, ratio] : ThreeSources()) {
    r.push_back({"Hopper", "serving", "t", 100 * ratio, 100, src != "a", src});
  }
  // Ampere training: 10 validation cases of one paper, 0.95 x 5 and 1.05 x 5: 1 source, rule 3:
  // center exp(mean ln) = sqrt(0.95 * 1.05) = 0.998749; +-25% -> 0.749062-1.248436, which holds
  // its own p10-p90 (0.95-1.05).
  for (int i = 0; i < 5; ++i) {
    r.push_back({"Ampere", "training", "tf", 0.95, 1, false, "arXiv:1"});
    r.push_back({"Ampere", "training", "tf", 1.05, 1, false, "arXiv:1"});
  }
  // Ampere training-zero3: 0.6 and 0.8 of one source: center sqrt(0.48) = 0.692820; +-25% ->
  // 0.519615-0.866025 (own 0.62-0.78 inside): the default width around where the cases are.
  r.push_back({"Ampere", "training-zero3", "tf", 0.6, 1, false, "arXiv:1"});
  r.push_back({"Ampere", "training-zero3", "tf", 0.8, 1, false, "arXiv:1"});
  // Ampere collectives-small: ratios 1 and 3 (two sources): center sqrt(3) = 1.732051; +-50%
  // -> 0.866025-2.598076; own p10 1 + 0.1 * 2 = 1.2, p90 2.8: p90 widened to 2.8.
  r.push_back({"Ampere", "collectives-small", "bw", 1, 1, true, "x"});
  r.push_back({"Ampere", "collectives-small", "bw", 3, 1, true, "y"});
  return r;
}

TEST(Intervals, SourcesNotCasesDecideTheRule) {
  const Intervals iv = ComputeIntervals(Rows(), {{"Hopper serving", 1}});
  ASSERT_EQ(iv.classes.size(), 4u);  // sorted by name
  EXPECT_EQ(iv.classes[0].name, "Ampere collectives-small");
  EXPECT_EQ(iv.classes[1].name, "Ampere training");
  EXPECT_EQ(iv.classes[2].name, "Ampere training-zero3");
  EXPECT_EQ(iv.classes[3].name, "Hopper serving");

  const IntervalClass& hs = iv.classes[3];
  EXPECT_EQ(hs.cases, 6);
  EXPECT_EQ(hs.sources, 3);
  EXPECT_FALSE(hs.default_width);
  EXPECT_NEAR(hs.p10, 0.705399, 1e-6);
  EXPECT_NEAR(hs.p90, 1.515369, 1e-6);
  EXPECT_NE(hs.basis.find("6 cases from 3 sources, 2 cases of validation (held-out) and 4 cases "
                          "of calibration (fit residuals) pooled"),
            std::string::npos)
      << hs.basis;
  EXPECT_NE(hs.basis.find("random effects for a new source: center 1.0339"), std::string::npos)
      << hs.basis;
  EXPECT_NE(hs.basis.find("1 case the model refused"), std::string::npos);

  const IntervalClass& at = iv.classes[1];
  EXPECT_EQ(at.cases, 10);
  EXPECT_EQ(at.sources, 1);
  EXPECT_TRUE(at.default_width);
  EXPECT_NEAR(at.p10, 0.75 * std::sqrt(0.95 * 1.05), 1e-12);
  EXPECT_NEAR(at.p90, 1.25 * std::sqrt(0.95 * 1.05), 1e-12);
  EXPECT_NE(at.basis.find("fewer than 3 sources, so no spread between sources: default width "
                          "+-25% for training around their center 0.9987"),
            std::string::npos)
      << at.basis;
  EXPECT_EQ(at.basis.find("widened"), std::string::npos) << at.basis;

  const IntervalClass& z3 = iv.classes[2];
  EXPECT_NEAR(z3.p10, 0.75 * std::sqrt(0.48), 1e-12);
  EXPECT_NEAR(z3.p90, 1.25 * std::sqrt(0.48), 1e-12);

  const IntervalClass& cs = iv.classes[0];
  EXPECT_EQ(cs.sources, 2);
  EXPECT_NEAR(cs.p10, 0.5 * std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(cs.p90, 2.8, 1e-12);
  EXPECT_NE(cs.basis.find("widened to its own p10-p90 1.2000-2.8000"), std::string::npos)
      << cs.basis;

  // For: a class is itself, a rule-3 class says why it is default width; no class: rule 4.
  EXPECT_NEAR(iv.For("Hopper", "serving").p10, 0.705399, 1e-6);
  EXPECT_EQ(iv.For("Ampere", "training").default_why, "fewer than 3 sources");
  EXPECT_NEAR(iv.For("Ampere", "training").p10, 0.75 * std::sqrt(0.95 * 1.05), 1e-12);
  // Serving default: +-35% (0.65-1.35) widened to the envelope of the rule-2 classes (Hopper
  // serving, 0.705399-1.515369): 0.65-1.515369.
  const IntervalClass vs = iv.For("Volta", "serving");
  EXPECT_TRUE(vs.default_width);
  EXPECT_EQ(vs.cases, 0);
  EXPECT_DOUBLE_EQ(vs.p10, 0.65);
  EXPECT_NEAR(vs.p90, 1.515369, 1e-6);
  EXPECT_NE(vs.basis.find("envelope of its 1 measured classes"), std::string::npos) << vs.basis;
  // Training: Ampere training is rule 3 (one source), so it widens nothing: +-25% alone.
  EXPECT_DOUBLE_EQ(iv.For("Hopper", "training").p10, 0.75);
  EXPECT_DOUBLE_EQ(iv.For("Hopper", "training").p90, 1.25);
  EXPECT_EQ(iv.For("Hopper", "training").default_why, "fewer than 3 cases");
}

TEST(Intervals, ValidationFromEnoughSourcesIsUsedAlone) {
  // Validation cases from sources a, b, c (ThreeSources) and a calibration case at 5: the
  // validation alone spans 3 sources, so the calibration case is left out and the interval is
  // the RandomEffects test's, 0.705399-1.515369.
  std::vector<Residual> r;
  for (const auto& [src, ratio] : ThreeSources())
    r.push_back({"Blackwell", "serving", "t", ratio, 1, false, src});
  r.push_back({"Blackwell", "serving", "t", 5, 1, true, "d"});
  const Intervals iv = ComputeIntervals(r, {});
  ASSERT_EQ(iv.classes.size(), 1u);
  EXPECT_EQ(iv.classes[0].cases, 6);
  EXPECT_EQ(iv.classes[0].sources, 3);
  EXPECT_NEAR(iv.classes[0].p90, 1.515369, 1e-6);
  EXPECT_NE(iv.classes[0].basis.find("(its 1 case of calibration left out)"), std::string::npos)
      << iv.classes[0].basis;
  // The envelope travels through the file, and so do the sources.
  StatusOr<Intervals> back = ParseIntervals(IntervalsYaml(iv), "intervals.yaml");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_NEAR(back->For("Ampere", "serving").p90, 1.5154, 1e-4);
  EXPECT_EQ(back->classes[0].sources, 3);
  EXPECT_EQ(back->min_sources, 3);
}

TEST(Intervals, DefaultIgnoresTheClassForARunOutsideItsCases) {
  // Hopper serving has its own interval (0.705399-1.515369), but a run outside what its cases
  // measured takes the workload's default: +-35% (0.65-1.35) widened to the envelope of the
  // rule-2 classes, here that same class: [0.65, 1.515369].
  const Intervals iv = ComputeIntervals(Rows(), {});
  const IntervalClass c = iv.Default("Hopper", "serving", "no case spans more than one VM");
  EXPECT_TRUE(c.default_width);
  EXPECT_EQ(c.cases, 6);
  EXPECT_DOUBLE_EQ(c.p10, 0.65);
  EXPECT_NEAR(c.p90, 1.515369, 1e-6);
  EXPECT_EQ(c.default_why, "no case spans more than one VM");
  EXPECT_EQ(c.basis.rfind("no case spans more than one VM: default width +-35%", 0), 0u) << c.basis;
  EXPECT_NEAR(iv.For("Hopper", "serving").p10, 0.705399, 1e-6);  // For keeps the class's own
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
  ASSERT_EQ(back->classes.size(), 4u);
  EXPECT_EQ(back->classes[3].name, "Hopper serving");
  EXPECT_NEAR(back->classes[3].p10, 0.7054, 1e-4);  // written with 4 decimals
  EXPECT_EQ(back->classes[3].cases, 6);
  EXPECT_EQ(back->classes[3].sources, 3);
  EXPECT_TRUE(back->classes[1].default_width);  // Ampere training: one source
  EXPECT_EQ(back->defaults.size(), 6u);
  EXPECT_EQ(IntervalsYaml(*back), text);  // deterministic and lossless at 4 decimals
}

TEST(IntervalsYaml, TheBuiltInFileLoads) {
  StatusOr<Intervals> iv = LoadIntervals(NDT_DATA_DIR);
  ASSERT_TRUE(iv.ok()) << iv.status().message();
  EXPECT_EQ(iv->defaults.size(), 6u);
}

const char* kGood =
    "min_sources: 3\n"
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
    "    sources: 3\n"
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
      {Replace(kGood, "p90: 1.1", "p90: 0.7"), "iv.yaml:17: classes[0].p90: must be >= p10"},
      {Replace(kGood, "p10: 0.8", "p10: 0"), "p10: must be > 0"},
      {Replace(kGood, "class: Hopper serving", "class: Hopper training"), "is not arch + workload"},
      {Replace(kGood, "workload: serving\n", "workload: inference\n"),
       "use training, training-zero3, serving"},
      {Replace(kGood, "default_width: false", "default_width: true"),
       "must be true exactly when sources < min_sources"},
      {Replace(kGood, "    sources: 3", "    sources: 5"), "sources: must be 1 to cases"},
      {Replace(kGood, "half_width: 0.35", "half_width: 35"), "must be between 0 and 1"},
      {Replace(kGood, "  - {workload: collectives-large, half_width: 0.3, reason: r}\n", ""),
       "no default width for collectives-large"},
      {Replace(kGood, "    basis: b\n", "    basis: b\n    color: red\n"), "color"},
      {Replace(kGood, "cases: 4", "cases: 0"), "cases: must be >= 1"},
      {Replace(kGood, "min_sources: 3\n", "min_sources: 1\n"), "min_sources: must be >= 2"},
      {Replace(kGood, "min_sources: 3\n", "min_cases: 3\n"), "min_sources"},
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
