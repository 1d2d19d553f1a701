// File: model/ops.cc
// Operators of a transformer layer on one GPU (see ops.h for the conventions). MLA is built in
// its training form (K and V up-projected per head) by LayerForwardOps and in its inference
// "absorbed" form (attention over the cached latent, W_UK / W_UV folded into per-head batched
// GEMMs, DeepSeek-V2 section 2.1.2) by LayerTokenOps / AttentionCoreOp.
#include "model/ops.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "core/check.h"
#include "model/op_builder.h"

namespace ndt {

const char* OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kElementwise:
      return "elementwise";
    case OpKind::kNorm:
      return "norm";
    case OpKind::kEmbedding:
      return "embedding";
    case OpKind::kLoss:
      return "loss";
  }
  return "?";
}

const char* AttentionKernelName(AttentionKernel k) {
  return k == AttentionKernel::kCudnnFused ? "cudnn_fused" : "fa2";
}

namespace {

using op_builder::Builder;
using op_builder::Ceil;

int64_t HeadsLocal(const TransformerSpec& s, int t) { return std::max<int64_t>(1, s.heads / t); }
int64_t KvHeadsLocal(const TransformerSpec& s, int t) {
  return std::max<int64_t>(1, s.kv_heads / t);  // replicated when kv_heads < t
}

// Query-key pairs per sequence for q_len queries that are the last q_len of kv_len keys.
double Pairs(double q_len, double kv_len, bool causal) {
  if (!causal) return q_len * kv_len;
  const double prior = std::max(0.0, kv_len - q_len);
  return q_len * prior + q_len * (q_len + 1) / 2;
}

// The shape of the attention block's projections: `shape`, or with 16-bit math and weights when
// the checkpoint leaves them unquantized (OpShape::attention_unquantized).
OpShape ProjectionShape(const OpShape& shape) {
  OpShape p = shape;
  if (shape.attention_unquantized) p.math = p.weights = shape.activations;
  return p;
}

// Ops before the attention core (norm and projections).
void PreAttention(Builder& outer, double tokens, bool absorbed) {
  const OpShape proj = ProjectionShape(outer.shape);
  Builder b{outer.spec, proj, outer.out};
  b.te_fp8 = outer.te_fp8;
  const TransformerSpec& s = b.spec;
  const int t = b.t();
  const int64_t h = s.hidden;
  b.Norm("norm_attn", tokens);
  if (s.attention != AttentionKind::kMla) {
    // FP8 recipe: te.LayerNormLinear's norm writes the QKV GEMM's input in FP8.
    b.Fp8Output(b.NormTokens(tokens) * static_cast<double>(h));
    const int64_t n = (HeadsLocal(s, t) + 2 * KvHeadsLocal(s, t)) * s.head_dim;
    b.Gemm("qkv_proj", tokens, n, h);
    // Learned absolute positions (GPT) are added once at the embedding, not per layer.
    if (s.learned_positions) return;
    if (b.eager()) {
      // torchtitan's apply_rotary_emb (torchtitan/models/llama/model.py, 2024), on Q and on K:
      // x.float() (a+4 bytes per element), view_as_complex and a complex multiply by freqs_cis
      // (8; backward grad * conj(freqs): 8), view_as_real and type_as (4+a): three kernels per
      // tensor, 2a + 16 bytes forward and backward where a fused RoPE moves 2a and 4a.
      const double x = b.a();
      const double hd = static_cast<double>(s.head_dim);
      for (const auto& [which, heads] :
           {std::pair<const char*, int64_t>{"rope_q", HeadsLocal(s, t)},
            std::pair<const char*, int64_t>{"rope_k", KvHeadsLocal(s, t)}}) {
        const double elems = tokens * static_cast<double>(heads) * hd;
        const std::string n = which;
        b.EagerKernel(n + ".to_fp32", OpKind::kElementwise, elems, x + 4, 4 + x, 0);
        b.EagerKernel(n + ".mul_freqs", OpKind::kElementwise, elems, 8, 8, 3);
        b.EagerKernel(n + ".to_act", OpKind::kElementwise, elems, 4 + x, x + 4, 0);
      }
      return;
    }
    b.Elementwise("rope", OpKind::kElementwise,
                  tokens * (HeadsLocal(s, t) + KvHeadsLocal(s, t)) * s.head_dim, 1, 1, 3);
    return;
  }
  const MlaSpec& m = s.mla;
  const int64_t hl = HeadsLocal(s, t);
  const int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank > 0) {
    b.Gemm("q_down", tokens, m.q_lora_rank, h);
    b.Elementwise("q_norm", OpKind::kNorm, tokens * m.q_lora_rank, 1, 1, 5);
    b.Gemm("q_up", tokens, hl * qk, m.q_lora_rank);
  } else {
    b.Gemm("q_proj", tokens, hl * qk, h);
  }
  b.Gemm("kv_down", tokens, m.kv_lora_rank + m.qk_rope_head_dim, h);
  b.Elementwise("kv_norm", OpKind::kNorm, tokens * m.kv_lora_rank, 1, 1, 5);
  if (absorbed) {
    // q_nope (per head) x W_UK -> query in latent space: batched over local heads.
    b.Gemm("q_absorb", tokens, m.kv_lora_rank, m.qk_nope_head_dim, hl);
  } else {
    b.Gemm("kv_up", tokens, hl * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank);
  }
}

