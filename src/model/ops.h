// File: model/ops.h
// The operators of one transformer layer on one GPU, with FLOPs and HBM bytes, for a micro-batch
// b of sequences of s tokens under tensor parallelism t (Megatron column/row split), sequence
// parallelism (norms and element-wise ops on s/t tokens) and context parallelism (s/cp query
// tokens per rank attending over all s keys, ring attention). GEMMs are C[m x n] = A[m x k] B[k x
// n] with m = tokens; FLOPs = 2 m n k per GEMM. Backward: each GEMM becomes a data-gradient GEMM
// and a weight-gradient GEMM of the same FLOPs (2x forward); attention backward is 2x forward
// (QK^T, AV -> dQ, dK, dV, dP); element-wise and norm backward move about twice the forward bytes.
// Bytes: A, B and C of each GEMM once (weights at the weight dtype, activations at the activation
// dtype); attention reads Q, K, V and writes O once (FlashAttention; K/V at the KV dtype).
// Unfused attention (OpShape::fused_attention false, Megatron-LM before FlashAttention): batched
// GEMMs QK^T and PV over the whole s x kv score matrix (the causal mask does not skip work), with
// the scores through HBM: a fused scale-mask-softmax and a dropout that stores its 1-byte mask.
// Communication is not an operator here (parallel/ and serve/ add it).
#ifndef NDTWIN_MODEL_OPS_H_
#define NDTWIN_MODEL_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "model/transformer.h"

