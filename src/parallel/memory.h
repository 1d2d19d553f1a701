// File: parallel/memory.h
// Memory per GPU of one training job: weights, gradients and optimizer states (mixed-precision
// Adam: 16-bit weights 2 B/param (+ 2 for TE's cached FP8 copies and transposes of the layers'
// linear weights under its FP8 recipe), gradients 2 B/param (fp16, or a stack whose grad_dtype is
// bf16) or 4 (fp32 main_grad, bf16/fp8),
// fp32 master weights + two moments 12 B/param (16 for fp16: + an fp32 gradient copy); ZeRO 1
// divides the optimizer by DP x CP (experts: by DP x CP / EP), 2 also the gradients, 3 also the
// weights), activations (Korthikanti
// et al. 2022 per layer, model/), times the peak of what the stage's schedule keeps in flight,
// walked pass by pass (parallel/schedule.h: a forward stores its chunk's activations, the backward
// frees them; equal chunks give 1F1B's min(pp - stage, m) micro-batches, interleaved's (pp - stage
// - 1) * 2 + (vpp - 1) * pp + 1 chunk passes, GPipe's m; unequal chunks count what each really
// holds), plus the recompute working set of one layer, the output logits (fp32 and their fp32
// gradient on the last stage; one more fp32 copy where the stack's loss upcasts out of place,
// Strategy::loss_fp32_copy) and the pipeline's message buffers (and ZeRO-3's prefetched layers).
// What the process holds besides (CUDA context, cuBLAS workspace, NCCL's buffers, TP overlap's
// userbuffers, the allocator's fragmentation) is its reserve, parallel/memory_reserve.h, from
// data/memory_reserve.yaml: CheckFits compares the total with the capacity less that. Bytes.
#ifndef NDTWIN_PARALLEL_MEMORY_H_
#define NDTWIN_PARALLEL_MEMORY_H_

#include <span>
#include <string>

#include "core/status.h"
#include "model/transformer.h"
#include "parallel/memory_reserve.h"
#include "parallel/strategy.h"

