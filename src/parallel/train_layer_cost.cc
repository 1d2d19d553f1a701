// File: parallel/train_layer_cost.cc
// What one layer, one chunk and one pipeline message of the lowered training step cost
// (train_lowering.h), from the pass helpers of train_pass_costs.cc; the task graph built from them
// is in train_sim.cc.
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

namespace {

// The time of each op of `ops` alone, when the costs are ClusterCosts itself, whose OpsTime is
// ndt::OpsTime: a sum from 0 of each op's time in order, so a sum of these in the same order
// equals OpsTime of those ops bit for bit (and OpsTime of one op is that op's time). Empty for
// other costs (a test's may charge per call).
std::vector<double> OpTimes(const TrainCosts& c, const std::vector<Op>& ops) {
  std::vector<double> t;
  if (typeid(c) != typeid(ClusterCosts)) return t;
  t.reserve(ops.size());
  std::vector<Op> one(1);
  for (const Op& op : ops) {
    one[0] = op;
    t.push_back(c.OpsTime(one));
  }
  return t;
}

// The share of forward op `op` that torchtitan's op-level selective checkpointing re-runs in the
// backward (SelectiveRecompute::kAlternateMatmuls). Its policy (torchtitan parallelize_llama.py
// _save_list and _custom_policy, 2024-10) saves the SDPA kernel's output and the output of every
// odd-numbered aten.mm of a block, and recomputes every other op. A Llama block calls mm as wq,
// wk, wv, wo, w1, w3, w2, so wk, wo and w3 re-run; ops.cc builds wq/wk/wv as one qkv_proj and
// w1/w3 as one mlp_gate_up, so those re-run wk's and w3's share of their FLOPs. A GEMM of another
// layout (MoE, MLA, a plain MLP) re-runs half: every second matmul.
double AlternateMatmulShare(const TransformerSpec& m, int tp, const Op& op) {
  if (op.kind == OpKind::kAttention) return 0.0;
  if (op.kind != OpKind::kGemm) return 1.0;
  const std::string& n = op.name;
  if (n == "qkv_proj") {
    const double q = static_cast<double>(std::max<int64_t>(1, m.heads / tp));
    const double kv = static_cast<double>(std::max<int64_t>(1, m.kv_heads / tp));
    return kv / (q + 2 * kv);
  }
  if (n == "out_proj") return 1.0;
  if (n == "mlp_gate_up") return 0.5;
  if (n == "mlp_down") return 0.0;
  return 0.5;
}

}  // namespace

// OpsTime of the ops of `ops` for which keep(op) holds, from `times` (OpTimes) when known.
template <typename Keep>
double Lowering::OpsTimeOf(const std::vector<Op>& ops, const std::vector<double>& times,
                           Keep keep) const {
  if (times.size() == ops.size()) {
    double t = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (keep(ops[i])) t += times[i];
    }
    return t;
  }
  std::vector<Op> kept;
  for (const Op& op : ops) {
    if (keep(op)) kept.push_back(op);
  }
  return c_.OpsTime(kept);
}