// Ops after the attention core: out projection, residual, MLP or MoE, residual.
void PostAttention(Builder& b, int64_t layer, double tokens, bool absorbed) {
  const TransformerSpec& s = b.spec;
  const int t = b.t();
  const int64_t h = s.hidden;
  const double hd = static_cast<double>(h);
  const bool swiglu = s.activation == Activation::kSwiglu;
  const OpShape proj = ProjectionShape(b.shape);
  Builder pb{s, proj, b.out};
  pb.te_fp8 = b.te_fp8;
  if (s.attention == AttentionKind::kMla) {
    const int64_t hl = HeadsLocal(s, t);
    if (absorbed) pb.Gemm("v_up", tokens, s.mla.v_head_dim, s.mla.kv_lora_rank, hl);
    pb.Quantize("attn_out_quant", tokens * static_cast<double>(hl * s.mla.v_head_dim));
    pb.Gemm("out_proj", tokens, h, hl * s.mla.v_head_dim);
  } else {
    pb.Quantize("attn_out_quant", tokens * static_cast<double>(HeadsLocal(s, t) * s.head_dim));
    pb.Gemm("out_proj", tokens, h, HeadsLocal(s, t) * s.head_dim);
  }
  b.Elementwise("residual_attn", OpKind::kElementwise, b.NormTokens(tokens) * hd, 2, 1, 1);
  b.Norm("norm_mlp", tokens);
  // FP8 recipe: a dense layer's MLP is one te.LayerNormMLP (norm, FC1, activation and FC2 fused
  // around FP8 tensors); an MoE layer's norm, router and experts are separate modules.
  const bool layernorm_mlp = b.te_fp8 && !s.IsMoeLayer(layer);
  if (layernorm_mlp) b.Fp8Output(b.NormTokens(tokens) * hd);
  auto mlp = [&](const char* up, const char* act, const char* down, double rows, int64_t ffn,
                 int64_t batch, double rows_total, int split) {
    const int64_t f = std::max<int64_t>(1, ffn / split);
    b.Gemm(up, rows, swiglu ? 2 * f : f, h, batch, rows_total);
    const size_t up_op = b.out->size() - 1;
    const double act_rows = rows_total >= 0 ? rows_total : rows * batch;
    if (swiglu && b.eager()) {
      // torchtitan's FeedForward: F.silu(w1(x)) * w3(x), two kernels; per element of the f-wide
      // activation, silu 2a forward / 3a backward (silu_backward reads grad and input), the
      // multiply 3a / 6a (grad * each factor): 5a and 9a where the fused SwiGLU moves 3a and 6a.
      const double x = b.a(), e = act_rows * static_cast<double>(f);
      b.EagerKernel(std::string(act) + ".silu", OpKind::kElementwise, e, 2 * x, 3 * x, 4);
      b.EagerKernel(std::string(act) + ".mul", OpKind::kElementwise, e, 3 * x, 6 * x, 1);
    } else {
      b.Elementwise(act, OpKind::kElementwise, act_rows * f, swiglu ? 2 : 1, 1, swiglu ? 5 : 8);
    }
    if (layernorm_mlp) {
      // LayerNormMLP's activation writes FC2's input in FP8; GELU's backward casts and
      // transposes FC1's output gradient in the same kernel (fp8_cast_transpose_bgrad_dgelu_
      // fused), SwiGLU's (dswiglu, then fp8_cast_transpose_bgrad_fused) in a kernel of its own,
      // and GELU's too under current scaling (no fused dgelu-cast there: op_builder.h).
      b.Fp8Output(act_rows * static_cast<double>(f));
      if (!swiglu && !b.current_scaling()) (*b.out)[up_op].fp8_dy_cast_bytes = 0;
    }
    b.Quantize("act_quant", act_rows * f);
    b.Gemm(down, rows, h, f, batch, rows_total);
  };
  if (!s.IsMoeLayer(layer)) {
    mlp(swiglu ? "mlp_gate_up" : "mlp_up", "mlp_act", "mlp_down", tokens, s.ffn_hidden, 1, -1, t);
  } else {
    const MoeSpec& e = s.moe;
    const int ep = std::max(1, b.shape.ep);
    const bool in_tp = b.shape.ep_within_tp && ep > 1;
    NDT_CHECK(!in_tp || t % ep == 0, "LayerOps: EP inside the TP group needs tp % ep == 0");
    b.Gemm("router", tokens, e.experts, h);
    b.Elementwise("router_topk", OpKind::kElementwise, tokens * e.experts, 1, 0, 10);
    // Grouping the token-expert pairs by expert before the grouped GEMM (TensorRT-LLM's runMoe,
    // kernels/mixtureOfExperts/moe_kernels.cu: a CUB radix sort of the k x tokens (expert id,
    // source row) int32 pairs, then computeTotalRowsBeforeExpert, the per-expert row offsets
    // the grouped GEMM reads; Megatron-Core's token permutation sorts by expert the same way).
    // Two kernels over 4-byte indices, whatever the activation dtype: the sort reads and writes
    // keys and values (16 bytes per pair), the offsets read the sorted keys (4 bytes per pair).
    // With the ranks' tokens all-gathered (OpShape::moe_all_gathered) the fused op sorts every
    // gathered token's pairs (runMoe's num_rows is the gathered rows: fused_moe_cutlass.py
    // forward_chunk passes the all-gathered x and token_selected_experts to fused_moe).
    const double gathered = b.shape.moe_all_gathered && ep > 1 && !in_tp ? tokens * ep : tokens;
    b.Index("moe_sort", gathered * e.top_k, 16);
    b.Index("moe_expert_offsets", gathered * e.top_k, 4);
    // Token-expert pairs landing on this GPU's experts (uniform routing), and how many of its
    // experts receive at least one token. EP over DP: the ep ranks' tokens meet on each GPU, which
    // gets as many pairs as its own tokens make. EP inside TP: the group's one set of tokens is
    // split, 1/ep of the pairs per GPU, each expert ffn/(tp/ep) wide.
    // Skewed routing (OpShape::moe_rank_load): this GPU is the busiest rank, whose experts see
    // `skew` times the mean rank's pairs, as if that many more tokens were routed uniformly.
    const double skew = ep > 1 ? std::max(1.0, b.shape.moe_rank_load) : 1.0;
    const double routed = (in_tp ? tokens : tokens * ep) * skew;
    const double pairs = tokens * e.top_k * e.capacity_factor / (in_tp ? ep : 1) * skew;
    const int expert_split = in_tp ? t / ep : t;
    const double local = std::max(1.0, static_cast<double>(e.experts) / ep);
    const double active = std::max(1.0, ExpectedDistinctExperts(routed, e.experts, e.top_k, local));
    const int64_t active_n = std::max<int64_t>(1, Ceil(active));
    // Rows of each expert's GEMM in the grouped kernel: with a capacity factor above 1 every
    // expert is padded to its capacity (pairs / active); dropless (capacity 1, the default) the
    // experts' loads differ and the most loaded one sets the grouped GEMM's waves.
    const double rows =
        e.capacity_factor > 1.0
            ? pairs / active_n
            : std::max(pairs / active_n, ExpectedMaxExpertLoad(routed, e.experts, e.top_k, local));
    b.Elementwise("moe_dispatch", OpKind::kElementwise, pairs * hd, 1, 1, 0);
    mlp("experts_gate_up", "experts_act", "experts_down", rows, e.expert_ffn_hidden, active_n,
        pairs, expert_split);
    if (e.shared_experts > 0) {
      mlp("shared_gate_up", "shared_act", "shared_down", tokens,
          e.shared_experts * e.expert_ffn_hidden, 1, -1, t);
    }
    b.Elementwise("moe_combine", OpKind::kElementwise, pairs * hd, 1, 0, 2);
    // The unpermute-and-reduce (finalizeMoeRouting) writes one row per token it was given: with
    // the tokens all-gathered, every gathered token ("If all-gather reduce-scatter is used,
    // finalizeMoeRouting must fill invalid output tokens with zeros", moe_kernels.cu; blocks =
    // num_rows).
    b.Elementwise("moe_combine_out", OpKind::kElementwise, gathered * hd, 0, 1, 0);
  }
  b.Elementwise("residual_mlp", OpKind::kElementwise, b.NormTokens(tokens) * hd, 2, 1, 1);
}

