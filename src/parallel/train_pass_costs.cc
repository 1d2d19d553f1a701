// File: parallel/train_pass_costs.cc
// Helpers of the lowered training step (train_lowering.h) that price one pass's pieces: the TP
// collectives of a pass, the straddling groups, unfused gradient accumulation, the optimizer's
// bytes, ZeRO-3's per-tensor gathers, zero fill and copy-out, and the TP overlap's GEMM pieces
// (split from train_layer_cost.cc, which prices layers, chunks and pipeline messages with them).
#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <typeinfo>
#include <vector>

#include "parallel/cluster_costs.h"
#include "parallel/context_parallel.h"
#include "parallel/memory.h"
#include "parallel/train_lowering.h"

namespace ndt {
namespace train_internal {

double Lowering::TpPass() {
  if (s_.tp == 1) return 0;
  if (s_.sp) {
    return 2 * Comm(CommKind::kAllGather, act_bytes_, tp_group_) +
           2 * Comm(CommKind::kReduceScatter, act_bytes_, tp_group_);
  }
  return 2 * Comm(CommKind::kAllReduce, act_bytes_, tp_group_);
}

void Lowering::PickStraddlingGroups() {
  if (s_.pp > 1) p2p_to_ = RankOf(s_, {0, 0, 0, 1});
  const int domain = o_.nvlink_domain_gpus;
  if (domain < 1) return;
  // The step waits for the slowest group of each kind: price rank 0's and one per split of the
  // straddling ones (a group's time depends on how its ranks split over domains and NICs).
  auto slowest = [&](CommGroup g, std::vector<int>* group, auto probe) {
    const std::vector<std::array<int, 4>> straddling = StraddlingGroups(s_, g, domain);
    if (straddling.empty()) return;
    double worst = probe(*group);
    for (const std::array<int, 4>& c : straddling) {
      std::vector<int> ranks = CommGroupRanks(s_, g, c);
      const double t = probe(ranks);
      if (t > worst) {
        worst = t;
        *group = std::move(ranks);
      }
    }
  };
  slowest(CommGroup::kTp, &tp_group_, [&](const std::vector<int>& g) {
    return s_.sp ? Comm(CommKind::kAllGather, act_bytes_, g) +
                       Comm(CommKind::kReduceScatter, act_bytes_, g)
                 : Comm(CommKind::kAllReduce, act_bytes_, g);
  });
  slowest(CommGroup::kCp, &cp_group_, [&](const std::vector<int>& g) {
    const CpLayerComm cp = CpLayerCost(
        s_.cp_comm, CpKvBytes(m_, static_cast<double>(s_.mbs), s_.tp, s_.cp), 0, 0, g, c_);
    return cp.fwd_comm_s + cp.bwd_comm_s;
  });
  if (m_.is_moe()) {
    const double tok = tokens_ / (s_.sp ? s_.tp : 1);
    const double bytes = tok * m_.moe.top_k * static_cast<double>(m_.hidden) * 2.0;
    slowest(CommGroup::kEp, &ep_group_,
            [&](const std::vector<int>& g) { return Comm(CommKind::kAllToAll, bytes, g); });
  }
  const CommKind grad = s_.zero >= 1 ? CommKind::kReduceScatter : CommKind::kAllReduce;
  const double bucket = o_.dp_bucket_params * GradBytesPerParam(s_);
  slowest(CommGroup::kDp, &dp_group_,
          [&](const std::vector<int>& g) { return Comm(grad, bucket, g); });
  if (const std::optional<std::array<int, 4>> c = StraddlingPipelineSend(s_, domain)) {
    std::array<int, 4> to = *c;
    ++to[static_cast<int>(Axis::kPp)];
    p2p_from_ = RankOf(s_, *c);
    p2p_to_ = RankOf(s_, to);
  }
}

double Lowering::GradAccum(double params) const {
  if (s_.grad_accum_fusion || params <= 0) return 0;
  const double mm = static_cast<double>(s_.micro_batches());
  const bool fp16 = s_.precision == Dtype::kFp16;
  const double share = fp16 ? (mm - 1) / mm : 1.0;
  if (share <= 0) return 0;
  Op add;
  add.name = "grad_accum";
  add.kind = OpKind::kElementwise;
  add.bytes = (fp16 ? 6.0 : 10.0) * params;
  add.flop = params;
  return share * c_.OpsTime({add});
}

double Lowering::OptimizerBytesPerParam() const {
  return 38.0 + (s_.precision == Dtype::kFp16 ? 14.0 : 0.0);
}

void Lowering::ZeroPerTensor(const std::vector<double>& tensors, const std::vector<double>& grads,
                             double fwd_busy_s, double bwd_busy_s, double scatter_s,
                             double scatter_share, int bwd_passes, LayerCost* lc) {
  double exposed = 0, hidden = 0, hidden_share = 0;
  // The host builds the world-size list of views before each all-gather, after a device
  // synchronize (Zero3Traits::host_view_s): the GPU waits for it.
  const double list_s = s_.zero3.host_view_s * static_cast<double>(dp_group_.size());
  for (double t : tensors) {
    if (t < s_.zero3.persistence_threshold_params) continue;
    const CommPriced ag = Priced(CommKind::kAllGather, t * 2.0, dp_group_);
    const double g = list_s + ag.time_s + CopyOut(t * 2.0) + ZeroFill(t * 2.0);
    if (t <= s_.zero3.prefetch_bucket_params) {
      hidden += g;
      hidden_share += ag.time_s * Share(ag, bound_fwd_);  // time-weighted below
    } else {
      exposed += g;
    }
  }
  if (hidden > 0) hidden_share /= hidden;
  if (s_.zero3.reduce_per_tensor) {
    // One reduce-scatter per gathered tensor, its list copied into NCCL's flat buffer first (one
    // copy kernel per rank, as CopyOut), and one for the small tensors together.
    const double grad = s_.zero3.grad_reduce_bytes_per_param;
    double small = 0, time = 0, weighted = 0;
    for (double t : grads) {
      if (t < s_.zero3.persistence_threshold_params) {
        small += t;
        continue;
      }
      const CommPriced rs = Priced(CommKind::kReduceScatter, t * grad, dp_group_);
      time += rs.time_s + CopyOut(t * grad);
      weighted += rs.time_s * Share(rs, bound_bwd_);
    }
    const CommPriced rest = Priced(CommKind::kReduceScatter, small * grad, dp_group_);
    time += rest.time_s;
    weighted += rest.time_s * Share(rest, bound_bwd_);
    scatter_s = time;
    scatter_share = time > 0 ? weighted / time : 0.0;
  }
  lc->fwd_zero_s = exposed + std::max(0.0, hidden - fwd_busy_s);
  lc->bwd_zero_s = bwd_passes * (exposed + std::max(0.0, hidden - bwd_busy_s / bwd_passes)) +
                   (s_.overlap_dp ? std::max(0.0, scatter_s - bwd_busy_s) : scatter_s);
  // Overlap slowdown: the prefetched gathers beside each pass, the overlapped reduce-scatter
  // beside the backward.
  lc->fwd_compute_s += std::min(hidden, fwd_busy_s) * hidden_share;
  lc->bwd_compute_s += bwd_passes * std::min(hidden, bwd_busy_s / bwd_passes) * hidden_share;
  if (s_.overlap_dp) lc->bwd_compute_s += std::min(scatter_s, bwd_busy_s) * scatter_share;
}

double Lowering::ZeroFill(double bytes) {
  if (!s_.zero3.zero_fill) return 0;
  Op fill;
  fill.name = "all_gather buffer zero fill";
  fill.kind = OpKind::kElementwise;
  fill.bytes = bytes;  // written once
  return c_.OpsTime({fill});
}

double Lowering::CopyOut(double bytes) {
  if (!s_.zero3.copy_out_per_rank) return 0;
  auto it = copy_cache_.find(bytes);
  if (it != copy_cache_.end()) return it->second;
  Op copy;
  copy.name = "all_gather copy-out";
  copy.kind = OpKind::kElementwise;
  copy.bytes = 2.0 * bytes / static_cast<double>(dp_group_.size());
  const std::vector<Op> copies(dp_group_.size(), copy);
  return copy_cache_.emplace(bytes, c_.OpsTime(copies)).first->second;
}

std::vector<Op> Lowering::TpOverlapPieces(std::vector<Op> ops) const {
  if (!s_.tp_overlap || s_.tp < 2 || !s_.tp_ub.gemm_pieces) return ops;
  auto pieces_of = [&](const Op& op) -> int {
    if (op.kind != OpKind::kGemm || op.batch != 1) return 1;
    const std::string& n = op.name;
    // Ring-exchange all-gather: TE's qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad.
    if (n == "qkv_proj" || n == "mlp_up" || n == "mlp_gate_up" || n == "out_proj_dgrad" ||
        n == "mlp_down_dgrad") {
      return s_.tp;
    }
    // Pipelined reduce-scatter: proj_fprop, fc2_fprop.
    if (n == "out_proj" || n == "mlp_down") return std::max(1, s_.tp_ub.rs_splits);
    return 1;
  };
  std::vector<Op> out;
  out.reserve(ops.size() + 16);
  for (const Op& op : ops) {
    const int k = static_cast<int>(std::min<int64_t>(pieces_of(op), std::max<int64_t>(1, op.m)));
    if (k <= 1) {
      out.push_back(op);
      continue;
    }
    // Each piece computes 1/k of the rows (tokens) and reads the whole weight.
    Op piece = op;
    piece.m = (op.m + k - 1) / k;
    piece.flop = op.flop / k;
    piece.bytes = (op.bytes - op.weight_bytes) / k + op.weight_bytes;
    for (int i = 0; i < k; ++i) out.push_back(piece);
  }
  return out;
}

std::vector<Op> Lowering::CpRingSteps(std::vector<Op> ops) const {
  if (s_.cp < 2 || s_.cp_comm != CpComm::kRing) return ops;
  std::vector<Op> out;
  out.reserve(ops.size() + 2 * static_cast<size_t>(s_.cp));
  for (const Op& op : ops) {
    if (op.kind != OpKind::kAttention || !IsAttentionCore(op)) {
      out.push_back(op);
      continue;
    }
    // Keys per query of a step = (pairs / cp) / q_len = c, where the whole core's are cp c.
    Op step = op;
    step.flop = op.flop / s_.cp;
    step.bytes = op.bytes / s_.cp;
    step.backward_bytes = op.backward_bytes / s_.cp;
    for (int i = 0; i < s_.cp; ++i) out.push_back(step);
    // What merges the steps, on the compute stream after them (TE 1.x AttnFuncWithCPAndKVP2P,
    // for rank cp - 1, whose every step covers all its queries): forward, cp
    // flash_attn_fwd_out_correction(out, out_per_step, ...) in the 16-bit output's dtype, each
    // reading out_per_step and out and writing out (3 x the output); backward, dq.copy_(dq_)
    // then cp - 1 dq.add_(dq_) (2 + 3 (cp - 1) x dQ), and cp - 1 dkv.add_ of the K/V block
    // received (3 x CpKvBytes each).
    const double cp = s_.cp;
    const double heads = op.seqs * op.heads * op.q_len * 2.0;  // bytes per head-dim column
    Op merge;
    merge.kind = OpKind::kElementwise;
    merge.no_backward = true;
    merge.pass = op.pass;
    if (op.pass == Pass::kForward) {
      merge.name = "cp_out_correction";
      merge.bytes = 3.0 * cp * heads * static_cast<double>(op.head_dim_v);
    } else {
      merge.name = "cp_grad_accumulate";
      merge.bytes = (2.0 + 3.0 * (cp - 1)) * heads * static_cast<double>(op.head_dim_qk) +
                    3.0 * (cp - 1) * CpKvBytes(m_, static_cast<double>(s_.mbs), s_.tp, s_.cp);
    }
    out.push_back(merge);
  }
  return out;
}

}  // namespace train_internal
}  // namespace ndt
