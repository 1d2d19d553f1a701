// File: parallel/train_sim.cc
// Lowering of one training iteration to a sim/ task graph and its run; model in train_sim.h.
#include "parallel/train_sim.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/check.h"
#include "parallel/context_parallel.h"
#include "parallel/memory.h"
#include "parallel/schedule.h"
#include "parallel/step_estimate.h"
#include "sim/task_graph.h"

namespace ndt {
namespace {

enum Tag { kFwd = 0, kBwd = 1, kP2p = 2, kDp = 3, kOpt = 4, kCp = 5 };

class Lowering {
 public:
  Lowering(const TransformerSpec& m, const Strategy& s, const TrainCosts& c,
           const TrainSimOptions& o)
      : m_(m), s_(s), c_(c), o_(o) {
    shape_.micro_batch = static_cast<double>(s.mbs);
    shape_.seq_len = static_cast<double>(m.seq_len);
    shape_.causal = true;
    shape_.tp = s.tp;
    shape_.cp = s.cp;
    shape_.ep = s.ep;
    shape_.sequence_parallel = s.sp;
    shape_.fused_attention = s.flash_attention;
    shape_.math = s.precision;
    tokens_ = static_cast<double>(s.mbs) * static_cast<double>(m.seq_len) / s.cp;
    act_bytes_ = tokens_ * static_cast<double>(m.hidden) * 2.0;
    const std::array<int, 4> c0 = {0, 0, 0, 0};
    tp_group_ = GroupRanks(s, Axis::kTp, c0);
    cp_group_ = GroupRanks(s, Axis::kCp, c0);
    dp_group_ = DataParallelRanks(s, c0);  // gradients reduce over DP x CP
    ep_group_ = ExpertGroupRanks(s, c0);
    pc_ = CountParams(m);
  }

  StatusOr<TrainSimResult> Run();

