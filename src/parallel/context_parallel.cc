// File: parallel/context_parallel.cc
// Context-parallel K/V traffic and its overlap with attention; model in context_parallel.h.
#include "parallel/context_parallel.h"

#include <algorithm>

namespace ndt {

const char* CpCommName(CpComm c) { return c == CpComm::kRing ? "ring" : "all_gather"; }

bool ParseCpComm(const std::string& s, CpComm* out) {
  if (s == "ring" || s == "p2p") {
    *out = CpComm::kRing;
  } else if (s == "all_gather" || s == "allgather") {
    *out = CpComm::kAllGather;
  } else {
    return false;
  }
  return true;
}

double CpKvBytes(const TransformerSpec& m, double micro_batch, int tp, int cp) {
  const double tokens = micro_batch * static_cast<double>(m.seq_len) / std::max(1, cp);
  if (m.attention == AttentionKind::kMla) {
    // Megatron-core's MLA hands the attention core up-projected per-head K and V: those move.
    const double heads = static_cast<double>(std::max<int64_t>(1, m.heads / std::max(1, tp)));
    return tokens * heads *
           static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim) *
           2.0;
  }
  const double kv_heads = static_cast<double>(std::max<int64_t>(1, m.kv_heads / std::max(1, tp)));
  return 2.0 * tokens * kv_heads * static_cast<double>(m.head_dim) * 2.0;
}

CpLayerComm CpLayerCost(CpComm kind, double kv_bytes, double attn_fwd_s, double attn_bwd_s,
                        const std::vector<int>& group, const TrainCosts& costs) {
  CpLayerComm r;
  const int cp = static_cast<int>(group.size());
  if (cp < 2 || kv_bytes <= 0) return r;
  const double steps = cp - 1.0;
  if (kind == CpComm::kRing) {
    // Every rank sends at once; the slowest hop (e.g. the ring's wrap-around) sets the pace.
    auto hop = [&](double bytes) {
      return std::max(costs.P2pTime(bytes, group[0], group[1]),
                      costs.P2pTime(bytes, group[cp - 1], group[0]));
    };
    const double fwd_hop = hop(kv_bytes);
    const double bwd_hop = hop(2.0 * kv_bytes);
    const double last = fwd_hop;  // dK/dV home: kv_bytes
    r.fwd_comm_s = steps * fwd_hop;
    r.bwd_comm_s = steps * bwd_hop + last;
    r.fwd_exposed_s = steps * std::max(0.0, fwd_hop - attn_fwd_s / cp);
    r.bwd_exposed_s = steps * std::max(0.0, bwd_hop - attn_bwd_s / cp) + last;
    r.fwd_sent_bytes = steps * kv_bytes;
    r.bwd_sent_bytes = steps * 2.0 * kv_bytes + kv_bytes;
  } else {
    const double all = kv_bytes * cp;  // the gathered K and V (nccl-tests' buffer size)
    const double gather = costs.CommTime(CommKind::kAllGather, all, group);
    const double scatter = costs.CommTime(CommKind::kReduceScatter, all, group);
    r.fwd_comm_s = r.fwd_exposed_s = gather;
    r.bwd_comm_s = r.bwd_exposed_s = gather + scatter;
    // A ring all-gather or reduce-scatter sends (cp - 1) / cp of the buffer from each rank.
    r.fwd_sent_bytes = steps * kv_bytes;
    r.bwd_sent_bytes = 2.0 * steps * kv_bytes;
  }
  return r;
}

}  // namespace ndt