const LayerCost& Lowering::Layer(int64_t l) {
  const bool moe = m_.IsMoeLayer(l);
  auto it = layer_cache_.find(moe);
  if (it != layer_cache_.end()) return it->second;
  LayerCost lc;
  const std::vector<Op> fwd = CpRingSteps(TpOverlapPieces(LayerForwardOps(m_, l, shape_)));
  const std::vector<Op> bwd = CpRingSteps(TpOverlapPieces(LayerBackwardOps(m_, l, shape_)));
  // Each op priced once where the costs allow (OpTimes), every sum below taken from those.
  const std::vector<double> fwd_t = OpTimes(c_, fwd), bwd_t = OpTimes(c_, bwd);
  auto all = [](const Op&) { return true; };
  auto is_attn = [](const Op& op) { return IsAttentionCore(op); };
  auto is_bound = [](const Op& op) { return op.kind == OpKind::kGemm || IsAttentionCore(op); };
  const double attn_s = OpsTimeOf(fwd, fwd_t, is_attn);
  lc.fwd_compute_s = OpsTimeOf(fwd, fwd_t, all);
  lc.bwd_compute_s = OpsTimeOf(bwd, bwd_t, all);
  // The forward's kernels are issued one by one from Python (Strategy::host_issue_per_kernel_s):
  // where the GPU runs them faster than the host issues them, the host sets the pace. (The
  // backward is issued by autograd's C++ engine, whose cost per kernel is not measured here.)
  lc.fwd_compute_s =
      std::max(lc.fwd_compute_s, static_cast<double>(fwd.size()) * s_.host_issue_per_kernel_s);
  if (!moe || bound_fwd_ < 0) {  // the dense layer's mix stands for the step's:
    // the fraction of its time in compute-bound kernels (GEMMs and the attention core)
    const double f = lc.fwd_compute_s, b = lc.bwd_compute_s;
    bound_fwd_ = f > 0 ? std::min(1.0, OpsTimeOf(fwd, fwd_t, is_bound) / f) : 1.0;
    bound_bwd_ = b > 0 ? std::min(1.0, OpsTimeOf(bwd, bwd_t, is_bound) / b) : 1.0;
  }
  lc.fwd_flop = TotalFlop(fwd);
  lc.bwd_flop = TotalFlop(bwd);
  lc.fwd_tp_s = TpPass();
  lc.bwd_tp_s = TpPass();
  if (s_.tp_overlap && s_.tp > 1) {
    // Each chunked collective hides under the GEMM it feeds; one chunk (1/tp) stays exposed.
    auto is_gemm = [](const Op& op) { return op.kind == OpKind::kGemm && !IsAttentionCore(op); };
    const double fwd_all = lc.fwd_tp_s, bwd_all = lc.bwd_tp_s;
    lc.fwd_tp_s = std::max(lc.fwd_tp_s / s_.tp, lc.fwd_tp_s - OpsTimeOf(fwd, fwd_t, is_gemm));
    lc.bwd_tp_s = std::max(lc.bwd_tp_s / s_.tp, lc.bwd_tp_s - OpsTimeOf(bwd, bwd_t, is_gemm));
    // Overlap slowdown: while the hidden part runs, the GEMMs lack the SMs of the
    // communication kernels (TE userbuffers' num_sm); all-gathers by copy engine take none, so
    // only the reduce-scatters' share of the communication time counts then. Each pass has 2
    // all-gathers and 2 reduce-scatters of the same buffer (TpPass).
    const int sms = c_.Sms();
    if (sms > 0 && s_.tp_ub.comm_sms > 0) {
      double on_sms = 1.0;
      if (s_.tp_ub.ag_copy_engine) {
        const double ag = Comm(CommKind::kAllGather, act_bytes_, tp_group_);
        const double rs = Comm(CommKind::kReduceScatter, act_bytes_, tp_group_);
        on_sms = ag + rs > 0 ? rs / (ag + rs) : 0.0;
      }
      const double share = std::min(0.95, static_cast<double>(s_.tp_ub.comm_sms) / sms) * on_sms;
      lc.fwd_compute_s += (fwd_all - lc.fwd_tp_s) * share;
      lc.bwd_compute_s += (bwd_all - lc.bwd_tp_s) * share;
    }
  }
  if (shape_.fp8_current_scaling && s_.sp && s_.tp > 1 && TeFp8Recipe(shape_)) {
    // Current scaling with SP: a cast whose FP8 output is all-gathered over the TP group first
    // all-reduces its amax there (one fp32, MAX), in the stream before the cast (TE 2.2
    // module/layernorm_linear.py, layernorm_mlp.py, linear.py: with_amax_reduction on the
    // column-parallel input quantizer and the row-parallel grad_output quantizer; csrc
    // normalization.cpp / cast.cpp: allreduce(...)->wait()). Forward: QKV's and FC1's inputs;
    // backward: the output projection's and FC2's output gradients (one each where an MoE
    // layer's experts are separate modules). Latency-bound, exposed.
    const double amax = Comm(CommKind::kAllReduce, 4.0, tp_group_) * (moe ? 1.0 : 2.0);
    lc.fwd_tp_s += amax;
    lc.bwd_tp_s += amax;
  }
  if (moe && s_.ep > 1) {
    const double tok = tokens_ / (s_.sp ? s_.tp : 1);
    const double bytes = tok * m_.moe.top_k * static_cast<double>(m_.hidden) * 2.0;
    lc.fwd_ep_s = 2 * Comm(CommKind::kAllToAll, bytes, ep_group_);
    lc.bwd_ep_s = lc.fwd_ep_s;
  }
  if (s_.cp > 1) {
    const CpLayerComm cp =
        CpLayerCost(s_.cp_comm, CpKvBytes(m_, static_cast<double>(s_.mbs), s_.tp, s_.cp), attn_s,
                    OpsTimeOf(bwd, bwd_t, is_attn), cp_group_, c_);
    lc.fwd_cp_s = cp.fwd_exposed_s;
    lc.bwd_cp_s = cp.bwd_exposed_s;
    if (s_.cp_comm == CpComm::kRing) {
      // Overlap slowdown: the hidden hops run beside the attention core (compute-bound), whose
      // SMs the send/recv kernels' CTAs share.
      const double kv = CpKvBytes(m_, static_cast<double>(s_.mbs), s_.tp, s_.cp);
      const double sm = c_.P2pPricedOf(kv, cp_group_[0], cp_group_[1]).sm_share;
      lc.fwd_compute_s += (cp.fwd_comm_s - cp.fwd_exposed_s) * sm;
      lc.bwd_compute_s += (cp.bwd_comm_s - cp.bwd_exposed_s) * sm;
    }
  }
  if (s_.recompute == Recompute::kFull) {
    lc.bwd_compute_s += lc.fwd_compute_s;
    lc.bwd_flop += lc.fwd_flop;
    lc.bwd_tp_s += lc.fwd_tp_s;
    lc.bwd_ep_s += lc.fwd_ep_s;
    lc.bwd_cp_s += lc.fwd_cp_s;
  } else if (s_.recompute == Recompute::kSelective &&
             s_.selective_recompute == SelectiveRecompute::kAlternateMatmuls) {
    // The ops the policy does not save re-run before the backward (their time and FLOPs by share)
    // and so do the TP all-gathers among them (functional all_gather is not in the save list;
    // reduce_scatter is); without SP the TP all-reduces.
    for (size_t i = 0; i < fwd.size(); ++i) {
      const double share = AlternateMatmulShare(m_, s_.tp, fwd[i]);
      if (share <= 0) continue;
      lc.bwd_compute_s += share * (fwd_t.size() == fwd.size() ? fwd_t[i] : c_.OpsTime({fwd[i]}));
      lc.bwd_flop += share * fwd[i].flop;
    }
    if (s_.tp > 1) {
      lc.bwd_tp_s += s_.sp ? 2 * Comm(CommKind::kAllGather, act_bytes_, tp_group_) : lc.fwd_tp_s;
    }
  } else if (s_.recompute == Recompute::kSelective) {
    lc.bwd_compute_s += attn_s;
    double attn_flop = 0;  // TotalFlop of the attention core's ops, in order
    for (const Op& op : fwd) {
      if (IsAttentionCore(op)) attn_flop += op.flop;
    }
    lc.bwd_flop += attn_flop;
  }
  double p = pc_.attention_per_layer / s_.tp + pc_.norms_per_layer;
  p += moe ? pc_.moe_mlp_per_layer / (static_cast<double>(s_.ep) * s_.tp)
           : pc_.dense_mlp_per_layer / s_.tp;
  lc.params = p;
  lc.bwd_compute_s += GradAccum(p);
  if (s_.zero >= 3 && s_.weight_replicas() > 1) {
    const CommPriced rs =
        Priced(CommKind::kReduceScatter, p * s_.zero3.grad_reduce_bytes_per_param, dp_group_);
    const double scatter = rs.time_s;
    const double fwd_busy = lc.fwd_compute_s + lc.fwd_tp_s;
    const double bwd_busy = lc.bwd_compute_s + lc.bwd_tp_s;
    if (s_.zero3.gather == Zero3Gather::kPerTensor) {
      std::vector<double> tensors;
      for (const ParamTensor& t : LayerTensors(m_, l)) {
        tensors.push_back(t.params / (t.tp_split ? s_.tp : 1) / (t.expert ? s_.ep : 1));
      }
      ZeroPerTensor(tensors, tensors, fwd_busy, bwd_busy, scatter, Share(rs, bound_bwd_),
                    s_.recompute == Recompute::kFull ? 2 : 1, &lc);
    } else {
      // Per block: the layer's 16-bit weights are all-gathered over DP before its forward and
      // again before its backward (which also serves the recomputed forward), and its gradients
      // reduce-scattered after it, every micro-batch; prefetched on the DP stream, so only what
      // exceeds the layer's own compute is exposed (the reduce-scatter all of it without
      // overlap_dp).
      const CommPriced ag = Priced(CommKind::kAllGather, p * 2.0, dp_group_);
      const double gather = ag.time_s;
      double copy_out = 0;  // Zero3Traits::block_copy_out: read and write the 16-bit block
      if (s_.zero3.block_copy_out) {
        Op copy;
        copy.name = "all_gather copy-out";
        copy.kind = OpKind::kElementwise;
        copy.bytes = 4.0 * p;
        copy_out = c_.OpsTime({copy});
      }
      lc.fwd_zero_s = std::max(0.0, gather - fwd_busy) + copy_out;
      lc.bwd_zero_s = (s_.overlap_dp ? std::max(0.0, gather + scatter - bwd_busy)
                                     : std::max(0.0, gather - bwd_busy) + scatter) +
                      copy_out;
      // Overlap slowdown: the gather hidden behind each pass, and the reduce-scatter behind the
      // backward with overlap_dp (what hides of gather + scatter, at their time-weighted share).
      lc.fwd_compute_s += std::min(gather, fwd_busy) * Share(ag, bound_fwd_);
      if (s_.overlap_dp) {
        const double both = gather + scatter;
        const double share =
            both > 0 ? (gather * Share(ag, bound_bwd_) + scatter * Share(rs, bound_bwd_)) / both
                     : 0.0;
        lc.bwd_compute_s += std::min(both, bwd_busy) * share;
      } else {
        lc.bwd_compute_s += std::min(gather, bwd_busy) * Share(ag, bound_bwd_);
      }
    }
  }
  return layer_cache_.emplace(moe, lc).first->second;
}