Op AttentionImpl(const TransformerSpec& s, double seqs, double q_len, double kv_len, bool causal,
                 const OpShape& shape, bool absorbed, double pairs_override) {
  const int t = std::max(1, shape.tp);
  Op op;
  op.name = "attn_core";
  op.kind = OpKind::kAttention;
  op.seqs = seqs;
  op.heads = HeadsLocal(s, t);
  op.q_len = q_len;
  op.kv_len = kv_len;
  op.causal = causal;
  op.attention_kernel = shape.attention_kernel;
  op.math = shape.math;
  double kv_heads = static_cast<double>(KvHeadsLocal(s, t));
  double k_dim = 0, v_dim = 0;
  if (s.attention == AttentionKind::kMla) {
    if (absorbed) {
      // MQA over the latent: keys are [c_kv, k_rope] (576), values c_kv (512), one shared head.
      op.head_dim_qk = s.mla.kv_lora_rank + s.mla.qk_rope_head_dim;
      op.head_dim_v = s.mla.kv_lora_rank;
      kv_heads = 1;
      k_dim = static_cast<double>(op.head_dim_qk);
      v_dim = 0;  // the value is the same latent vector as the key: read once
    } else {
      op.head_dim_qk = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;
      op.head_dim_v = s.mla.v_head_dim;
      kv_heads = static_cast<double>(op.heads);
      k_dim = static_cast<double>(op.head_dim_qk);
      v_dim = static_cast<double>(op.head_dim_v);
    }
  } else {
    op.head_dim_qk = op.head_dim_v = s.head_dim;
    k_dim = v_dim = static_cast<double>(s.head_dim);
  }
  const double pairs = pairs_override >= 0 ? pairs_override : Pairs(q_len, kv_len, causal);
  op.flop = 2.0 * seqs * op.heads * pairs * static_cast<double>(op.head_dim_qk + op.head_dim_v);
  const double a = DtypeBytes(shape.activations);
  op.bytes = seqs * (op.heads * q_len * static_cast<double>(op.head_dim_qk + op.head_dim_v) * a +
                     kv_heads * kv_len * (k_dim + v_dim) * DtypeBytes(shape.kv));
  return op;
}

