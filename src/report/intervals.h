// File: report/intervals.h
// Prediction intervals from measured residuals (issue 15). `ndtwin validate --write-intervals`
// groups its rows by class (architecture x workload: "Ampere training", "Hopper serving",
// "Blackwell collectives-large"; collectives are classed by message size too, as their errors
// differ by regime), takes the ratio measured / predicted of each case's validated rate
// (TFLOP/s per GPU, output tokens/s, bus bandwidth) and writes the empirical p10 and p90 of
// those ratios to data/calibration/intervals.yaml. Commands read the file (Context::intervals)
// and show, beside a predicted rate v, [v * p10, v * p90]; beside a predicted time t (a step,
// a TTFT, a TPOT), which scales as 1 / rate, [t / p90, t / p10].
// Which cases make a class's interval (fixed rules, nothing tuned to a coverage):
//  1. A class with `held_out_alone` (10) validation cases or more: those cases alone (held-out).
//  2. Else its validation and calibration cases pooled. Fit residuals, and a handful of held-out
//     cases, understate the error on new measurements, so the interval is widened to cover the
//     parent's: the p10-p90 of every case of the same workload on every architecture
//     (p10 = min(own, parent), p90 = max(own, parent)).
//  3. A class with fewer than `min_cases` cases, or none, takes its workload's default: the
//     fixed half-width w (1 - w, 1 + w) widened to the envelope of the workload's classes (the
//     lowest p10 and highest p90 of those with min_cases cases or more): an architecture never
//     measured is taken to be no better known than the least-known one that was.
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
  double p10 = 1, p90 = 1;
  std::string basis;           // what the cases are (validation or calibration rows)
  bool default_width = false;  // fewer than min_cases cases: the workload's default width
  std::string default_why;     // why the default applies ("fewer than 3 cases"); not in the file

  // The interval of a predicted rate (v * p10, v * p90) or time (t / p90, t / p10).
  std::pair<double, double> OfRate(double v) const { return {v * p10, v * p90}; }
  std::pair<double, double> OfTime(double t) const { return {t / p90, t / p10}; }
};

// The interval used where a class has fewer than min_cases cases.
struct IntervalDefault {
  std::string workload;
  double half_width = 0;  // the fixed part: 1 - w, 1 + w
  std::string reason;
  // The envelope of the workload's classes with min_cases cases or more (envelope_classes of
  // them; 0: none, and the default is the fixed width alone).
  int envelope_classes = 0;
  double envelope_p10 = 1, envelope_p90 = 1;

  // The default interval: the fixed width widened to the envelope.
  double p10() const { return std::min(1 - half_width, envelope_classes > 0 ? envelope_p10 : 1.0); }
  double p90() const { return std::max(1 + half_width, envelope_classes > 0 ? envelope_p90 : 1.0); }
};

struct Intervals {
  int min_cases = 3;
  int held_out_alone = 10;  // validation cases from which a class uses them alone (rule 1)
  std::vector<IntervalDefault> defaults;  // one per workload
  std::vector<IntervalClass> classes;     // sorted by name

  // The interval of arch x workload: the class's own when it has min_cases cases or more, else
  // the workload's default (default_width set, cases the class's count, possibly 0).
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

// One case's residual for ComputeIntervals.
struct Residual {
  std::string arch, workload, metric;
  double measured = 0, predicted = 0;
  bool calibration = false;
};

// The class of each arch x workload present in `rows`, by the rules of the file comment (the
// basis says which applied), and each workload's default with its envelope. `refused` counts,
// per class name, cases left out because the model refused them (said in the basis). Classes
// with fewer than min_cases cases are written with their count and the default.
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
