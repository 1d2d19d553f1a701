// File: parallel/train_lowering.h
// Internal to parallel/: the lowering of one training iteration (train_sim.h) as a class whose
// parts live in two files by concern: what one layer, one chunk and one pipeline message cost
// (train_layer_cost.cc: operators, TP / EP / CP communication, recompute, unfused gradient
// accumulation, ZeRO-3's gathers, the overlap slowdowns) and the task graph built from them and
// run (train_sim.cc: passes in schedule order, pipeline sends, DP buckets, optimizer, the
// breakdown, the closed form). Not part of the module's interface: include train_sim.h.
#ifndef NDTWIN_PARALLEL_TRAIN_LOWERING_H_
#define NDTWIN_PARALLEL_TRAIN_LOWERING_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "parallel/schedule.h"
#include "parallel/step_estimate.h"
#include "parallel/train_sim.h"
#include "sim/task_graph.h"

namespace ndt {
namespace train_internal {

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
    shape_.attention_kernel = s.attention_kernel;
    shape_.eager_elementwise = s.eager_elementwise;
    shape_.fp8_current_scaling = s.fp8_current_scaling;
    shape_.math = s.precision;
    tokens_ = static_cast<double>(s.mbs) * static_cast<double>(m.seq_len) / s.cp;
    act_bytes_ = tokens_ * static_cast<double>(m.hidden) * 2.0;
    const std::array<int, 4> c0 = {0, 0, 0, 0};
    tp_group_ = GroupRanks(s, Axis::kTp, c0);
    cp_group_ = GroupRanks(s, Axis::kCp, c0);
    dp_group_ = DataParallelRanks(s, c0);  // gradients reduce over DP x CP
    ep_group_ = ExpertGroupRanks(s, c0);
    pc_ = CountParams(m);
    PickStraddlingGroups();
  }

  StatusOr<TrainSimResult> Run();