// Megatron-LM's attention core before FlashAttention, per GPU: baddbmm Q K^T into an
// [b*heads, q, kv] 16-bit score tensor, fused scale + causal mask + softmax (reads and writes it:
// 4 B/elem), dropout (reads it, writes it and a 1-byte mask: 5 B/elem), bmm P V. The GEMMs cover
// the whole q x kv rectangle. Backward: the GEMMs' data and weight gradients (dP = dO V^T,
// dV = P^T dO, dQ = dS K, dK = dS^T Q), dropout backward (reads dP and the mask, writes: 5 B/elem)
// and softmax backward (reads P and dP, writes dS: 6 B/elem).
void UnfusedAttention(Builder& b, double seqs, double q_len, double kv_len) {
  const TransformerSpec& s = b.spec;
  const int64_t heads = HeadsLocal(s, b.t());
  const int64_t batch = std::max<int64_t>(1, Ceil(seqs * static_cast<double>(heads)));
  const int64_t kv = std::max<int64_t>(1, Ceil(kv_len));
  const double elems = seqs * static_cast<double>(heads) * q_len * kv_len;
  b.Gemm("attn_scores", q_len, kv, s.head_dim, batch);
  b.Elementwise("attn_softmax", OpKind::kElementwise, elems, 1, 1, 5);
  b.out->back().backward_bytes = 6.0 / 4.0 * b.out->back().bytes;
  const size_t first = b.out->size() - 2;
  if (s.dropout > 0) {
    b.Elementwise("attn_dropout", OpKind::kElementwise, elems, 1, 1, 2);
    b.out->back().bytes += elems;  // the 1-byte keep mask
    b.out->back().backward_bytes = b.out->back().bytes;
  }
  b.Gemm("attn_context", q_len, s.head_dim, kv, batch);
  // Both GEMMs' right operands (K^T, V) are activations, not weights.
  for (size_t i = first; i < b.out->size(); ++i) (*b.out)[i].weight_bytes = 0;
}

