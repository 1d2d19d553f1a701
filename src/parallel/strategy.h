// File: parallel/strategy.h
// How one training job is split over GPUs: data (DP), tensor (TP, Megatron column/row split, with
// optional sequence parallelism SP), pipeline (PP, GPipe / 1F1B / interleaved 1F1B with VPP model
// chunks per stage), context (CP, ring attention) and expert (EP, MoE; carved out of DP as
// Megatron-core does) parallelism; ZeRO stage 0-3 (distributed optimizer / FSDP); activation
// recompute; micro-batch and global batch (gradient accumulation = gbs / (dp * mbs)); precision.
// Rank order follows Megatron-LM: tp, cp, ep, dp, pp from fastest to slowest varying (EP shares
// the DP dimension's ranks: expert groups are the `ep` consecutive DP ranks; with "dp" before
// "ep" in the order, every (dp/ep)-th DP rank, as Megatron-core's RankGenerator splits them).
// Validation returns one-line kInfeasible (does not divide) or kInvalidInput (bad value) errors.
#ifndef NDTWIN_PARALLEL_STRATEGY_H_
#define NDTWIN_PARALLEL_STRATEGY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/transformer.h"
#include "parallel/context_parallel.h"

namespace ndt {

enum class PipeSchedule { kGpipe, kOneFOneB, kInterleaved };
const char* PipeScheduleName(PipeSchedule s);
bool ParsePipeSchedule(const std::string& s, PipeSchedule* out);

// The parallel dimensions a rank has a coordinate in (EP is not separate: it splits DP).
enum class Axis { kTp = 0, kCp = 1, kDp = 2, kPp = 3 };
const char* DimName(Axis d);

// How ZeRO-3 / FSDP moves the sharded 16-bit weights: an implementation trait of the software
// stack (parallel/stack.h, data/stacks/), not a choice of the strategy.
enum class Zero3Gather {
  // One all-gather per transformer block, prefetched one block ahead on its own stream, so only
  // what exceeds the block's compute is exposed; gradients reduce-scattered per block, overlapped
  // with the next block's backward (PyTorch FSDP/FSDP2, Megatron-core's custom FSDP).
  kPerBlock,
  // One all-gather per parameter tensor over every DP rank (DeepSpeed ZeRO-3 as of 2021): a
  // tensor smaller than persistence_threshold_params stays whole on every rank (no gather); one no
  // larger than prefetch_bucket_params is prefetched behind the compute; every larger one is
  // gathered on the critical path when its module runs, in the forward, again in the recomputed
  // forward, and again in the backward (DeepSpeed releases a tensor after each module's forward).
  // Gradients reduce-scatter overlapped with the backward only with overlap_dp.
  kPerTensor,
};
const char* Zero3GatherName(Zero3Gather g);

struct Strategy;
// The interval class (report/intervals.h) a training run's residuals belong to: "training-zero3"
// for ZeRO-3 gathered per parameter tensor (DeepSpeed 2021: the class SC21 Table 2's runs build,
// latency-bound per-tensor gathers), "training" for every other run, per-block FSDP and ZeRO-3
// included (they gather once per block, prefetched, like the DP traffic of the training class).
const char* TrainingIntervalWorkload(const Strategy& s);
bool ParseZero3Gather(const std::string& s, Zero3Gather* out);

// What selective recompute (Recompute::kSelective) re-runs in the backward, from the software
// stack (trait `selective_recompute`).
enum class SelectiveRecompute {
  kAttentionCore,  // Korthikanti et al.: the attention core only (Megatron's selective recompute)
  // PyTorch's op-level selective checkpointing with torchtitan's policy (parallelize_llama.py,
  // 2024): the outputs of the attention kernel and of every second matmul of a block are saved,
  // every other op (the rest of the matmuls, the element-wise ops, TP all-gathers) re-runs.
  kAlternateMatmuls,
};

struct Zero3Traits {
  Zero3Gather gather = Zero3Gather::kPerBlock;
  double persistence_threshold_params = 0;  // kPerTensor: elements; smaller tensors stay whole
  double prefetch_bucket_params = 0;  // kPerTensor: elements; larger tensors are not prefetched
  double grad_reduce_bytes_per_param = 2;  // element size of the gradient reduce-scatter
  // kPerTensor: the gathered tensor is copied out of NCCL's flat buffer in one copy kernel per
  // rank (torch.distributed.all_gather into a list of world-size tensors, PyTorch <= 1.10).
  bool copy_out_per_rank = false;
  // kPerTensor: the gradients are reduce-scattered one parameter tensor at a time over every DP
  // rank (DeepSpeed 2021 partition_parameters._reduce_scatter_gradients), each from a list of
  // world-size input views that PyTorch <= 1.10 first copies into NCCL's flat buffer, one copy
  // kernel per rank (with copy_out_per_rank); false: one reduce-scatter per layer.
  bool reduce_per_tensor = false;
  // kPerTensor: host time of one Python-issued view op. Before each all-gather DeepSpeed 2021
  // synchronizes the device and builds the list of world-size narrow views of the flat buffer in
  // a Python loop, so the GPU waits world-size of them; the copy-out loop that follows is issued
  // from C++ while the all-gather runs. 0: no host cost.
  double host_view_s = 0;
  // kPerTensor: the flat buffer each all-gather lands in is allocated with torch.zeros (DeepSpeed
  // 2021 _allgather_param), a memory-bound fill of the whole gathered tensor before the
  // device synchronize that precedes the gather: on the critical path.
  bool zero_fill = false;
  // kPerBlock: the gathered block is copied out of the flat all-gather buffer into the
  // parameters by one memory-bound kernel on the compute stream, before the block runs
  // (FSDP2's foreach_all_gather_copy_out, in wait_for_unshard).
  bool block_copy_out = false;
  friend bool operator==(const Zero3Traits&, const Zero3Traits&) = default;
};

// How TP communication overlapped with the GEMMs (tp_overlap; Transformer Engine userbuffers)
// runs, from the software stack (data/stacks): the SMs its communication kernels occupy while the
// GEMM beside them runs (TE's num_sm), and whether the all-gathers (TE's ring_exchange) move by
// copy engine instead (TE's use_ce), taking no SMs; the reduce-scatters (TE's pipeline and bulk
// methods) always run on SMs. 0 SMs: the GEMMs are not slowed (a Strategy built without a stack).
// gemm_pieces: the overlapped GEMMs run in pieces, each its own kernel priced at its own shape:
// those beside a ring-exchange all-gather (the column-parallel forward GEMMs, the row-parallel
// data-gradient GEMMs) as tp GEMMs of tokens/tp rows, those beside the pipelined reduce-scatter
// (the row-parallel forward GEMMs) as rs_splits GEMMs of tokens/rs_splits rows.
struct TpOverlapTraits {
  int comm_sms = 0;
  bool ag_copy_engine = true;
  bool gemm_pieces = false;
  int rs_splits = 1;
  friend bool operator==(const TpOverlapTraits&, const TpOverlapTraits&) = default;
};

struct Strategy {
  int tp = 1;
  int pp = 1;
  int dp = 0;  // 0: derived as GPUs / (tp * pp * cp)
  int cp = 1;
  int ep = 1;
  int vpp = 1;  // model chunks per pipeline stage (> 1: interleaved 1F1B)
  bool sp = false;
  // Layers not divisible by pp * vpp: true spreads them unevenly (ChunkLayers: fewer at the
  // ends), false is an error, as Megatron-LM requires by default.
  bool uneven_stages = false;
  int zero = 0;  // 0 none, 1 optimizer states, 2 + gradients, 3 + weights (FSDP)
  Recompute recompute = Recompute::kNone;
  int64_t mbs = 1;                                  // micro-batch size (sequences)
  int64_t gbs = 0;                                  // global batch size (sequences)
  Dtype precision = Dtype::kBf16;                   // GEMM math; weights and activations are 16-bit
  PipeSchedule schedule = PipeSchedule::kOneFOneB;  // kInterleaved when vpp > 1
  bool overlap_dp = true;  // DP gradient reduction in buckets overlapped with backward
  // ZeRO 1-2: the updated weights' all-gather after the optimizer runs bucket by bucket inside
  // the next step's first forward (Megatron-Core --overlap-param-gather: the first bucket's
  // gather is launched in zero_grad, each next one from the forward pre-hook when the one before
  // it is waited on), so only the first bucket is exposed and the rest hides under one
  // micro-batch's forward of the stage (ParamGatherExposedS). false: gathered after the
  // optimizer, all exposed.
  bool overlap_param_gather = false;
  // Pipeline sends run on their own streams, overlapping compute. false: they block the
  // sender's compute stream (Megatron-LM 2021's synchronous send/recv).
  bool overlap_p2p = true;
  bool scatter_gather = true;  // PP messages split over TP ranks' NICs, all-gathered on NVLink
  // TP communication overlapped with the layer's GEMMs (Megatron --tp-comm-overlap, Transformer
  // Engine userbuffers; needs sp): each collective is split into tp chunks pipelined with the
  // GEMM it feeds, so a pass exposes max(tp_comm / tp, tp_comm - its GEMM time). The hidden
  // part slows the GEMMs by the SMs the communication kernels take (TpOverlapTraits).
  bool tp_overlap = false;
  TpOverlapTraits tp_ub;  // set by the software stack
  // Fused (FlashAttention) attention core. false: Megatron-LM's unfused path of 2021 (batched
  // QK^T, fused scale-mask-softmax, dropout, AV), which writes and reads the s x s scores.
  bool flash_attention = true;
  // Which fused kernel runs it when flash_attention is on (set by the software stack): FA2, or
  // cuDNN's arch-native fused kernels that Transformer Engine prefers on sm90 and newer
  // (compute/ prices each; an arch without a calibration for the latter runs FA2's numbers).
  AttentionKernel attention_kernel = AttentionKernel::kFlash2;
  // Norms, RoPE and SwiGLU run as PyTorch's eager kernels (set by the software stack's trait
  // `elementwise_kernels: eager`; model/ops.h OpShape::eager_elementwise); false: fused passes.
  bool eager_elementwise = false;
  // FP8 training scales each tensor by its amax of this pass (Transformer Engine's current
  // scaling; set by the software stack's trait `fp8_scaling: current`), not by the amax history
  // (delayed scaling): model/op_builder.h prices the casts, train_layer_cost.cc the TP amax
  // all-reduces. Only with precision fp8.
  bool fp8_current_scaling = false;
  // What Recompute::kSelective re-runs (set by the software stack).
  SelectiveRecompute selective_recompute = SelectiveRecompute::kAttentionCore;
  // Host time to issue one kernel of the forward from Python (PyTorch eager; set by the software
  // stack's trait `host_issue_per_kernel`). The host runs ahead of the GPU while the kernels are
  // longer than this; where they are shorter the GPU waits, so a layer's forward takes at least
  // its kernel count times this. 0: the host never holds the GPU back.
  double host_issue_per_kernel_s = 0;
  // The loss upcasts the last stage's 16-bit logits to an fp32 copy and runs PyTorch's eager
  // cross-entropy on it (set by the software stack's trait `loss_logits: fp32_copy`): its
  // log-softmax keeps an fp32 output for the backward, whose gradient is a new fp32 tensor, not
  // computed in place (parallel/memory.h counts one more fp32 logits tensor). false: a fused or
  // in-place vocabulary cross-entropy (Megatron's).
  bool loss_fp32_copy = false;
  // Bytes per parameter of the gradient buffer and its data-parallel reduction where the software
  // stack's trait `grad_dtype` states it (2: bf16, as NeMo's 2024 performance recipes ran; 4:
  // fp32 main_grad). 0: the precision's default (parallel/memory.h GradBytesPerParam).
  double grad_bytes_per_param = 0;
  // Weight gradients accumulate across micro-batches inside the wgrad GEMM (Megatron-LM's
  // gradient_accumulation_fusion, 2022+: the GEMM adds into the fp32 main_grad in its epilogue).
  // false: a separate memory-bound add per micro-batch over the stage's gradients, as PyTorch's
  // autograd (AccumulateGrad) and Megatron-LM 2021's DDP did (see train_sim.h).
  bool grad_accum_fusion = true;
  // How context-parallel ranks exchange K and V (parallel/context_parallel.h): Megatron-core's
  // ring of P2P sends overlapped with attention, or Llama 3's exposed all-gather.
  CpComm cp_comm = CpComm::kRing;
  Zero3Traits zero3;  // used when zero == 3 (set by the software stack)
  // Fastest to slowest varying; default Megatron's.
  std::array<Axis, 4> order = {Axis::kTp, Axis::kCp, Axis::kDp, Axis::kPp};
  // Where EP sits beside DP in the rank order (Megatron-core's order string, in which "ep" must be
  // next to "dp": EP splits the DP ranks into dp/ep x ep). false: "ep-dp", Megatron's default
  // tp-cp-ep-dp-pp, EP varies faster, so an expert group is ep consecutive DP coordinates; true:
  // "dp-ep", an expert group takes every (dp/ep)-th DP coordinate.
  bool ep_outer = false;