 private:
  double Comm(CommKind k, double bytes, const std::vector<int>& g) {
    return Priced(k, bytes, g).time_s;
  }
  // The call with its footprint on compute it overlaps (costs.h CommPriced).
  CommPriced Priced(CommKind k, double bytes, const std::vector<int>& g) {
    if (g.size() < 2 || bytes <= 0) return {};
    // The group's first and last rank tell a straddling group from rank 0's of the same shape.
    const auto key =
        std::make_tuple(static_cast<int>(k), bytes, g.size(), g[1] - g[0], g.front(), g.back());
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
  // OpsTime of the ops kept by `keep`, summed from per-op `times` when they are known
  // (train_layer_cost.cc OpTimes: the same number, each op priced once).
  template <typename Keep>
  double OpsTimeOf(const std::vector<Op>& ops, const std::vector<double>& times, Keep keep) const;
  double TpPass();  // TP communication of one layer pass (fwd or bwd)
  // ZeRO 1-2: the updated weights' all-gather of a stage holding `params` (16-bit): all of it,
  // or with overlap_param_gather what the next step's first forward does not hide
  // (step_estimate.h ParamGatherExposedS; first bucket dp_bucket_params).
  double ParamGatherS(const std::vector<ChunkCost>& stage_chunks, double params);
  // With TrainSimOptions::nvlink_domain_gpus: replaces each of tp_group_, cp_group_, ep_group_
  // and dp_group_ by the slowest of rank 0's and one straddling group per split
  // (StraddlingGroups), each priced on the layer's call (TP: a pass's collectives; CP: the
  // layer's K/V exchange; EP: the dispatch all-to-all; DP: one gradient bucket), and sets
  // p2p_from_ / p2p_to_ to a pipeline send across domains (StraddlingPipelineSend).
  void PickStraddlingGroups();
  // With TP overlap run by TE userbuffers in pieces (TpOverlapTraits::gemm_pieces): `ops` with
  // each overlapped GEMM replaced by its pieces (the ring-exchange ones tp GEMMs of tokens/tp
  // rows, the pipelined reduce-scatter ones rs_splits GEMMs), each reading the whole weight.
  std::vector<Op> TpOverlapPieces(std::vector<Op> ops) const;
  // With ring context parallelism (CpComm::kRing): `ops` with each fused attention core replaced
  // by its cp ring steps, one kernel per K/V block as Transformer Engine's
  // AttnFuncWithCPAndKVP2P (and PyTorch's ring attention) runs them, each 1/cp of the work. With
  // Megatron's load-balanced chunks (c = seq / (2 cp) tokens, two per rank) a step is the rank's
  // 2c queries against one c-token K/V chunk, or its second c queries against a whole 2c block;
  // the ring waits each step for its slowest rank, and rank cp - 1 runs the first kind at every
  // step (the diagonal step is 2c^2 causal pairs, also c keys per query), so every step is priced
  // at c keys per query: same q_len, 1/cp of the FLOPs and bytes. A K/V-block-walking kernel
  // (compute.yaml fused_attention) is slower on the shorter walk; FA2's flat rate only
  // pays cp launches. After the steps, the memory-bound kernels that merge them: the output
  // corrections (forward) and the dQ / dK-dV accumulations (backward).
  std::vector<Op> CpRingSteps(std::vector<Op> ops) const;
  // Unfused gradient accumulation of `params` weights, averaged over the micro-batches: fp16
  // gradients accumulate in place in fp16 (read the new gradient and the sum, write the sum:
  // 6 B/param), every micro-batch but the first (AccumulateGrad takes the first as is); other
  // precisions into an fp32 main_grad (2 + 4 + 4 B/param) every micro-batch, as Megatron-LM
  // requires for bf16. One kernel per layer (kernel launch priced once per op).
  double GradAccum(double params) const;
  // HBM bytes per parameter of the optimizer step (Megatron-LM's mixed-precision optimizer with
  // Apex's FusedAdam): the gradient norm reads the fp32 gradients (4), Adam reads the fp32 weight,
  // gradient, m and v and writes weight, m and v (28), the updated weights are copied to the
  // 16-bit model weights (4 + 2). fp16 adds the loss-scaled path: the fp16 gradients copied to
  // fp32 (2 + 4) and unscaled with the inf/nan check (4 + 4). bf16 gradients already sit in an
  // fp32 main_grad. Clipping's rescale (only when the norm exceeds the limit) is left out.
  double OptimizerBytesPerParam() const;
  // ZeRO-3 gathered per tensor (Zero3Gather::kPerTensor) for one layer, or the embedding / LM
  // head: the gathers a pass of `busy_s` compute exposes (tensors below the persistence threshold
  // are never gathered; those within the prefetch bucket hide behind the compute; the others
  // wait on the critical path), times the passes that gather: the forward, then `bwd_passes` in
  // the backward (2 for a layer under full recompute: the recomputed forward gathers again). The
  // gradients' reduce-scatter (`scatter_s`) overlaps the backward compute with overlap_dp, and
  // waits on the critical path without it (DeepSpeed's overlap_comm false). What hides behind
  // compute slows it (scatter_share: the reduce-scatter's Share beside the backward). With
  // Zero3Traits::reduce_per_tensor the reduce-scatter is priced here per tensor instead.
  // `grads`: the tensors whose gradients it reduces (`tensors` less a tied head's duplicate).
  void ZeroPerTensor(const std::vector<double>& tensors, const std::vector<double>& grads,
                     double fwd_busy_s, double bwd_busy_s, double scatter_s, double scatter_share,
                     int bwd_passes, LayerCost* lc);
  // Zero3Traits::zero_fill: the torch.zeros fill of a gathered tensor's flat buffer (`bytes`).
  double ZeroFill(double bytes);
  // Copying a gathered tensor of `bytes` out of the flat receive buffer into the world-size
  // output tensors (Zero3Traits::copy_out_per_rank): one memory-bound copy kernel of bytes / n
  // per DP rank, each read and written once.
  double CopyOut(double bytes);
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
  int p2p_from_ = 0, p2p_to_ = 0;  // the pipeline send priced (ranks; equal: rank 0's)
  ParamCounts pc_;
  std::map<std::tuple<int, double, size_t, int, int, int>, CommPriced> comm_cache_;
  // Fraction of a dense layer's forward / backward time in compute-bound kernels (-1: unset).
  double bound_fwd_ = -1, bound_bwd_ = -1;
  double p2p_share_ = 0;  // a pipeline send's Share beside its stage's passes
  std::map<bool, LayerCost> layer_cache_;
  std::map<double, double> copy_cache_;
};

}  // namespace train_internal
}  // namespace ndt

#endif  // NDTWIN_PARALLEL_TRAIN_LOWERING_H_
