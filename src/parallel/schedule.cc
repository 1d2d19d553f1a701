// File: parallel/schedule.cc
// Pipeline schedule generation; see schedule.h.
#include "parallel/schedule.h"

#include <algorithm>

#include "core/check.h"

namespace ndt {

std::vector<PipeStep> StageSchedule(PipeSchedule sched, int pp, int vpp, int64_t m, int stage) {
  std::vector<PipeStep> out;
  const int64_t total = m * vpp;
  out.reserve(static_cast<size_t>(2 * total));
  if (sched == PipeSchedule::kGpipe) {
    for (int64_t k = 0; k < m; ++k) out.push_back({true, 0, k});
    for (int64_t k = 0; k < m; ++k) out.push_back({false, 0, k});
    return out;
  }
  NDT_CHECK(vpp == 1 || m % pp == 0, "interleaved schedule needs m % pp == 0");
  const int64_t group = static_cast<int64_t>(pp) * vpp;
  auto step = [&](int64_t k, bool fwd) {
    int chunk = static_cast<int>((k % group) / pp);
    if (!fwd) chunk = vpp - 1 - chunk;
    // Non-interleaved: chunk 0 and micro-batch k.
    const int64_t mb = vpp == 1 ? k : (k / group) * pp + k % pp;
    return PipeStep{fwd, chunk, mb};
  };
  int64_t warmup =
      vpp == 1 ? static_cast<int64_t>(pp - stage - 1)
               : static_cast<int64_t>(pp - stage - 1) * 2 + static_cast<int64_t>(vpp - 1) * pp;
  warmup = std::min(warmup, total);
  for (int64_t k = 0; k < warmup; ++k) out.push_back(step(k, true));
  for (int64_t i = 0; i < total - warmup; ++i) {
    out.push_back(step(warmup + i, true));
    out.push_back(step(i, false));
  }
  for (int64_t k = total - warmup; k < total; ++k) out.push_back(step(k, false));
  return out;
}

double StagePeakHeld(PipeSchedule sched, int pp, int vpp, int64_t m, int stage,
                     const std::vector<double>& bytes) {
  double cur = 0, peak = 0;
  auto pass = [&](bool fwd, int chunk) {
    const double b = bytes[static_cast<size_t>(chunk)];
    cur += fwd ? b : -b;
    peak = std::max(peak, cur);
  };
  if (sched == PipeSchedule::kGpipe) {
    // All forwards (chunk 0), then the backwards: with bytes >= 0 each backward leaves the sum
    // at or below where it was, so the peak is the forwards'.
    for (int64_t k = 0; k < m; ++k) pass(true, 0);
    if (bytes[0] < 0) {
      for (int64_t k = 0; k < m; ++k) pass(false, 0);
    }
    return peak;
  }
  NDT_CHECK(vpp == 1 || m % pp == 0, "interleaved schedule needs m % pp == 0");
  // StageSchedule's passes: the chunk of pass k (forward; reversed for the backward).
  const int64_t total = m * vpp;
  const int64_t group = static_cast<int64_t>(pp) * vpp;
  auto chunk = [&](int64_t k, bool fwd) {
    const int c = static_cast<int>((k % group) / pp);
    return fwd ? c : vpp - 1 - c;
  };
  int64_t warmup =
      vpp == 1 ? static_cast<int64_t>(pp - stage - 1)
               : static_cast<int64_t>(pp - stage - 1) * 2 + static_cast<int64_t>(vpp - 1) * pp;
  warmup = std::min(warmup, total);
  for (int64_t k = 0; k < warmup; ++k) pass(true, chunk(k, true));
  // Steady state: pair i is forward warmup + i then backward i; both chunks repeat with period
  // `period` in i, so a period that ends where it began is followed by identical ones.
  const int64_t pairs = total - warmup;
  const int64_t period = vpp == 1 ? 1 : group;
  double start = 0;
  bool have_start = false;
  for (int64_t i = 0; i < pairs; ++i) {
    if (i % period == 0) {
      if (have_start && cur == start) {
        const int64_t last = pairs / period * period;  // the start of the last (partial) period
        if (last > i) i = last;
        if (i >= pairs) break;
      }
      start = cur;
      have_start = true;
    }
    pass(true, chunk(warmup + i, true));
    pass(false, chunk(i, false));
  }
  for (int64_t k = total - warmup; k < total; ++k) pass(false, chunk(k, false));
  return peak;
}

}  // namespace ndt
