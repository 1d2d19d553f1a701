#include "serve/metrics.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

namespace ndt {

void SortLatencies(std::vector<double>* v) {
  constexpr size_t kRadixMin = 1024;  // below it std::sort is as fast
  const size_t n = v->size();
  bool radix = n >= kRadixMin;
  for (size_t i = 0; i < n && radix; ++i) radix = (*v)[i] >= 0.0 && !std::signbit((*v)[i]);
  if (!radix) {
    std::sort(v->begin(), v->end());
    return;
  }
  // A non-negative double's IEEE-754 bits, read as an unsigned integer, order as the values do
  // (and equal values have equal bits: no -0, no NaN), so sorting the bits least significant
  // byte first gives exactly std::sort's sequence. A byte all keys share is skipped.
  std::vector<uint64_t> keys(n), spare(n);
  std::array<std::array<size_t, 256>, 8> count{};
  for (size_t i = 0; i < n; ++i) {
    keys[i] = std::bit_cast<uint64_t>((*v)[i]);
    for (int b = 0; b < 8; ++b) ++count[b][(keys[i] >> (8 * b)) & 0xff];
  }
  for (int b = 0; b < 8; ++b) {
    const int shift = 8 * b;
    if (count[b][(keys[0] >> shift) & 0xff] == n) continue;
    size_t at = 0;
    for (size_t& c : count[b]) at += std::exchange(c, at);
    for (uint64_t k : keys) spare[count[b][(k >> shift) & 0xff]++] = k;
    keys.swap(spare);
  }
  for (size_t i = 0; i < n; ++i) (*v)[i] = std::bit_cast<double>(keys[i]);
}

LatencyStats Summarize(std::vector<double> v) {
  LatencyStats s;
  if (v.empty()) return s;
  SortLatencies(&v);
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
  SortLatencies(&values);
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