ChunkCost Lowering::Chunk(int stage, int chunk) {
  ChunkCost cc;
  const int v = chunk * s_.pp + stage;
  const LayerRange range = ChunkLayers(m_.layers, s_.pp, s_.vpp, v);
  const int64_t first = range.first, per = range.count;
  auto add = [&](const LayerCost& l) {
    LayerCost& a = cc.sum;
    a.fwd_compute_s += l.fwd_compute_s;
    a.bwd_compute_s += l.bwd_compute_s;
    a.fwd_tp_s += l.fwd_tp_s;
    a.bwd_tp_s += l.bwd_tp_s;
    a.fwd_ep_s += l.fwd_ep_s;
    a.bwd_ep_s += l.bwd_ep_s;
    a.fwd_cp_s += l.fwd_cp_s;
    a.bwd_cp_s += l.bwd_cp_s;
    a.fwd_zero_s += l.fwd_zero_s;
    a.bwd_zero_s += l.bwd_zero_s;
    a.fwd_flop += l.fwd_flop;
    a.bwd_flop += l.bwd_flop;
    a.params += l.params;
  };
  for (int64_t l = first + per - 1; l >= first; --l) {
    const LayerCost& lc = Layer(l);
    add(lc);
    cc.layer_bwd_s.push_back(lc.bwd_s());
    cc.layer_bwd_cp_s.push_back(lc.bwd_cp_s);
    cc.layer_params.push_back(lc.params);
  }
  const bool last_v = v == s_.pp * s_.vpp - 1;
  if (v == 0 || last_v) {
    LayerCost extra;
    std::vector<Op> fwd;
    if (v == 0) fwd = EmbeddingForwardOps(m_, tokens_, shape_);
    if (last_v) {
      std::vector<Op> head = LmHeadForwardOps(m_, tokens_, shape_, true);
      fwd.insert(fwd.end(), head.begin(), head.end());
    }
    const std::vector<Op> bwd = BackwardOps(fwd);
    extra.fwd_compute_s = c_.OpsTime(fwd);
    extra.bwd_compute_s = c_.OpsTime(bwd);
    extra.fwd_flop = TotalFlop(fwd);
    extra.bwd_flop = TotalFlop(bwd);
    if (s_.tp > 1) {
      // Vocab-parallel embedding output reduce; LM head input-gradient reduce.
      const CommKind k = s_.sp ? CommKind::kReduceScatter : CommKind::kAllReduce;
      if (v == 0) extra.fwd_tp_s += Comm(k, act_bytes_, tp_group_);
      if (last_v) extra.bwd_tp_s += Comm(k, act_bytes_, tp_group_);
    }
    double p = 0;
    if (v == 0) p += pc_.embedding / s_.tp;
    if (last_v) {
      p += pc_.final_norm +
           (m_.tied_embeddings ? (s_.pp > 1 ? pc_.embedding : 0.0) : pc_.lm_head) / s_.tp;
    }
    extra.params = p;
    extra.bwd_compute_s += GradAccum(p);
    if (s_.zero >= 3 && s_.weight_replicas() > 1 && s_.zero3.gather == Zero3Gather::kPerTensor) {
      // The embedding (word, then learned positions) and the head (final norm, then the output
      // matrix: the embedding again when tied) are gathered like any other module's tensors,
      // once in the forward and once in the backward (they are not recomputed).
      std::vector<double> tensors;
      const double h = static_cast<double>(m_.hidden);
      if (v == 0) {
        tensors.push_back(static_cast<double>(m_.vocab) * h / s_.tp);
        if (m_.learned_positions) tensors.push_back(static_cast<double>(m_.seq_len) * h);
      }
      if (last_v) {
        tensors.push_back(pc_.final_norm);
        tensors.push_back((m_.tied_embeddings ? static_cast<double>(m_.vocab) * h : pc_.lm_head) /
                          s_.tp);
      }
      // The gradients: a tied head on the embedding's own stage is the same tensor.
      std::vector<double> grads = tensors;
      if (v == 0 && last_v && m_.tied_embeddings) grads.pop_back();
      const CommPriced rs =
          Priced(CommKind::kReduceScatter, p * s_.zero3.grad_reduce_bytes_per_param, dp_group_);
      ZeroPerTensor(tensors, grads, extra.fwd_compute_s + extra.fwd_tp_s,
                    extra.bwd_compute_s + extra.bwd_tp_s, rs.time_s, Share(rs, bound_bwd_), 1,
                    &extra);
    }
    add(extra);
    // Head backward runs first, embedding backward last; a chunk with no layer (the ends of
    // Llama 3's layout) is its embedding or head alone.
    if (cc.layer_bwd_s.empty()) {
      cc.layer_bwd_s.push_back(extra.bwd_s());
      cc.layer_bwd_cp_s.push_back(0.0);
      cc.layer_params.push_back(p);
    } else if (last_v) {
      cc.layer_bwd_s.front() += extra.bwd_s();
      cc.layer_params.front() += p;
    } else {
      cc.layer_bwd_s.back() += extra.bwd_s();
      cc.layer_params.back() += p;
    }
  }
  return cc;
}