double SeqLen(const TransformerSpec& s, const OpShape& shape) {
  return shape.seq_len > 0 ? shape.seq_len : static_cast<double>(s.seq_len);
}

}  // namespace

bool TeFp8Recipe(const OpShape& shape) {
  return shape.math == Dtype::kFp8 && DtypeBytes(shape.activations) == 2 &&
         !shape.eager_elementwise;
}

std::vector<Op> LayerForwardOps(const TransformerSpec& spec, int64_t layer, const OpShape& shape) {
  std::vector<Op> ops;
  Builder b{spec, shape, &ops};
  b.te_fp8 = TeFp8Recipe(shape);
  const double s = SeqLen(spec, shape);
  const int cp = std::max(1, shape.cp);
  const double q_len = s / cp;
  const double kv_len = shape.kv_len > 0 ? shape.kv_len : s;
  const double tokens = shape.micro_batch * q_len;
  PreAttention(b, tokens, /*absorbed=*/false);
  // With CP the causal work is balanced across ranks (Megatron's load-balanced chunks): each
  // rank does 1/cp of the whole sequence's query-key pairs.
  const double pairs = cp > 1 ? Pairs(s, kv_len, shape.causal) / cp : -1;
  if (!shape.fused_attention && spec.attention != AttentionKind::kMla) {
    UnfusedAttention(b, shape.micro_batch, q_len, kv_len);
  } else {
    ops.push_back(AttentionImpl(spec, shape.micro_batch, q_len, kv_len, shape.causal, shape,
                                /*absorbed=*/false, pairs));
  }
  PostAttention(b, layer, tokens, /*absorbed=*/false);
  return ops;
}

std::vector<Op> BackwardOps(const std::vector<Op>& fwd) {
  std::vector<Op> out;
  out.reserve(fwd.size() * 2);
  for (auto it = fwd.rbegin(); it != fwd.rend(); ++it) {
    const Op& f = *it;
    if (f.no_backward) continue;
    if (f.kind == OpKind::kGemm) {
      // FP8 recipe: TE's memory-bound kernels before the backward GEMMs (Op::fp8_dy_cast_bytes).
      for (const auto& [suffix, bytes] :
           {std::pair<const char*, double>{"_dy_fp8_cast_transpose", f.fp8_dy_cast_bytes},
            std::pair<const char*, double>{"_x_fp8_transpose", f.fp8_x_transpose_bytes}}) {
        if (bytes <= 0) continue;
        Op c;
        c.name = f.name + suffix;
        c.kind = OpKind::kElementwise;
        c.pass = Pass::kBackward;
        c.bytes = bytes;
        c.math = f.math;
        c.transposes = true;
        out.push_back(c);
      }
      // Both read/write the same three tensors as the forward GEMM (X, dY, W or dW, dX):
      // same FLOPs and bytes, different shapes.
      const double rows = f.flop / (2.0 * static_cast<double>(f.n) * static_cast<double>(f.k));
      Op d = f;  // dX[m x k] = dY[m x n] W^T[n x k]
      d.name = f.name + "_dgrad";
      d.pass = Pass::kBackward;
      d.n = f.k;
      d.k = f.n;
      out.push_back(d);
      Op w = f;  // dW[k x n] = X^T[k x m] dY[m x n]
      w.name = f.name + "_wgrad";
      w.pass = Pass::kBackward;
      w.m = f.k;
      w.n = f.n;
      w.k = std::max<int64_t>(1, Ceil(rows / static_cast<double>(f.batch)));
      // The weight gradient of a grouped GEMM groups along K (each expert's rows are its
      // reduction), a kernel no grouped_gemm source row measures: priced as the dense model.
      w.grouped_rows = 0;
      out.push_back(w);
    } else {
      Op b = f;
      b.name = f.name + "_bwd";
      b.pass = Pass::kBackward;
      // FlashAttention's backward recomputes the scores S = QK^T it never stored, then forms dV,
      // dP, dQ and dK: five matmuls where the forward has two, 2.5x its FLOPs (Dao 2023,
      // FlashAttention-2 section 3.1.2; its benchmarks count backward FLOPs the same way).
      b.flop = (f.kind == OpKind::kAttention ? 2.5 : 2.0) * f.flop;
      b.bytes = f.kind == OpKind::kEmbedding ? f.bytes : 2 * f.bytes;
      if (f.backward_bytes > 0) b.bytes = f.backward_bytes;
      b.backward_bytes = 0;
      out.push_back(b);
    }
  }
  return out;
}

