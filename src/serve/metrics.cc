#include "serve/metrics.h"

#include <algorithm>
#include <cmath>

namespace ndt {

LatencyStats Summarize(std::vector<double> v) {
  LatencyStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) {
    double pos = q * static_cast<double>(v.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, v.size() - 1);
    double f = pos - static_cast<double>(lo);
    return v[lo] + (v[hi] - v[lo]) * f;
  };
  double sum = 0;
  for (double x : v) sum += x;  // sorted order: deterministic
  s.mean = sum / static_cast<double>(v.size());
  s.p50 = pct(0.5);
  s.p90 = pct(0.9);
  s.p99 = pct(0.99);
  s.max = v.back();
  return s;
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double pos = q * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

RequestStats SummarizeRequests(const std::vector<const RequestRecord*>& records) {
  std::vector<double> ttft, tpot, e2e;
  ttft.reserve(records.size());
  e2e.reserve(records.size());
  tpot.reserve(records.size());
  for (const RequestRecord* r : records) {
    ttft.push_back(r->ttft_s());
    e2e.push_back(r->e2e_s());
    if (r->output_tokens > 1) tpot.push_back(r->tpot_s());
  }
  RequestStats s;
  s.requests = static_cast<int64_t>(records.size());
  s.ttft_s = Summarize(std::move(ttft));
  s.tpot_s = Summarize(std::move(tpot));
  s.e2e_s = Summarize(std::move(e2e));
  return s;
}

}  // namespace ndt