namespace ndt {

// Transformer Engine's userbuffers for TP communication overlap (Strategy::tp_overlap), allocated
// outside PyTorch's caching allocator (cuMemCreate / cudaMalloc in register_user_buffer_collective,
// userbuffers-host.cpp, TE 1.x): Megatron-Core calls initialize_ub(shape = [seq_length *
// micro_batch_size / cp, hidden_size]) (megatron/training/initialize.py
// _initialize_tp_communicators, core_v0.8.0), and initialize_ub's default methods (TE 1.9-1.12
// module/base.py) register one buffer of that shape per overlapped GEMM: ring_exchange qkv_fprop,
// fc1_fprop, proj_dgrad, fc2_dgrad (all-gathers: uint8 under fp8, else bf16), pipeline
// proj_fprop, fc2_fprop, bulk qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad (bf16). Ten buffers,
// each sized to the full gathered activation whatever the TP degree.
inline constexpr double kUbAllGatherBuffers = 4;
inline constexpr double kUbOtherBuffers = 6;
// Bytes of those buffers per GPU: 0 without TP overlap (or tp < 2), else seq / cp x mbs x hidden x
// (4 x (1 B fp8, 2 B otherwise) + 6 x 2 B).
double UserbufferBytes(const TransformerSpec& model, const Strategy& s);

// Bytes per parameter of the gradient buffer, which is also what the data-parallel reduction
// moves (Megatron-LM / Megatron-core): fp16 training keeps fp16 gradients; bf16 (and fp8, whose
// master gradients are bf16-or-wider) accumulate and reduce them in an fp32 main_grad (Megatron
// forces accumulate_allreduce_grads_in_fp32 for bf16; Llama 3 also accumulates and
// reduce-scatters gradients in fp32, Llama 3 paper section 3.3.4).
double GradBytesPerParam(Dtype precision);
// The same for strategy `s`: its stack's `grad_dtype` trait where it states one
// (Strategy::grad_bytes_per_param: NeMo's 2024 performance recipes keep and reduce bf16
// gradients), else GradBytesPerParam(s.precision). fp16 training keeps fp16 gradients either way.
double GradBytesPerParam(const Strategy& s);

// Transformer Engine's FP8 recipe: fp8 training whose stack runs TE modules (fused element-wise
// kernels; an eager stack's float8 is torchao's, not TE). The same test as model/ops.cc
// LayerForwardOps (Builder::te_fp8).
bool TeFp8(const Strategy& s);
// TE keeps an FP8 copy of every weight of its linear modules and the copy's transpose (the
// backward's dgrad GEMM needs W^T, and Hopper FP8 GEMMs take only the TN layout), cached across
// micro-batches and steps: Megatron-Core's TE wrappers pass is_first_microbatch, so
// TransformerEngineBaseModule.get_fp8_workspace(cache_name="weight") keeps one uint8 buffer of
// the weight's shape and, with grad enabled, a uint8 transpose (TE 1.9-1.12 module/base.py,
// linear.py / layernorm_linear.py / layernorm_mlp.py; grouped_linear.py per expert). 1 + 1 B per
// parameter of the layers' linear weights (not norms, embedding or the output layer, which are
// not TE FP8 modules), on top of the 16-bit weights.
inline constexpr double kTeFp8WeightCacheBytesPerParam = 2;
// What a layer saves for its backward under TE's FP8 recipe, less what ActivationBytesPerLayer
// counts (16-bit everywhere), per micro-batch b, sequence s (per CP rank), TP t (TE 1.11):
//   - sbh / (SP ? t : 1)  QKV's LayerNormLinear saves its norm output ln_out in FP8 (uint8 when
//                         it does not return it), not 2 B; its norm input stays 16-bit
//   - sbh / (SP ? t : 1)  the same for the MLP's FC1 LayerNormLinear (or LayerNormMLP's ln_out)
//   - sb ffn / t          FC2's input (the activation's output) is saved in FP8: te.Linear casts
//                         its input and keeps the FP8 transpose (or, with SP, the FP8 input);
//                         LayerNormMLP keeps gelu_out in FP8. The activation's own input (FC1's
//                         output) stays 16-bit
//   ± sb o_dim / t        the output projection's te.Linear keeps its FP8 input the same way,
//                         while cuDNN's fused attention (FusedAttnFunc, and the CP ring's
//                         AttnFuncWithCPAndKVP2P) keeps its 16-bit q, k, v and out and the fp32
//                         softmax stats (not FP8 without fp8_dot_product_attention): + 1 B per
//                         element without recompute; under selective recompute the attention
//                         core is re-run and nothing keeps its 16-bit output: - 1 B.
// Dense MLPs only for the MLP terms (MoE experts, their dispatch and MLA keep the 16-bit
// count); 0 under full recompute (the layer input only, 16-bit) or without TE FP8.
// Llama 3 8B, t = 1, no recompute: -4096 - 4096 - 14336 + 4096 = -18,432 B per token of 139,392.
double TeFp8ActivationDelta(const TransformerSpec& model, const Strategy& s, int64_t layer,
                            double b, double seq, Recompute r);
// Bytes per parameter of the optimizer states: fp32 master weights, Adam m and v (12), plus for
// fp16 the fp32 copy of the gradients the optimizer makes (16). Megatron's distributed-optimizer
// table: fp16 4 + 16/d, bf16 6 + 12/d bytes per parameter.
double OptimizerStateBytesPerParam(Dtype precision);

struct MemoryBreakdown {
  double weights_bytes = 0;  // 16-bit weights, plus TE's cached FP8 copies under its FP8 recipe
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;       // stored activations of in-flight micro-batches + working set
  double comm_buffers_bytes = 0;      // pipeline send/recv buffers, ZeRO-3's prefetched layers
  double expert_weights_bytes = 0;    // the experts' part of weights_bytes (MoE; ZeRO shards it
                                      // over DP x CP / EP ranks, the rest over DP x CP)
  double params_per_gpu = 0;          // parameters this GPU holds (before ZeRO-3 sharding)
  double fp8_weight_cache_bytes = 0;  // the part of weights_bytes in TE's FP8 weight copies
  double inflight_microbatches = 0;   // in micro-batch units of a whole stage
  int peak_stage = 0;                 // pipeline stage with the largest total
  double total_bytes() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes +
           comm_buffers_bytes;
  }
};