double Lowering::P2p() {
  if (s_.pp == 1) return 0;
  const int ra = p2p_from_, rb = p2p_to_;  // rank 0's send, or one across domains
  // A send runs beside its stage's passes (the mix of forward and backward kernels).
  const double bound = 0.5 * (bound_fwd_ + bound_bwd_);
  if (s_.sp && s_.tp > 1) {
    // Sequence parallel: a stage's output is already split over the TP ranks by tokens (the
    // next stage starts with the norm on that shard), so each TP rank sends its own 1/tp over its
    // own NIC and nothing is gathered (Megatron-core schedules.py get_tensor_shapes: seq_length
    // // tp under sequence_parallel).
    const CommPriced part = c_.P2pPricedOf(act_bytes_ / s_.tp, ra, rb);
    p2p_share_ = Share(part, bound);
    return part.time_s;
  }
  const CommPriced direct = c_.P2pPricedOf(act_bytes_, ra, rb);
  double t = direct.time_s;
  p2p_share_ = Share(direct, bound);
  if (s_.scatter_gather && s_.tp > 1) {
    // Each TP rank sends 1/tp over its own NIC, the receivers all-gather on NVLink.
    const CommPriced part = c_.P2pPricedOf(act_bytes_ / s_.tp, ra, rb);
    const double sg = part.time_s + Comm(CommKind::kAllGather, act_bytes_, tp_group_);
    if (sg < t) {
      t = sg;
      p2p_share_ = Share(part, bound);
    }
  }
  return t;
}

}  // namespace train_internal
}  // namespace ndt