  int64_t micro_batches() const { return gbs / (static_cast<int64_t>(dp) * mbs); }
  // Ranks holding the same weights: DP x CP (context-parallel ranks see other tokens of the same
  // sequences). Gradients are reduced, and ZeRO shards, over all of them (Megatron-core's
  // data-parallel group "with CP").
  int weight_replicas() const { return dp * cp; }
  int gpus() const { return tp * pp * dp * cp; }
  int degree(Axis d) const;
  // Every field equal (doubles compared exactly): the same strategy for every model of the twin.
  friend bool operator==(const Strategy&, const Strategy&) = default;
};

// Layers of virtual pipeline stage v (v = chunk * pp + stage, 0 .. pp * vpp - 1): {first, count}.
// When pp * vpp does not divide the layers, every virtual stage gets ceil(L / (pp * vpp)) and the
// excess is taken one layer at a time from the ends inwards (v = 0, last, 1, last - 1, ...): the
// stages that also carry the embedding and the LM head get fewer, as Llama 3 405B ran its 126
// layers on 16 stages (7, 8 x 14, 7; Llama 3 paper, section 3.3.2). With one layer per virtual
// stage and two to spare (126 on 16 x 8) the first virtual stage holds only the embedding and the
// last only the LM head and loss: count 0, as Llama 3 ran it.
struct LayerRange {
  int64_t first = 0;
  int64_t count = 0;
};
LayerRange ChunkLayers(int64_t layers, int pp, int vpp, int v);

// A parsed --order: the four axes fastest first, and EP's place beside DP (Strategy::ep_outer).
struct RankOrder {
  std::array<Axis, 4> axes{};
  bool ep_outer = false;
};
// Parses "tp,cp,dp,pp" (any permutation, fastest first; '-' or ',' between), optionally with "ep"
// right before or after "dp" (Megatron-core's "tp-cp-ep-dp-pp"; ep elsewhere is refused, as
// Megatron-core refuses it: EP splits the DP ranks). kInvalidInput naming --order otherwise.
StatusOr<RankOrder> ParseOrder(const std::string& text);
// Megatron-core's expert-parallel rules as train applies them (ResolveStrategy): ep >= 1; ep > 1
// needs an MoE model (kInvalidInput), ep dividing its routed experts and dividing dp
// (kInfeasible: expert groups are carved out of the DP ranks). The planners' enumeration
// (plan/plan.h) proposes only degrees this accepts.
Status CheckExpertDegree(const TransformerSpec& model, int ep, int dp);

// Fills dp (if 0) from num_gpus, sets the schedule from vpp, then checks every divisibility:
// heads % tp, kv_heads % tp, layers % (pp * vpp) (or, with uneven_stages, layers >= pp * vpp - 2),
// gbs % (dp * mbs),
// experts % ep, dp % ep, tp * pp * cp * dp == num_gpus, seq % cp, interleaved needs micro-batches %
// pp == 0, zero in 0..3, sp needs tp > 1. Appends non-fatal advice to `warnings` (e.g. TP spanning
// NVLink domains). Fails with a one-line kInfeasible / kInvalidInput error.
Status ResolveStrategy(const TransformerSpec& model, int num_gpus, int nvlink_domain_gpus,
                       Strategy* s, std::vector<std::string>* warnings);

// Whether some group along `d` spans two NVLink domains (rank r in domain r / domain_gpus, as
// topo/builders.cc numbers them) while rank 0's group lies inside one. The lowering then prices
// that axis's collectives on a straddling group (StraddlingGroups, train_lowering.h). False when
// rank 0's group straddles too, or the job fits one domain.
bool GroupsStraddleDomains(const Strategy& s, Axis d, int domain_gpus);

// The communication groups of a training step: along TP, along CP, the expert-parallel group
// (ExpertGroupRanks) and the gradients' DP x CP group (DataParallelRanks).
enum class CommGroup { kTp, kCp, kEp, kDp };
const char* CommGroupName(CommGroup g);  // "tp", "cp", "ep", "dp"
// The ranks of the group of kind g holding the rank with coordinates `coord`.
std::vector<int> CommGroupRanks(const Strategy& s, CommGroup g, const std::array<int, 4>& coord);
// When rank 0's group of kind g lies inside one NVLink domain (rank r in domain r / domain_gpus)
// but others span two or more: the coordinates of one such group per distinct split (its ranks
// counted per domain, the counts sorted), in rank order of the groups; the lowering prices each
// and takes the slowest. Empty when no group straddles, when rank 0's straddles too (then it is
// priced so), when the block of consecutive ranks holding whole groups divides the domain (the
// common case, answered without a scan), or when domain_gpus < 1 (unknown). Otherwise a scan of
// O(gpus).
std::vector<std::array<int, 4>> StraddlingGroups(const Strategy& s, CommGroup g, int domain_gpus);
// The block of consecutive ranks that holds whole groups of kind g (the degrees of the axes up
// to the group's slowest in s.order; for EP, with dp counted as ep unless ep_outer), and those
// axes' names joined by " x " into *axes (e.g. "tp x cp"; an axis of degree 1 named only when it
// is the group's own).
int64_t GroupBlock(const Strategy& s, CommGroup g, std::string* axes);
// A pipeline send between stages whose ranks sit in two NVLink domains while rank 0's first
// send (stage 0 to 1) stays in one: the coordinates of its sender (pp coordinate < pp - 1), the
// first found (coordinates counted tp fastest, then cp, dp, pp); nullopt when there is none (or
// domain_gpus < 1). Sends across domains all cost alike: one stands for them.
std::optional<std::array<int, 4>> StraddlingPipelineSend(const Strategy& s, int domain_gpus);
// Global rank of the GPU with coordinates coord[Dim] under s.order.
int RankOf(const Strategy& s, const std::array<int, 4>& coord);
// The ranks of the group along `d` that contains the rank with coordinates `coord` (ascending
// coordinate along d).
std::vector<int> GroupRanks(const Strategy& s, Axis d, std::array<int, 4> coord);
// The DP x CP group of that rank (weight_replicas() ranks, ascending CP then DP coordinate).
std::vector<int> DataParallelRanks(const Strategy& s, std::array<int, 4> coord);
// The expert-parallel group of that rank: the `ep` DP ranks sharing dp_coord / ep (ep_outer:
// sharing dp_coord % (dp / ep)).
std::vector<int> ExpertGroupRanks(const Strategy& s, std::array<int, 4> coord);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_STRATEGY_H_
