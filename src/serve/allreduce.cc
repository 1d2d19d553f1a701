#include "serve/allreduce.h"

#include <algorithm>

#include "core/check.h"

namespace ndt {

const char* TpAllReduceName(TpAllReduceImpl impl) {
  switch (impl) {
    case TpAllReduceImpl::kNccl:
      return "nccl";
    case TpAllReduceImpl::kTrtllm2024:
      return "trtllm-2024";
    case TpAllReduceImpl::kTrtllm2025:
      return "trtllm-2025";
  }
  return "nccl";
}

bool ParseTpAllReduce(const std::string& s, TpAllReduceImpl* out) {
  for (TpAllReduceImpl i :
       {TpAllReduceImpl::kNccl, TpAllReduceImpl::kTrtllm2024, TpAllReduceImpl::kTrtllm2025}) {
    if (s == TpAllReduceName(i)) {
      *out = i;
      return true;
    }
  }
  return false;
}

TpAllReduceAlgo ChooseTpAllReduce(TpAllReduceImpl impl, int tp, double bytes, int tokens,
                                  const CustomAllReduceParams& p) {
  if (impl == TpAllReduceImpl::kNccl || tp < 2) return TpAllReduceAlgo::kNccl;
  const double workspace = tp <= 2 ? p.workspace_tp2_bytes : p.workspace_bytes;
  if (bytes > workspace) return TpAllReduceAlgo::kNccl;
  const double small = tp <= 4 ? p.oneshot_below_tp4_bytes : p.oneshot_below_bytes;
  if (impl == TpAllReduceImpl::kTrtllm2024) {
    if (tp <= 2 || bytes < small) return TpAllReduceAlgo::kOneShot;
    return TpAllReduceAlgo::kTwoShot;
  }
  // 2025: MIN_LATENCY at TP 2 and below the size limit, NCCL above it.
  if (tp > 2 && bytes >= small) return TpAllReduceAlgo::kNccl;
  return tokens <= p.min_latency_oneshot_max_tokens ? TpAllReduceAlgo::kOneShot
                                                    : TpAllReduceAlgo::kTwoShot;
}

double CustomAllReduceTime(TpAllReduceAlgo algo, int tp, double bytes, const NvlinkPath& path) {
  NDT_CHECK(algo != TpAllReduceAlgo::kNccl && tp >= 2 && path.bw_Bps > 0,
            "CustomAllReduceTime: not a custom all-reduce");
  const double n = tp;
  double rate = path.bw_Bps;
  const double round_trip =
      path.read_round_trip_s > 0 ? path.read_round_trip_s : 2 * path.latency_s;
  if (path.inflight_bytes > 0 && round_trip > 0) {
    rate = std::min(rate, (n - 1) * path.inflight_bytes / round_trip);
  }
  const double copy = path.copy_Bps > 0 ? 2 * bytes / path.copy_Bps : 0.0;
  if (algo == TpAllReduceAlgo::kOneShot) {
    return path.launch_s + 3 * path.latency_s + copy + (n - 1) * bytes / rate;
  }
  return path.launch_s + 6 * path.latency_s + copy + 2 * (n - 1) / n * bytes / rate;
}

}  // namespace ndt
