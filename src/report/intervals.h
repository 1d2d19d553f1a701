// File: report/intervals.h
// Prediction intervals from measured residuals (issue 15). `ndtwin validate --write-intervals`
// groups its rows by class (architecture x workload: "Ampere training", "Hopper serving",
// "Blackwell collectives-large"; collectives are classed by message size too, as their errors
// differ by regime), takes the ratio measured / predicted of each case's validated rate
// (TFLOP/s per GPU, output tokens/s, bus bandwidth) and writes per class a p10 and p90 of
// that ratio for a case of a new source (the rules below) to data/calibration/intervals.yaml.
// Commands read the file (Context::intervals) and show, beside a predicted rate v, [v * p10, v *
// p90]; beside a predicted time t (a step, a TTFT, a TPOT), which scales as 1 / rate, [t / p90, t /
// p10]. Which cases make a class's interval (rules fixed in advance, nothing tuned to a coverage):
// cases from one source (a paper, a repository's table, an MLPerf round: SourceKey) share its
// stack, methods and model family, so they are not independent: the effective sample size of a
// class is its number of sources, and an interval for a new model, stack or VM size must carry
// the spread between sources, not only within one.
//  1. A class whose validation (held-out) cases come from `min_sources` (3) sources or more
//     uses them alone; else its validation and calibration (fit residual) cases are pooled.
//  2. With min_sources sources or more: a random-effects (two-level) prediction interval for one
//     case of a new source, on x = ln(measured / predicted) (RandomEffectsInterval): center the
//     mean of the K source means (each source weighs once), variance between-source tau^2 +
//     within-source s_w^2 + the center's own s_b^2 / K, at Student t(0.90, K - 1).
//  3. Fewer sources (1 or 2): the spread between sources has no estimate (none from one source,
//     one degree of freedom from two, where t(0.90, 1) is 3.08), so the class takes its
//     workload's default half-width w around the center of its own sources (exp of the mean
//     source mean), [c (1 - w), c (1 + w)], widened to its own cases' p10-p90 (default_width).
//  4. An architecture x workload with no case takes the workload's default, the fixed half-width
//     w (1 - w, 1 + w) widened to the envelope of the workload's classes with min_sources
//     sources or more: an architecture never measured is taken to be no better known than the
//     least-known one that was.
#ifndef NDTWIN_REPORT_INTERVALS_H_
#define NDTWIN_REPORT_INTERVALS_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace ndt {

// One class's interval on the ratio measured / predicted of a rate.
struct IntervalClass {
  std::string name;  // "Hopper training": arch + " " + workload
  std::string arch;  // "Ampere", "Hopper", "Blackwell", ... (ArchClassName)
  // "training", "training-zero3", "serving", or a collectives size band (coll/collective.h
  // CollectivesWorkload: "collectives-small" < 1 MiB <= "-medium" < 64 MiB <= "-large").
  std::string workload;
  std::string metric;  // the validated rate, e.g. "tflops_per_gpu" ("" for a default)
  int cases = 0;       // cases with a prediction behind p10/p90
  int sources = 0;     // independent sources of those cases (SourceKey)
  double p10 = 1, p90 = 1;
  std::string basis;           // what the cases are (validation or calibration rows)
  bool default_width = false;  // fewer than min_sources sources: the workload's default width
  std::string default_why;     // why the default applies ("fewer than 3 sources"); not in file

  // The interval of a predicted rate (v * p10, v * p90) or time (t / p90, t / p10).
  std::pair<double, double> OfRate(double v) const { return {v * p10, v * p90}; }
  std::pair<double, double> OfTime(double t) const { return {t / p90, t / p10}; }
};

// The default width of a workload (rules 3 and 4).
struct IntervalDefault {
  std::string workload;
  double half_width = 0;  // the fixed part: 1 - w, 1 + w
  std::string reason;
  // The envelope of the workload's classes with min_sources sources or more (envelope_classes of
  // them; 0: none, and the default is the fixed width alone).
  int envelope_classes = 0;
  double envelope_p10 = 1, envelope_p90 = 1;

  // The default interval: the fixed width widened to the envelope.
  double p10() const { return std::min(1 - half_width, envelope_classes > 0 ? envelope_p10 : 1.0); }
  double p90() const { return std::max(1 + half_width, envelope_classes > 0 ? envelope_p90 : 1.0); }
};