 private:
  double Comm(CommKind k, double bytes, const std::vector<int>& g) {
    return Priced(k, bytes, g).time_s;
  }
  // The call with its footprint on compute it overlaps (costs.h CommPriced).
  CommPriced Priced(CommKind k, double bytes, const std::vector<int>& g) {
    if (g.size() < 2 || bytes <= 0) return {};
    const auto key = std::make_tuple(static_cast<int>(k), bytes, g.size(), g[1] - g[0]);
    auto it = comm_cache_.find(key);
    if (it != comm_cache_.end()) return it->second;
    return comm_cache_.emplace(key, c_.CommPricedOf(k, bytes, g)).first->second;
  }
  // How much slower a pass runs beside a communication call (overlap slowdown): its
  // compute-bound kernels (GEMMs, the attention core: a fraction `bound` of the pass's time) lose
  // the SMs the call's CTAs hold, its memory-bound kernels the HBM bandwidth the call uses. A
  // window of w seconds beside the call then costs the pass w x this share more (the work done
  // at 1 - share of the speed in w, the rest at full speed after; sim/task_graph.h).
  static double Share(const CommPriced& c, double bound) {
    return bound * c.sm_share + (1.0 - bound) * c.hbm_share;
  }
  // The fraction of `ops`' time in compute-bound kernels (GEMMs and the attention core).
  double BoundFraction(const std::vector<Op>& ops) const {
    std::vector<Op> bound;
    for (const Op& op : ops) {
      if (op.kind == OpKind::kGemm || IsAttentionCore(op)) bound.push_back(op);
    }
    const double all = c_.OpsTime(ops);
    return all > 0 ? std::min(1.0, c_.OpsTime(bound) / all) : 1.0;
  }
  double TpPass() {  // TP communication of one layer pass (fwd or bwd)
    if (s_.tp == 1) return 0;
    if (s_.sp) {
      return 2 * Comm(CommKind::kAllGather, act_bytes_, tp_group_) +
             2 * Comm(CommKind::kReduceScatter, act_bytes_, tp_group_);
    }
    return 2 * Comm(CommKind::kAllReduce, act_bytes_, tp_group_);
  }
  // Unfused gradient accumulation of `params` weights, averaged over the micro-batches: fp16
  // gradients accumulate in place in fp16 (read the new gradient and the sum, write the sum:
  // 6 B/param), every micro-batch but the first (AccumulateGrad takes the first as is); other
  // precisions into an fp32 main_grad (2 + 4 + 4 B/param) every micro-batch, as Megatron-LM
  // requires for bf16. One kernel per layer (kernel launch priced once per op).
  double GradAccum(double params) const {
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
  // HBM bytes per parameter of the optimizer step (Megatron-LM's mixed-precision optimizer with
  // Apex's FusedAdam): the gradient norm reads the fp32 gradients (4), Adam reads the fp32 weight,
  // gradient, m and v and writes weight, m and v (28), the updated weights are copied to the
  // 16-bit model weights (4 + 2). fp16 adds the loss-scaled path: the fp16 gradients copied to
  // fp32 (2 + 4) and unscaled with the inf/nan check (4 + 4). bf16 gradients already sit in an
  // fp32 main_grad. Clipping's rescale (only when the norm exceeds the limit) is left out.
  double OptimizerBytesPerParam() const {
    return 38.0 + (s_.precision == Dtype::kFp16 ? 14.0 : 0.0);
  }
  // ZeRO-3 gathered per tensor (Zero3Gather::kPerTensor) for one layer, or the embedding / LM
  // head: the gathers a pass of `busy_s` compute exposes (tensors below the persistence threshold
  // are never gathered; those within the prefetch bucket hide behind the compute; the others
  // wait on the critical path), times the passes that gather: the forward, then `bwd_passes` in
  // the backward (2 for a layer under full recompute: the recomputed forward gathers again). The
  // gradients' reduce-scatter (`scatter_s`) overlaps the backward compute with overlap_dp, and
  // waits on the critical path without it (DeepSpeed's overlap_comm false). What hides behind
  // compute slows it (scatter_share: the reduce-scatter's Share beside the backward).
  void ZeroPerTensor(const std::vector<double>& tensors, double fwd_busy_s, double bwd_busy_s,
                     double scatter_s, double scatter_share, int bwd_passes, LayerCost* lc) {
    double exposed = 0, hidden = 0, hidden_share = 0;
    for (double t : tensors) {
      if (t < s_.zero3.persistence_threshold_params) continue;
      const CommPriced ag = Priced(CommKind::kAllGather, t * 2.0, dp_group_);
      const double g = ag.time_s + CopyOut(t * 2.0);
      if (t <= s_.zero3.prefetch_bucket_params) {
        hidden += g;
        hidden_share += ag.time_s * Share(ag, bound_fwd_);  // time-weighted below
      } else {
        exposed += g;
      }
    }
    if (hidden > 0) hidden_share /= hidden;
    lc->fwd_zero_s = exposed + std::max(0.0, hidden - fwd_busy_s);
    lc->bwd_zero_s = bwd_passes * (exposed + std::max(0.0, hidden - bwd_busy_s / bwd_passes)) +
                     (s_.overlap_dp ? std::max(0.0, scatter_s - bwd_busy_s) : scatter_s);
    // Overlap slowdown: the prefetched gathers beside each pass, the overlapped reduce-scatter
    // beside the backward.
    lc->fwd_compute_s += std::min(hidden, fwd_busy_s) * hidden_share;
    lc->bwd_compute_s += bwd_passes * std::min(hidden, bwd_busy_s / bwd_passes) * hidden_share;
    if (s_.overlap_dp) lc->bwd_compute_s += std::min(scatter_s, bwd_busy_s) * scatter_share;
  }
  // Copying a gathered tensor of `bytes` out of the flat receive buffer into the world-size
  // output tensors (Zero3Traits::copy_out_per_rank): one memory-bound copy kernel of bytes / n
  // per DP rank, each read and written once.
  double CopyOut(double bytes) {
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
  using Chunks = std::vector<std::vector<ChunkCost>>;  // [stage][chunk]
  // The task graph of one iteration while it is built; outer index [stage] unless noted.
  struct Graph {
    struct StageRes {
      ResourceId compute, send_fwd, send_bwd, dp;
    };
    TaskGraph g;
    std::vector<StageRes> res;
    // (first, last) task of each pass: index [stage][fwd][chunk * m + mb].
    std::vector<std::vector<std::vector<std::pair<TaskId, TaskId>>>> pass;
    std::vector<std::vector<PipeStep>> sched;
    std::vector<std::vector<std::vector<TaskId>>> last_layers;  // [stage][chunk] -> tasks
    std::vector<TaskId> last_compute, opt_task;
    double stage0_opt_s = 0;  // optimizer step of stage 0
  };
  StatusOr<TrainSimResult> EstimateClosedForm(const Chunks& chunks, double p2p_s);
  std::string TaskName(const char* what, int c, int64_t mb) const;
  // Per stage: its four streams, the pass table, the schedule.
  void AddStages(Graph* lg);
  // The forward and backward passes in each stage's schedule order (blocking sends folded in).
  void AddComputeTasks(const Chunks& chunks, double p2p_s, Graph* lg);
  // The last backward of a chunk: one task per layer, so DP buckets can start early.
  std::pair<TaskId, TaskId> AddLayerBackwards(const ChunkCost& cc, const PipeStep& ps,
                                              double block_s, ResourceId compute, Graph* lg,
                                              std::vector<TaskId>* layers);
  // Pipeline messages, added in each stage's execution order. Blocking sends were folded into
  // the sending pass; their stream task then only carries the dependency.
  void AddPipelineSends(double p2p_s, Graph* lg);
  // DP gradient buckets, optimizer, ZeRO weight all-gather.
  void AddDpAndOptimizer(const Chunks& chunks, Graph* lg);
  // Also sums the stage's parameters, bucket by bucket, into *stage_params.
  std::vector<TaskId> AddGradBuckets(const std::vector<ChunkCost>& stage_chunks, int st, Graph* lg,
                                     double* stage_params);
  TrainSimResult Collect(const Chunks& chunks, const Graph& lg, const Timeline& tl);
  void AddTraceSpans(const Graph& lg, const Timeline& tl, TrainSimResult* r) const;
  const LayerCost& Layer(int64_t l);
  ChunkCost Chunk(int stage, int chunk);
  double P2p();

  const TransformerSpec& m_;
  const Strategy& s_;
  const TrainCosts& c_;
  const TrainSimOptions& o_;
  OpShape shape_;
  double tokens_ = 0, act_bytes_ = 0;
  std::vector<int> tp_group_, cp_group_, dp_group_, ep_group_;
  ParamCounts pc_;
  std::map<std::tuple<int, double, size_t, int>, CommPriced> comm_cache_;
  // Fraction of a dense layer's forward / backward time in compute-bound kernels (-1: unset).
  double bound_fwd_ = -1, bound_bwd_ = -1;
  double p2p_share_ = 0;  // a pipeline send's Share beside its stage's passes
  std::map<bool, LayerCost> layer_cache_;
  std::map<double, double> copy_cache_;
};

const LayerCost& Lowering::Layer(int64_t l) {
  const bool moe = m_.IsMoeLayer(l);
  auto it = layer_cache_.find(moe);
  if (it != layer_cache_.end()) return it->second;
  LayerCost lc;
  const std::vector<Op> fwd = LayerForwardOps(m_, l, shape_);
  const std::vector<Op> bwd = LayerBackwardOps(m_, l, shape_);
  std::vector<Op> attn;
  for (const Op& op : fwd) {
    if (IsAttentionCore(op)) attn.push_back(op);
  }
  const double attn_s = c_.OpsTime(attn);
  lc.fwd_compute_s = c_.OpsTime(fwd);
  lc.bwd_compute_s = c_.OpsTime(bwd);
  if (!moe || bound_fwd_ < 0) {  // the dense layer's mix stands for the step's
    bound_fwd_ = BoundFraction(fwd);
    bound_bwd_ = BoundFraction(bwd);
  }
  lc.fwd_flop = TotalFlop(fwd);
  lc.bwd_flop = TotalFlop(bwd);
  lc.fwd_tp_s = TpPass();
  lc.bwd_tp_s = TpPass();
  if (s_.tp_overlap && s_.tp > 1) {
    // Each chunked collective hides under the GEMM it feeds; one chunk (1/tp) stays exposed.
    auto gemm_s = [&](const std::vector<Op>& ops) {
      std::vector<Op> g;
      for (const Op& op : ops) {
        if (op.kind == OpKind::kGemm && !IsAttentionCore(op)) g.push_back(op);
      }
      return c_.OpsTime(g);
    };
    const double fwd_all = lc.fwd_tp_s, bwd_all = lc.bwd_tp_s;
    lc.fwd_tp_s = std::max(lc.fwd_tp_s / s_.tp, lc.fwd_tp_s - gemm_s(fwd));
    lc.bwd_tp_s = std::max(lc.bwd_tp_s / s_.tp, lc.bwd_tp_s - gemm_s(bwd));
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
  if (moe && s_.ep > 1) {
    const double tok = tokens_ / (s_.sp ? s_.tp : 1);
    const double bytes = tok * m_.moe.top_k * static_cast<double>(m_.hidden) * 2.0;
    lc.fwd_ep_s = 2 * Comm(CommKind::kAllToAll, bytes, ep_group_);
    lc.bwd_ep_s = lc.fwd_ep_s;
  }
  if (s_.cp > 1) {
    std::vector<Op> attn_bwd;
    for (const Op& op : bwd) {
      if (IsAttentionCore(op)) attn_bwd.push_back(op);
    }
    const CpLayerComm cp =
        CpLayerCost(s_.cp_comm, CpKvBytes(m_, static_cast<double>(s_.mbs), s_.tp, s_.cp), attn_s,
                    c_.OpsTime(attn_bwd), cp_group_, c_);
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
  } else if (s_.recompute == Recompute::kSelective) {
    lc.bwd_compute_s += attn_s;
    lc.bwd_flop += TotalFlop(attn);
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
      ZeroPerTensor(tensors, fwd_busy, bwd_busy, scatter, Share(rs, bound_bwd_),
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
      const CommPriced rs =
          Priced(CommKind::kReduceScatter, p * s_.zero3.grad_reduce_bytes_per_param, dp_group_);
      ZeroPerTensor(tensors, extra.fwd_compute_s + extra.fwd_tp_s,
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
  const std::array<int, 4> a = {0, 0, 0, 0};
  const std::array<int, 4> b = {0, 0, 0, 1};
  const int ra = RankOf(s_, a), rb = RankOf(s_, b);
  const CommPriced direct = c_.P2pPricedOf(act_bytes_, ra, rb);
  double t = direct.time_s;
  // A send runs beside its stage's passes (the mix of forward and backward kernels).
  const double bound = 0.5 * (bound_fwd_ + bound_bwd_);
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

StatusOr<TrainSimResult> Lowering::Run() {
  Layer(0);  // sets the op mix (bound_fwd_, bound_bwd_) the overlap slowdowns use
  Chunks chunks(s_.pp);
  for (int st = 0; st < s_.pp; ++st) {
    for (int c = 0; c < s_.vpp; ++c) chunks[st].push_back(Chunk(st, c));
  }
  const double p2p_s = P2p();
  if (o_.closed_form) return EstimateClosedForm(chunks, p2p_s);
  Graph lg;
  AddStages(&lg);
  AddComputeTasks(chunks, p2p_s, &lg);
  AddPipelineSends(p2p_s, &lg);
  AddDpAndOptimizer(chunks, &lg);
  NDT_ASSIGN_OR_RETURN(Timeline tl, RunTaskGraph(lg.g));
  TrainSimResult r = Collect(chunks, lg, tl);
  if (o_.want_trace) AddTraceSpans(lg, tl, &r);
  return r;
}

StatusOr<TrainSimResult> Lowering::EstimateClosedForm(const Chunks& chunks, double p2p_s) {
  const int pp = s_.pp;
  // Gradients reduce in their buffer's type (fp32 main_grad for bf16); weights gather in 16-bit.
  const double grad_bytes = GradBytesPerParam(s_.precision);
  std::vector<StageTail> tails(pp);
  const CommKind kind = s_.zero >= 1 ? CommKind::kReduceScatter : CommKind::kAllReduce;
  for (int st = 0; st < pp; ++st) {
    double params = 0;
    for (const ChunkCost& cc : chunks[st]) params += cc.sum.params;
    StageTail& t = tails[st];
    Op adam;
    adam.kind = OpKind::kElementwise;
    adam.bytes = OptimizerBytesPerParam() * params / (s_.zero >= 1 ? s_.weight_replicas() : 1);
    t.optimizer_s = c_.OpsTime({adam});
    t.p2p_share = s_.overlap_p2p ? p2p_share_ : 0.0;
    if (s_.weight_replicas() > 1 && s_.zero < 3) {
      const CommPriced full = Priced(kind, params * grad_bytes, dp_group_);
      t.dp_full_s = full.time_s;
      t.dp_share = Share(full, bound_bwd_);
      t.dp_bucket_s = Comm(kind, std::min(params, o_.dp_bucket_params) * grad_bytes, dp_group_);
      if (s_.zero >= 1) t.gather_s = Comm(CommKind::kAllGather, params * 2.0, dp_group_);
    }
  }
  return EstimateStep(m_, s_, chunks, tails, p2p_s);
}

std::string Lowering::TaskName(const char* what, int c, int64_t mb) const {
  return o_.want_trace ? std::string(what) + " mb" + std::to_string(mb) + " c" + std::to_string(c)
                       : std::string();
}

void Lowering::AddStages(Graph* lg) {
  const int pp = s_.pp, vpp = s_.vpp;
  const int64_t m = s_.micro_batches();
  lg->res.resize(pp);
  for (int st = 0; st < pp; ++st) {
    lg->res[st].compute = lg->g.AddResource("compute", st);
    lg->res[st].send_fwd = lg->g.AddResource("pp send fwd", st);
    lg->res[st].send_bwd = lg->g.AddResource("pp send bwd", st);
    lg->res[st].dp = lg->g.AddResource("dp comm", st);
  }
  lg->pass.assign(pp, std::vector<std::vector<std::pair<TaskId, TaskId>>>(
                          2, std::vector<std::pair<TaskId, TaskId>>(static_cast<size_t>(vpp * m))));
  lg->sched.resize(pp);
  lg->last_layers.resize(pp);
  lg->last_compute.resize(pp);
  lg->opt_task.resize(pp);
  for (int st = 0; st < pp; ++st) {
    lg->sched[st] = StageSchedule(s_.schedule, pp, vpp, m, st);
    lg->last_layers[st].resize(vpp);
  }
}

void Lowering::AddComputeTasks(const Chunks& chunks, double p2p_s, Graph* lg) {
  const int pp = s_.pp, nv = s_.pp * s_.vpp;
  const int64_t m = s_.micro_batches();
  TaskGraph& g = lg->g;
  for (int st = 0; st < pp; ++st) {
    const ResourceId compute = lg->res[st].compute;
    for (const PipeStep& ps : lg->sched[st]) {
      const ChunkCost& cc = chunks[st][ps.chunk];
      const size_t idx = static_cast<size_t>(ps.chunk * m + ps.micro_batch);
      const int v = ps.chunk * pp + st;
      const bool sends = ps.forward ? v + 1 < nv : v > 0;
      const double block_s = !s_.overlap_p2p && sends ? p2p_s : 0.0;
      // A pass's exposed CP exchange is its own span on the compute stream, after the pass's
      // kernels (same total; the trace shows it).
      auto add_pass = [&](double total_s, double cp_s, int tag, const char* what,
                          const char* cp_what) -> std::pair<TaskId, TaskId> {
        const TaskId t = g.AddTask(compute, total_s - cp_s + block_s, tag,
                                   TaskName(what, ps.chunk, ps.micro_batch));
        if (cp_s <= 0) return {t, t};
        return {t, g.AddTask(compute, cp_s, kCp, TaskName(cp_what, ps.chunk, ps.micro_batch))};
      };
      if (ps.forward) {
        lg->pass[st][1][idx] = add_pass(cc.sum.fwd_s(), cc.sum.fwd_cp_s, kFwd, "fwd", "cp fwd");
      } else if (ps.micro_batch == m - 1 && s_.weight_replicas() > 1) {
        lg->pass[st][0][idx] =
            AddLayerBackwards(cc, ps, block_s, compute, lg, &lg->last_layers[st][ps.chunk]);
      } else {
        lg->pass[st][0][idx] = add_pass(cc.sum.bwd_s(), cc.sum.bwd_cp_s, kBwd, "bwd", "cp bwd");
      }
    }
    lg->last_compute[st] = g.tasks().empty() ? 0 : static_cast<TaskId>(g.tasks().size() - 1);
  }
}

std::pair<TaskId, TaskId> Lowering::AddLayerBackwards(const ChunkCost& cc, const PipeStep& ps,
                                                      double block_s, ResourceId compute, Graph* lg,
                                                      std::vector<TaskId>* layers) {
  const bool trace = o_.want_trace;
  TaskId first = -1, last = -1;
  for (size_t l = 0; l < cc.layer_bwd_s.size(); ++l) {
    const double extra = l + 1 == cc.layer_bwd_s.size() ? block_s : 0.0;
    const double cp_s = cc.layer_bwd_cp_s[l];
    const std::string layer = trace ? " L" + std::to_string(l) : std::string();
    last = lg->g.AddTask(compute, cc.layer_bwd_s[l] - cp_s + extra, kBwd,
                         trace ? TaskName("bwd", ps.chunk, ps.micro_batch) + layer : std::string());
    if (first < 0) first = last;
    if (cp_s > 0) {
      last = lg->g.AddTask(compute, cp_s, kCp,
                           trace ? TaskName("cp bwd", ps.chunk, ps.micro_batch) + layer : "");
    }
    layers->push_back(last);
  }
  return {first, last};
}

void Lowering::AddPipelineSends(double p2p_s, Graph* lg) {
  const int pp = s_.pp, nv = s_.pp * s_.vpp;
  const int64_t m = s_.micro_batches();
  TaskGraph& g = lg->g;
  const auto& pass = lg->pass;
  const double send_s = s_.overlap_p2p ? p2p_s : 0.0;
  for (int st = 0; st < pp; ++st) {
    for (const PipeStep& ps : lg->sched[st]) {
      const int v = ps.chunk * pp + st;
      const size_t idx = static_cast<size_t>(ps.chunk * m + ps.micro_batch);
      if (ps.forward && v + 1 < nv) {
        const int ns = (v + 1) % pp, nc = (v + 1) / pp;
        const TaskId send = g.AddTask(lg->res[st].send_fwd, send_s, kP2p,
                                      TaskName("send act", ps.chunk, ps.micro_batch));
        if (send_s > 0) g.SetSlowdown(send, lg->res[st].compute, p2p_share_);
        g.AddDep(pass[st][1][idx].second, send);
        g.AddDep(send, pass[ns][1][static_cast<size_t>(nc * m + ps.micro_batch)].first);
      } else if (!ps.forward && v > 0) {
        const int ns = (v - 1) % pp, nc = (v - 1) / pp;
        const TaskId send = g.AddTask(lg->res[st].send_bwd, send_s, kP2p,
                                      TaskName("send grad", ps.chunk, ps.micro_batch));
        if (send_s > 0) g.SetSlowdown(send, lg->res[st].compute, p2p_share_);
        g.AddDep(pass[st][0][idx].second, send);
        g.AddDep(send, pass[ns][0][static_cast<size_t>(nc * m + ps.micro_batch)].first);
      }
    }
  }
}

std::vector<TaskId> Lowering::AddGradBuckets(const std::vector<ChunkCost>& stage_chunks, int st,
                                             Graph* lg, double* stage_params) {
  // Gradients reduce in their buffer's type (fp32 main_grad for bf16).
  const double grad_bytes = GradBytesPerParam(s_.precision);
  const CommKind grad_kind = s_.zero >= 1 ? CommKind::kReduceScatter : CommKind::kAllReduce;
  std::vector<TaskId> dp_tasks;
  // Chunks finish their last backward in reverse chunk order.
  for (int c = s_.vpp - 1; c >= 0; --c) {
    const ChunkCost& cc = stage_chunks[c];
    double acc = 0;
    for (size_t l = 0; l < cc.layer_params.size(); ++l) {
      acc += cc.layer_params[l];
      *stage_params += cc.layer_params[l];
      if (acc >= o_.dp_bucket_params || l + 1 == cc.layer_params.size()) {
        const CommPriced bucket = Priced(grad_kind, acc * grad_bytes, dp_group_);
        const TaskId t = lg->g.AddTask(lg->res[st].dp, bucket.time_s, kDp,
                                       o_.want_trace ? "grad bucket c" + std::to_string(c) : "");
        // Overlap slowdown: the bucket's kernels take SMs and HBM from the backward beside it.
        lg->g.SetSlowdown(t, lg->res[st].compute, Share(bucket, bound_bwd_));
        lg->g.AddDep(s_.overlap_dp ? lg->last_layers[st][c][l] : lg->last_compute[st], t);
        dp_tasks.push_back(t);
        acc = 0;
      }
    }
  }
  return dp_tasks;
}

void Lowering::AddDpAndOptimizer(const Chunks& chunks, Graph* lg) {
  const bool trace = o_.want_trace;
  TaskGraph& g = lg->g;
  for (int st = 0; st < s_.pp; ++st) {
    const bool per_layer = s_.zero >= 3;  // ZeRO-3 moves weights and gradients per layer
    std::vector<TaskId> dp_tasks;
    double stage_params = 0;
    if (s_.weight_replicas() > 1 && !per_layer) {
      dp_tasks = AddGradBuckets(chunks[st], st, lg, &stage_params);
    } else {
      for (const ChunkCost& cc : chunks[st]) stage_params += cc.sum.params;
    }
    const double opt_params = stage_params / (s_.zero >= 1 ? s_.weight_replicas() : 1);
    Op adam;
    adam.name = "adam";
    adam.kind = OpKind::kElementwise;
    adam.bytes = OptimizerBytesPerParam() * opt_params;
    const double opt_s = c_.OpsTime({adam});
    lg->opt_task[st] = g.AddTask(lg->res[st].compute, opt_s, kOpt, trace ? "optimizer" : "");
    for (TaskId t : dp_tasks) g.AddDep(t, lg->opt_task[st]);
    if (s_.zero >= 1 && s_.weight_replicas() > 1 && !per_layer) {
      const TaskId ag =
          g.AddTask(lg->res[st].dp, Comm(CommKind::kAllGather, stage_params * 2.0, dp_group_), kDp,
                    trace ? "param all-gather" : "");
      g.AddDep(lg->opt_task[st], ag);
    }
    if (st == 0) lg->stage0_opt_s = opt_s;
  }
}

TrainSimResult Lowering::Collect(const Chunks& chunks, const Graph& lg, const Timeline& tl) {
  const TaskGraph& g = lg.g;
  TrainSimResult r;
  r.step_time_s = tl.makespan_s;
  r.tasks = static_cast<int64_t>(g.tasks().size());
  r.events = tl.events;
  // Breakdown of stage 0.
  TimeBreakdown bd;
  bd.optimizer_s = lg.stage0_opt_s;
  double busy = StageZeroWork(chunks[0], static_cast<double>(s_.micro_batches()), &bd);
  const double last_bwd_end = tl.spans[lg.opt_task[0]].start_s;
  double compute_end = 0;
  for (TaskId t : g.queue(lg.res[0].compute)) {
    if (g.tasks()[t].tag == kBwd || g.tasks()[t].tag == kCp)
      compute_end = std::max(compute_end, tl.spans[t].end_s);
    // What overlapped communication slowed (SetSlowdown) is compute time too.
    const Span& sp = tl.spans[t];
    const double slowed = std::max(0.0, (sp.end_s - sp.start_s) - g.tasks()[t].duration_s);
    bd.compute_s += slowed;
    busy += slowed;
  }
  bd.dp_comm_s += std::max(0.0, last_bwd_end - compute_end) +
                  std::max(0.0, r.step_time_s - tl.spans[lg.opt_task[0]].end_s);
  bd.pp_bubble_s = std::max(0.0, r.step_time_s - busy - bd.optimizer_s - bd.dp_comm_s);
  r.breakdown = bd;
  StepFlops(m_, s_, chunks, &r);  // every GPU of a stage does the same work
  return r;
}

void Lowering::AddTraceSpans(const Graph& lg, const Timeline& tl, TrainSimResult* r) const {
  const TaskGraph& g = lg.g;
  r->stream_names = {"compute", "pp send fwd", "pp send bwd", "dp comm"};
  static const char* kCat[] = {"forward", "backward", "pp", "dp", "optimizer", "cp"};
  r->spans.reserve(g.tasks().size());
  for (TaskId t = 0; t < static_cast<TaskId>(g.tasks().size()); ++t) {
    const Task& task = g.tasks()[t];
    const Span& sp = tl.spans[t];
    r->spans.push_back({g.resources()[task.resource].track, task.resource % 4, task.name,
                        kCat[task.tag], sp.start_s, sp.end_s - sp.start_s});
  }
}

}  // namespace

StatusOr<TrainSimResult> SimulateTrainingStep(const TransformerSpec& model, const Strategy& s,
                                              const TrainCosts& costs, const TrainSimOptions& opt) {
  Lowering low(model, s, costs, opt);
  return low.Run();
}

}  // namespace ndt