std::vector<Op> LayerBackwardOps(const TransformerSpec& spec, int64_t layer, const OpShape& shape) {
  return BackwardOps(LayerForwardOps(spec, layer, shape));
}

std::vector<Op> LayerTokenOps(const TransformerSpec& spec, int64_t layer, double tokens,
                              const OpShape& shape) {
  std::vector<Op> ops;
  Builder b{spec, shape, &ops};
  PreAttention(b, tokens, /*absorbed=*/true);
  PostAttention(b, layer, tokens, /*absorbed=*/true);
  return ops;
}

Op AttentionCoreOp(const TransformerSpec& spec, double seqs, double q_len, double kv_len,
                   bool causal, const OpShape& shape) {
  return AttentionImpl(spec, seqs, q_len, kv_len, causal, shape, /*absorbed=*/true, -1);
}

std::vector<Op> EmbeddingForwardOps(const TransformerSpec& spec, double tokens,
                                    const OpShape& shape) {
  std::vector<Op> ops;
  Builder b{spec, shape, &ops};
  const double h = static_cast<double>(spec.hidden);
  Op op;
  op.name = "embedding";
  op.kind = OpKind::kEmbedding;
  op.weight_bytes = tokens * h * b.w() / b.t();  // rows gathered from this rank's vocab shard
  op.bytes = op.weight_bytes + tokens * h * b.a();
  op.math = shape.math;
  ops.push_back(op);
  return ops;
}

std::vector<Op> LmHeadForwardOps(const TransformerSpec& spec, double tokens, const OpShape& shape,
                                 bool with_loss) {
  // Training (with_loss) at fp8: the output layer is not an FP8 module, so its GEMM runs at the
  // activations' 16-bit precision (Megatron-Core's GPTModel.output_layer is
  // tensor_parallel.ColumnParallelLinear, outside Transformer Engine's fp8_autocast reach;
  // torchtitan's float8 conversion skips "output" too).
  OpShape head = shape;
  if (with_loss && shape.math == Dtype::kFp8 && DtypeBytes(shape.activations) == 2) {
    head.math = shape.activations;
  }
  std::vector<Op> ops;
  Builder b{spec, head, &ops};
  b.Norm("final_norm", tokens);
  const int64_t v = std::max<int64_t>(1, spec.vocab / b.t());
  b.Gemm("lm_head", tokens, v, spec.hidden);
  if (with_loss) {
    // Megatron-LM's vocab-parallel cross-entropy (unfused, the default) over fp32 logits, per
    // element of this rank's [tokens x vocab/tp] slice. Forward: upcast the 16-bit logits (read
    // a, write 4), row max (4), subtract in place (4 + 4), exp in place (4 + 4), row sum (4),
    // divide in place (4 + 4): 32 + a + 4 bytes; the softmax is kept for the backward, which
    // scales it by the incoming gradient in place (4 + 4) and casts back (4 + a): 12 + a.
    const double elems = tokens * static_cast<double>(v);
    b.Elementwise("loss", OpKind::kLoss, elems, 0, 0, 5);
    ops.back().bytes = elems * (36.0 + b.a());
    ops.back().backward_bytes = elems * (12.0 + b.a());
  }
  return ops;
}

bool IsAttentionCore(const Op& op) {
  if (op.kind == OpKind::kAttention) return true;
  for (const char* p : {"attn_scores", "attn_softmax", "attn_dropout", "attn_context"}) {
    if (op.name.starts_with(p)) return true;  // forward, _dgrad / _wgrad / _bwd
  }
  return false;
}

double TotalFlop(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& o : ops) f += o.flop;
  return f;
}

double TotalBytes(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& o : ops) f += o.bytes;
  return f;
}

}  // namespace ndt
