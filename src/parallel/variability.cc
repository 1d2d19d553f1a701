// File: parallel/variability.cc
// GPU-to-GPU speed variability and the straggler it makes; see variability.h.
#include "parallel/variability.h"

#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "core/yaml.h"

namespace ndt {
namespace {

double Phi(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

StatusOr<GpuVariabilityTable> Parse(const YamlMap& top) {
  GpuVariabilityTable t;
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> archs, top.MapList("archs"));
  if (archs.empty()) return top.Error("archs", "needs at least one entry");
  for (const YamlMap& a : archs) {
    GpuVariabilityTable::Entry e;
    NDT_ASSIGN_OR_RETURN(e.arch, a.String("arch"));
    for (const GpuVariabilityTable::Entry& seen : t.archs) {
      if (seen.arch == e.arch) return a.Error("arch", "'" + e.arch + "' is listed twice");
    }
    NDT_ASSIGN_OR_RETURN(Sourced v, a.Count("variability"));
    if (!(v.value >= 0 && v.value < 1)) {
      return a.Error("variability", "must be a fraction of the median in [0, 1) (0.08 = 8%)");
    }
    if (v.source.empty()) return a.Error("variability", "needs its source");
    e.v.variability = v.value;
    NDT_ASSIGN_OR_RETURN(e.v.basis, a.String("basis"));
    NDT_RETURN_IF_ERROR(a.Finish());
    t.archs.push_back(std::move(e));
  }
  // Evidence read and not used as a spread: kept in the file with its reasons, checked for shape.
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> evidence, top.MapList("evidence"));
  for (const YamlMap& e : evidence) {
    for (const char* key : {"name", "finding", "used"}) {
      NDT_ASSIGN_OR_RETURN(std::string s, e.String(key));
      if (s.empty()) return e.Error(key, "must not be empty");
    }
    NDT_RETURN_IF_ERROR(e.Finish());
  }
  NDT_RETURN_IF_ERROR(top.Finish());
  return t;
}

double ComputeExpectedMax(int n, double c) {
  const bool truncated = c > 0;
  const double lo = truncated ? -c : -12.0, hi = truncated ? c : 12.0;
  const double f_lo = truncated ? Phi(-c) : 0.0;
  const double mass = truncated ? Phi(c) - Phi(-c) : 1.0;
  // F(z)^n, the CDF of the maximum, on a fixed grid; Simpson's rule.
  auto cdf_max = [&](double z) {
    const double f = (Phi(z) - f_lo) / mass;
    if (f <= 0) return 0.0;
    if (f >= 1) return 1.0;
    return std::exp(static_cast<double>(n) * std::log(f));
  };
  constexpr int kIntervals = 16384;  // even
  const double h = (hi - lo) / kIntervals;
  double sum = cdf_max(lo) + cdf_max(hi);
  for (int i = 1; i < kIntervals; ++i) sum += (i % 2 == 1 ? 4.0 : 2.0) * cdf_max(lo + i * h);
  return hi - sum * h / 3.0;
}

}  // namespace

GpuVariability GpuVariabilityTable::For(const std::string& arch) const {
  for (const Entry& e : archs) {
    if (e.arch == arch) return e.v;
  }
  return GpuVariability{};
}

StatusOr<GpuVariabilityTable> ParseGpuVariability(const std::string& text,
                                                  const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapString(text, name));
  return Parse(m);
}

StatusOr<GpuVariabilityTable> LoadGpuVariability(const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(data_dir + "/variability.yaml"));
  return Parse(m);
}

double ExpectedMaxNormal(int n, double c) {
  if (n <= 1) return 0.0;  // one draw of a symmetric distribution: its mean, 0
  // A job asks for few distinct (n, c): each integral (16k points) once per process.
  static std::mutex mu;
  static std::map<std::pair<int, double>, double> memo;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find({n, c});
    if (it != memo.end()) return it->second;
  }
  const double v = ComputeExpectedMax(n, c);
  std::lock_guard<std::mutex> lock(mu);
  memo.emplace(std::make_pair(n, c), v);
  return v;
}

double StragglerFraction(const GpuVariability& v, int n) {
  if (v.variability <= 0 || n <= 1) return 0.0;
  return v.sigma() * ExpectedMaxNormal(n, kTukeyFenceSigmas);
}

double StragglerSeconds(const TimeBreakdown& bd, double fraction) {
  const double busy = bd.compute_s + bd.tp_comm_s + bd.cp_comm_s + bd.ep_comm_s;
  if (fraction <= 0 || busy <= 0) return 0.0;
  return fraction * bd.compute_s * (1.0 + bd.pp_bubble_s / busy);
}

void ApplyStraggler(const GpuVariability& v, int gpus, TrainSimResult* r) {
  const double s = StragglerSeconds(r->breakdown, StragglerFraction(v, gpus));
  r->breakdown.straggler_s = s;
  r->step_time_s += s;
}

}  // namespace ndt