struct Intervals {
  int min_sources = 3;  // sources from which a class's own spread is used (rules 1-3)
  std::vector<IntervalDefault> defaults;  // one per workload
  std::vector<IntervalClass> classes;     // sorted by name

  // The interval of arch x workload: its class's (rules 1-3; default_why set where rule 3
  // applied), or with no class the workload's default (rule 4, cases 0).
  // REQUIRES: a default for `workload` (the loader checks every workload has one).
  IntervalClass For(const std::string& arch, const std::string& workload) const;
  // The workload's default for arch x workload whatever its class holds, for a run outside what
  // the class's cases measured; `why` (e.g. "no case spans more than one VM") leads the basis.
  IntervalClass Default(const std::string& arch, const std::string& workload,
                        const std::string& why) const;
};

// The class name of a GPU architecture (GpuSpec::arch): "ampere" -> "Ampere",
// "blackwell_ultra" -> "Blackwell" (GB300 is measured with GB200), unknown -> capitalized.
std::string ArchClassName(const std::string& gpu_arch);

// The q-quantile (0 <= q <= 1) of `v` by linear interpolation between order statistics
// (Hyndman & Fan type 7, R's and NumPy's default): h = (n - 1) q, v[floor h] + (h - floor h) *
// (v[floor h + 1] - v[floor h]) of the sorted values. REQUIRES: v non-empty.
double Quantile(std::vector<double> v, double q);

// Student's t quantile: P(T <= t) = p for T with `df` degrees of freedom (df >= 1, 0.5 <= p <
// 1), by bisection on the exact CDF for integer df (Abramowitz & Stegun 26.7.3-4).
double StudentTQuantile(double p, int df);

// The independent source a case's `source` text names: the arXiv id when it cites one
// ("arXiv:2104.04473"), else its first word with "https://", "http://", "www." and
// "github.com/" dropped: the repository or site that published the figure
// ("mlcommons/inference_results_v4.1", "Azure/AI-benchmarking-guide", "NVIDIA/TensorRT-LLM";
// a fork read for an older release of a table counts apart: that release's table was measured
// apart). "" for an empty text.
std::string SourceKey(const std::string& source_text);

// Rule 2's random-effects prediction interval of one case of a new source, from (source key,
// ratio measured / predicted) pairs of K >= 2 sources. On x = ln ratio, with n_i cases and
// mean m_i per source, N cases in all: center mu = mean of the m_i; s_w^2 = sum (x - m_i)^2 /
// (N - K) (0 when N = K: every source one case); s_b^2 = sum (m_i - mu)^2 / (K - 1); tau^2 =
// max(0, s_b^2 - s_w^2 * mean(1 / n_i)) (method of moments: a source mean carries s_w^2 / n_i
// of within-source noise); V = tau^2 + s_w^2 + s_b^2 / K; p10, p90 = exp(mu -+ t sqrt(V)),
// t = StudentTQuantile(0.9, K - 1).
struct SourceSpread {
  int sources = 0, cases = 0;
  double center = 1;      // exp(mu)
  double within_sd = 0;   // s_w
  double between_sd = 0;  // tau
  double t = 0;
  double p10 = 1, p90 = 1;
};
SourceSpread RandomEffectsInterval(const std::vector<std::pair<std::string, double>>& by_source);

// One case's residual for ComputeIntervals.
struct Residual {
  std::string arch, workload, metric;
  double measured = 0, predicted = 0;
  bool calibration = false;
  std::string source;  // SourceKey of the case's source ("" counts as one unnamed source)
};

// The class of each arch x workload present in `rows`, by the rules of the file comment (the
// basis says which applied), and each workload's default with its envelope. `refused` counts,
// per class name, cases left out because the model refused them (said in the basis).
Intervals ComputeIntervals(const std::vector<Residual>& rows,
                           const std::vector<std::pair<std::string, int>>& refused);

// The built-in defaults written into the generated file (see intervals.cc for the reasons).
std::vector<IntervalDefault> DefaultIntervalWidths();

// The YAML text of data/calibration/intervals.yaml. Deterministic.
std::string IntervalsYaml(const Intervals& iv);

// Strict loaders: every error is one line "file:line: key: what is wrong".
StatusOr<Intervals> LoadIntervals(const std::string& data_dir);  // data_dir/calibration/...
StatusOr<Intervals> ParseIntervals(const std::string& text, const std::string& name);

}  // namespace ndt

#endif  // NDTWIN_REPORT_INTERVALS_H_
