// File: report/intervals.h
// Prediction intervals from measured residuals (issue 15). `ndtwin validate --write-intervals`
// groups its rows by class (architecture x workload: "Ampere training", "Hopper serving",
// "Blackwell collectives-large"; collectives are classed by message size too, as their errors
// differ by regime), takes the ratio measured / predicted of each case's validated rate
// (TFLOP/s per GPU, output tokens/s, bus bandwidth) and writes the empirical p10 and p90 of
// those ratios to data/calibration/intervals.yaml. Commands read the file (Context::intervals)
// and show, beside a predicted rate v, [v * p10, v * p90]; beside a predicted time t (a step,
// a TTFT, a TPOT), which scales as 1 / rate, [t / p90, t / p10]. A class with fewer than
// `min_cases` cases uses the file's default half-width w for its workload: p10 = 1 - w,
// p90 = 1 + w.
#ifndef NDTWIN_REPORT_INTERVALS_H_
#define NDTWIN_REPORT_INTERVALS_H_

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

  // The interval of a predicted rate (v * p10, v * p90) or time (t / p90, t / p10).
  std::pair<double, double> OfRate(double v) const { return {v * p10, v * p90}; }
  std::pair<double, double> OfTime(double t) const { return {t / p90, t / p10}; }
};

// The width used where a class has fewer than min_cases cases.
struct IntervalDefault {
  std::string workload;
  double half_width = 0;  // p10 = 1 - w, p90 = 1 + w
  std::string reason;
};

struct Intervals {
  int min_cases = 3;
  std::vector<IntervalDefault> defaults;  // one per workload
  std::vector<IntervalClass> classes;     // sorted by name

  // The interval of arch x workload: the class's own when it has min_cases cases or more, else
  // the workload's default width (default_width set, cases the class's count, possibly 0).
  // REQUIRES: a default for `workload` (the loader checks every workload has one).
  IntervalClass For(const std::string& arch, const std::string& workload) const;
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

// The class of each arch x workload present in `rows`: p10/p90 of measured / predicted over its
// validation rows, or over its calibration rows where it has no validation row (basis says so).
// `refused` counts, per class name, cases left out because the model refused them (said in the
// basis). Classes with fewer than min_cases cases are written with their count and the default.
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
