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

}  // namespace ndt