// Activation bytes one layer keeps for its backward under torchtitan's op-level selective
// checkpointing (SelectiveRecompute::kAlternateMatmuls: torchtitan parallelize_llama.py
// _save_list / _custom_policy, 2024; the same policy as parallel/train_layer_cost.cc
// AlternateMatmulShare prices): the checkpoint keeps the block's input and the outputs of the
// ops its policy saves, and re-runs the rest in the backward. A Llama block calls aten.mm as wq,
// wk, wv, wo, w1, w3, w2 and the policy saves every odd-numbered one (wq, wv, w1, w2), the SDPA
// kernel's output and log-sum-exp, and reduce_scatter_tensor's outputs (with SP: after wo and
// w2). 16-bit, per layer, micro-batch b, sequence s (per CP rank), TP t:
//   2sbh / (SP ? t : 1)                      block input
//   + 2sb (q_dim + v_dim + ffn + o_dim) / t  wq, wv, w1 (or a plain MLP's first GEMM), SDPA out
//   + 4 s b heads / t                        the SDPA log-sum-exp (fp32)
//   + 2sbh                                   w2's output (row-parallel: a full-size partial sum)
//   + (SP and t > 1 ? 2 * 2sbh / t : 0)      the two reduce-scatter outputs
// (Llama 3 8B, t = 1: 2h + 2(q + v + ffn + o) + 4a + 2h = 63,616 B per token, against 139,392
// without recompute.) Layers of another layout (MoE, MLA) keep what selective recompute keeps
// there (ActivationBytesPerLayer with Recompute::kSelective).
double AlternateMatmulsActivationBytes(const TransformerSpec& model, int64_t layer, double b,
                                       double s, int tp, bool sp, bool flash_attention);
// Activation bytes one layer keeps under strategy `s` (its recompute and, for selective, which
// selective recompute): ActivationBytesPerLayer, or AlternateMatmulsActivationBytes, plus
// TeFp8ActivationDelta under TE's FP8 recipe.
double LayerActivationBytes(const TransformerSpec& model, const Strategy& s, int64_t layer,
                            double b, double seq, Recompute r);
// Parameters held by pipeline stage `stage` per GPU (TP/EP split; embeddings on the first
// stage, LM head on the last, both when tied and pp > 1).
double StageParamsPerGpu(const TransformerSpec& model, const Strategy& s, int stage);
// The part of StageParamsPerGpu in MoE layers' experts (and router), split by EP x TP: ZeRO
// shards it over DP x CP / EP ranks, not DP x CP.
double StageExpertParamsPerGpu(const TransformerSpec& model, const Strategy& s, int stage);

// Memory of the stage that needs the most. REQUIRES: s resolved (ResolveStrategy).
MemoryBreakdown EstimateMemory(const TransformerSpec& model, const Strategy& s);
// Memory of pipeline stage `stage` (0 .. pp - 1). REQUIRES: s resolved.
MemoryBreakdown StageMemoryOf(const TransformerSpec& model, const Strategy& s, int stage);

// OK if `m` fits in `capacity_bytes` less `reserve` (memory_reserve.h
// ReserveBreakdown::usable_bytes); otherwise kInfeasible naming the largest parts and what would
// make it fit (more TP/PP, recompute, ZeRO, smaller mbs). A ZeRO stage outside `zero_stages` (the
// stack's runnable stages; empty: any) is suggested with "a --stack that runs it".
Status CheckFits(const MemoryBreakdown& m, const ReserveBreakdown& reserve, double capacity_bytes,
                 const Strategy& s, std::span<const int> zero_stages = {});

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_MEMORY_H_