namespace ndt {

enum class OpKind {
  kGemm,         // dense or grouped GEMM (batch > 1: experts of one GPU, same shape)
  kAttention,    // fused attention core (QK^T, softmax, AV)
  kElementwise,  // residual add, activation, dropout, rotary, router top-k, ...
  kNorm,         // LayerNorm / RMSNorm
  kEmbedding,    // token embedding gather
  kLoss,         // softmax + cross-entropy over the vocabulary
};
const char* OpKindName(OpKind k);

enum class Pass { kForward, kBackward };

struct Op {
  std::string name;  // "qkv_proj", "attn_core", "out_proj", "mlp_up", "mlp_gate", "mlp_down",
                     // "router", "experts_up", ..., "norm_attn", "residual", "act"; backward
                     // GEMMs add "_dgrad" / "_wgrad", others "_bwd"
  OpKind kind = OpKind::kElementwise;
  Pass pass = Pass::kForward;
  // GEMM shape (kind == kGemm): C[m x n] = A[m x k] B[k x n], `batch` independent GEMMs.
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  // Attention shape (kind == kAttention), per GPU: `seqs` sequences, `heads` query heads,
  // q_len queries attending kv_len keys each, head dims for QK and V.
  double seqs = 0;
  int64_t heads = 0;
  double q_len = 0, kv_len = 0;
  int64_t head_dim_qk = 0, head_dim_v = 0;
  bool causal = false;
  AttentionKernel attention_kernel = AttentionKernel::kFlash2;
  // Cost.
  double flop = 0;            // floating-point operations the kernel executes
  double bytes = 0;           // HBM bytes read + written
  double weight_bytes = 0;    // part of `bytes` that is weights (or weight gradients)
  double backward_bytes = 0;  // HBM bytes of a non-GEMM op's backward (0: twice `bytes`)
  // Index bookkeeping whose result the backward reuses (the MoE sort of token-expert pairs):
  // BackwardOps emits nothing for it.
  bool no_backward = false;
  // A grouped GEMM over `batch` experts (MoE): the rows of each expert's GEMM (m, as priced);
  // 0: not grouped (dense, or batched over heads). compute/ prices its kernel's own rate.
  double grouped_rows = 0;
  // Transformer Engine's FP8 training recipe (GEMMs only; model/op_builder.h Builder::te_fp8):
  // HBM bytes of the memory-bound kernels TE runs before this GEMM's backward GEMMs: the
  // cast-transpose of the output gradient dY to FP8 (and its transpose, for the weight
  // gradient), and the transpose of the FP8 input a fused norm or activation wrote (for the
  // weight gradient). BackwardOps emits them as "<name>_dy_fp8_cast_transpose" and
  // "<name>_x_fp8_transpose". 0: no such kernel.
  double fp8_dy_cast_bytes = 0;
  double fp8_x_transpose_bytes = 0;
  // A memory-bound kernel that writes (part of) its output transposed: TE's cast-transpose
  // (`fp8_cast_transpose_fused`, `_bgrad_fused`) and `fp8_transpose`, which stage tiles through
  // shared memory to turn rows into columns. compute/ prices its bytes at the arch's measured
  // transpose rate where it has one (compute.yaml `transpose_kernels`), else as any other.
  bool transposes = false;
  Dtype math = Dtype::kBf16;  // precision of the arithmetic
};

// How a layer is run on one GPU.
struct OpShape {
  double micro_batch = 1;  // b: sequences in the micro-batch (or requests)
  double seq_len = 0;      // s: tokens per sequence before the CP split (0 = spec.seq_len)
  double kv_len = 0;       // keys each query may attend to (0 = seq_len: self-attention)
  bool causal = true;      // causal mask (training, prefill)
  int tp = 1;              // tensor parallel degree (heads, ffn, experts' ffn split by t)
  int cp = 1;              // context parallel degree (queries split by cp)
  int ep = 1;              // expert parallel degree (routed experts split by ep)
  // Where the EP ranks come from. false (training, Megatron-LM): EP rides on DP; each GPU routes
  // its own tokens all-to-all and computes as many token-expert pairs as its tokens produce, on
  // experts/ep experts each ffn/tp wide. true (inference, TensorRT-LLM's moe_ep x moe_tp = tp):
  // EP splits the TP group, whose ranks all hold the same tokens; each GPU computes 1/ep of the
  // pairs on experts/ep experts each ffn/(tp/ep) wide. REQUIRES tp % ep == 0 when true.
  bool ep_within_tp = false;
  // The busiest EP rank's routed token-expert pairs over the mean rank's (>= 1; 1 = uniform
  // routing): serving prices the rank the MoE collectives wait for (serve/cost.h,
  // BusiestRankLoad). Training leaves it at 1.
  double moe_rank_load = 1;
  // EP over DP with the ranks' tokens all-gathered before the experts (serving with attention
  // data parallelism: TensorRT-LLM's CUTLASS MoE under enable_attention_dp, serve/cost.h): the
  // fused MoE op receives every EP rank's tokens, sorts all of their token-expert pairs and
  // writes one output row per gathered token (zeros where no local expert was chosen), the
  // reduce-scatter's input. false (training's all-to-all, EP inside TP): the GPU's own tokens.
  // Only with ep > 1 and !ep_within_tp.
  bool moe_all_gathered = false;
  bool sequence_parallel = false;  // norms / element-wise on tokens / t
  bool fused_attention = true;     // false: unfused attention core (see the file comment)
  // Element-wise ops as PyTorch's eager kernels, one per tensor op of the model code (torchtitan
  // of 2024 without torch.compile; the stack trait `elementwise_kernels: eager`): RMSNorm, RoPE
  // and SwiGLU's activation become several kernels each, in fp32 where the code upcasts, with
  // their autograd backward (ops.cc EagerRmsNorm, EagerRope, EagerSwiglu). false: one fused pass
  // each (Megatron's and Transformer Engine's kernels). LayerNorm, GELU and the residual adds are
  // one kernel either way.
  bool eager_elementwise = false;
  AttentionKernel attention_kernel = AttentionKernel::kFlash2;  // which fused kernel
  // Transformer Engine's FP8 recipe scales each tensor by its own amax of this pass (TE 2.x
  // Float8CurrentScaling, "tensorwise"; the software stack's trait `fp8_scaling: current`) instead
  // of the amax history (delayed scaling). model/op_builder.h Builder::te_fp8 says what it adds.
  bool fp8_current_scaling = false;
  Dtype math = Dtype::kBf16;         // GEMM and attention precision
  Dtype weights = Dtype::kBf16;      // weight storage
  Dtype activations = Dtype::kBf16;  // activation storage
  Dtype kv = Dtype::kBf16;           // K/V storage read by attention
  // The attention block's linear layers (QKV or MLA's latent projections and absorbed BMMs, the
  // output projection, and the norm that feeds them) run at the activations' precision with
  // 16-bit weights while the other GEMMs run at `math`: a checkpoint that leaves self-attention
  // unquantized (serve/cost.h: NVIDIA's NVFP4 DeepSeek-R1 checkpoints).
  bool attention_unquantized = false;
};

// Forward operators of layer `layer` (0-based; MoE vs dense by spec.IsMoeLayer) in execution
// order: norm, QKV (or MLA projections), attention core, out proj, residual, norm, MLP or
// router + experts (+ shared experts), residual.
std::vector<Op> LayerForwardOps(const TransformerSpec& spec, int64_t layer, const OpShape& shape);
// Backward operators of the same layer (reverse order).
std::vector<Op> LayerBackwardOps(const TransformerSpec& spec, int64_t layer, const OpShape& shape);
// The backward ops of any forward op list (what LayerBackwardOps uses).
std::vector<Op> BackwardOps(const std::vector<Op>& forward);

// Inference building blocks. Every op of the layer except the attention core, for `tokens`
// tokens of the iteration on this GPU (prefill and decode tokens together).
std::vector<Op> LayerTokenOps(const TransformerSpec& spec, int64_t layer, double tokens,
                              const OpShape& shape);
// The attention core for `seqs` sequences with q_len new tokens each over kv_len keys each
// (decode: q_len = 1, kv_len = context; prefill chunk: q_len = chunk, kv_len = prior + chunk).
// K/V bytes at shape.kv; heads split by shape.tp.
Op AttentionCoreOp(const TransformerSpec& spec, double seqs, double q_len, double kv_len,
                   bool causal, const OpShape& shape);

// Embedding lookup for `tokens` tokens (vocab split by t as Megatron's VocabParallelEmbedding).
std::vector<Op> EmbeddingForwardOps(const TransformerSpec& spec, double tokens,
                                    const OpShape& shape);
// Final norm + LM head GEMM (vocab split by t) + (with_loss) softmax cross-entropy.
std::vector<Op> LmHeadForwardOps(const TransformerSpec& spec, double tokens, const OpShape& shape,
                                 bool with_loss);

// Routing statistics of a mixture-of-experts layer, uniform routing: `routed` tokens each
// choose top_k of `experts` experts (k distinct ones, so each expert gets a token with
// probability k / experts), and a GPU holds `local` of the experts.
// Expected experts of the local ones that receive at least one token (whose weights an
// iteration reads): local * (1 - (1 - k/E)^routed).
double ExpectedDistinctExperts(double routed, int experts, int top_k, double local);
// Expected largest token count over the local experts (the slowest expert of the grouped GEMM):
// balls in bins, routed * k token-expert pairs into E bins, each bin's load Binomial(routed * k,
// 1/E), the local bins taken as independent: E[max] = sum over x >= 0 of (1 - F(x)^local), F the
// binomial CDF; clamped to [routed * k / E, routed] (a bin's mean; a token enters an expert at
// most once). Deterministic (no sampling).
double ExpectedMaxExpertLoad(double routed, int experts, int top_k, double local);
// Real routing is skewed: the busiest of `ep` expert-parallel ranks' routed token-expert pairs
// over the mean rank's, from the model's measured imbalance (MoeSpec::imbalance_ratio r =
// (max - mean) / mean rank load at imbalance_ep = m ranks). Experts sit on ranks in contiguous
// slots (TensorRT-LLM's placement without EPLB), and the excess is one hot spot (the hottest
// expert, or hot experts, on one rank: TensorRT-LLM's large-scale-EP blog) worth r x (E / m)
// experts' mean load; at ep ranks it is spread over the rank's E / ep experts:
// load = 1 + r x ep / m. Capped at ep x min(E / ep, k) / k (a token sends a rank at most
// min(local experts, k) pairs). 1 when there is no measurement (uniform routing) or ep <= 1.
double BusiestRankLoad(const MoeSpec& moe, int ep);

// Whether op is part of the attention core, forward or backward (fused kAttention, or an
// unfused attn_* op): what selective recompute re-runs.
bool IsAttentionCore(const Op& op);
// Whether training's linear layers run Transformer Engine's FP8 recipe (op_builder.h
// Builder::te_fp8): fp8 math over 16-bit activations with fused element-wise kernels. Eager
// element-wise stacks (torchtitan's float8 through torchao) are not TE.
bool TeFp8Recipe(const OpShape& shape);

// Sums.
double TotalFlop(const std::vector<Op>& ops);
double TotalBytes(const std::vector<Op>& ops);

}  // namespace ndt

#endif  // NDTWIN_MODEL_OPS_H_
