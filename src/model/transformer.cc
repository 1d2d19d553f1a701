// File: model/transformer.cc
// Names, validation, parameter counts, FLOPs, activation memory and KV-cache size of a
// TransformerSpec. Formulas and their sources are in transformer.h.
#include "model/transformer.h"

#include <cmath>
#include <iterator>
#include <string>

#include "core/strings.h"

namespace ndt {

double DtypeBytes(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
      return 4;
    case Dtype::kFp16:
    case Dtype::kBf16:
      return 2;
    case Dtype::kFp8:
      return 1;
    case Dtype::kFp4:
      return 0.5 + kNvfp4ScaleBytesPerElement;  // E2M1 values + E4M3 block scales
  }
  return 2;
}

const char* DtypeName(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
      return "fp32";
    case Dtype::kFp16:
      return "fp16";
    case Dtype::kBf16:
      return "bf16";
    case Dtype::kFp8:
      return "fp8";
    case Dtype::kFp4:
      return "fp4";
  }
  return "?";
}

bool ParseDtype(const std::string& s, Dtype* out) {
  const std::string l = ToLower(s);
  for (Dtype d : {Dtype::kFp32, Dtype::kFp16, Dtype::kBf16, Dtype::kFp8, Dtype::kFp4}) {
    if (l == DtypeName(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

const char* ActivationName(Activation a) { return a == Activation::kGelu ? "gelu" : "swiglu"; }
const char* NormTypeName(NormType n) { return n == NormType::kLayerNorm ? "layernorm" : "rmsnorm"; }
const char* AttentionKindName(AttentionKind a) {
  switch (a) {
    case AttentionKind::kMha:
      return "mha";
    case AttentionKind::kGqa:
      return "gqa";
    case AttentionKind::kMla:
      return "mla";
  }
  return "?";
}

const char* RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

bool ParseRecompute(const std::string& s, Recompute* out) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    if (ToLower(s) == RecomputeName(r)) {
      *out = r;
      return true;
    }
  }
  return false;
}

Status CheckModelDim(const std::string& what, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return Status::Ok();
  return Status::InvalidInput(what + " must be in " + std::to_string(lo) + ".." +
                              std::to_string(hi) + " (got " + std::to_string(v) + ")");
}

bool IsModelArch(const std::string& arch) {
  for (const char* a : kModelArchs) {
    if (arch == a) return true;
  }
  return false;
}

std::string ModelArchList() {
  std::string s;
  for (const char* a : kModelArchs) s += (s.empty() ? "" : ", ") + std::string(a);
  return s;
}

Status Validate(const TransformerSpec& m) {
  const std::string p = "model '" + m.name + "': ";
  const ModelDimLimit dims[] = {{"layers", 1, kMaxModelLayers},
                                {"hidden", 1, kMaxModelHidden},
                                {"heads", 1, kMaxModelHeads},
                                {"kv_heads", 1, kMaxModelHeads},
                                {"head_dim", 1, kMaxModelHeadDim},
                                {"vocab", 1, kMaxModelVocab},
                                {"seq_len", 1, kMaxModelSeq},
                                {"max_context", 0, kMaxModelSeq},
                                {"ffn_hidden", 0, kMaxModelFfn},
                                {"moe.experts", 0, kMaxModelExperts},
                                {"moe.top_k", 0, kMaxModelExperts},
                                {"moe.shared_experts", 0, kMaxModelExperts},
                                {"moe.expert_ffn_hidden", 0, kMaxModelFfn},
                                {"moe.first_k_dense", 0, kMaxModelLayers},
                                {"mla.q_lora_rank", 0, kMaxModelHidden},
                                {"mla.kv_lora_rank", 0, kMaxModelHidden},
                                {"mla.qk_rope_head_dim", 0, kMaxModelHeadDim},
                                {"mla.qk_nope_head_dim", 0, kMaxModelHeadDim},
                                {"mla.v_head_dim", 0, kMaxModelHeadDim}};
  const int64_t values[] = {m.layers,
                            m.hidden,
                            m.heads,
                            m.kv_heads,
                            m.head_dim,
                            m.vocab,
                            m.seq_len,
                            m.max_context,
                            m.ffn_hidden,
                            m.moe.experts,
                            m.moe.top_k,
                            m.moe.shared_experts,
                            m.moe.expert_ffn_hidden,
                            m.moe.first_k_dense,
                            m.mla.q_lora_rank,
                            m.mla.kv_lora_rank,
                            m.mla.qk_rope_head_dim,
                            m.mla.qk_nope_head_dim,
                            m.mla.v_head_dim};
  static_assert(std::size(dims) == std::size(values));
  for (size_t i = 0; i < std::size(dims); ++i) {
    NDT_RETURN_IF_ERROR(CheckModelDim(p + dims[i].key, values[i], dims[i].lo, dims[i].hi));
  }
  if (m.max_context < 0) {
    return Status::InvalidInput(p + "max_context must be > 0 tokens, or absent for seq_len (got " +
                                std::to_string(m.max_context) + ")");
  }
  if (!(m.dropout >= 0 && m.dropout < 1)) {
    return Status::InvalidInput(p + "dropout must be in [0, 1) (got " + std::to_string(m.dropout) +
                                ")");
  }
  if (m.heads % m.kv_heads != 0) {
    return Status::InvalidInput(p + "heads (" + std::to_string(m.heads) +
                                ") must be divisible by kv_heads (" + std::to_string(m.kv_heads) +
                                "); set kv_heads to a divisor of heads");
  }
  if (m.attention == AttentionKind::kMha && m.kv_heads != m.heads) {
    return Status::InvalidInput(p + "attention mha needs kv_heads == heads; use gqa");
  }
  if (m.attention == AttentionKind::kMla) {
    if (m.mla.kv_lora_rank <= 0 || m.mla.qk_nope_head_dim <= 0 || m.mla.v_head_dim <= 0 ||
        m.mla.qk_rope_head_dim < 0 || m.mla.q_lora_rank < 0) {
      return Status::InvalidInput(p + "mla needs kv_lora_rank, qk_nope_head_dim, v_head_dim > 0");
    }
  }
  const bool has_dense = !m.is_moe() || m.moe.first_k_dense > 0;
  if (has_dense && m.ffn_hidden <= 0) {
    return Status::InvalidInput(p + "ffn_hidden must be positive");
  }
  if (m.is_moe()) {
    if (m.moe.top_k <= 0 || m.moe.top_k > m.moe.experts) {
      return Status::InvalidInput(p + "moe top_k (" + std::to_string(m.moe.top_k) +
                                  ") must be in 1..experts (" + std::to_string(m.moe.experts) +
                                  ")");
    }
    if (m.moe.expert_ffn_hidden <= 0) {
      return Status::InvalidInput(p + "moe expert_ffn_hidden must be positive");
    }
    if (m.moe.first_k_dense < 0 || m.moe.first_k_dense > m.layers) {
      return Status::InvalidInput(p + "moe first_k_dense must be in 0..layers");
    }
    // Tokens per expert = capacity * tokens * top_k / experts; a factor of experts / top_k
    // already gives every expert every token.
    if (!(m.moe.capacity_factor > 0 && m.moe.capacity_factor <= kMaxModelExperts)) {
      return Status::InvalidInput(p + "moe capacity_factor must be in (0, " +
                                  std::to_string(kMaxModelExperts) + "]");
    }
    if (m.moe.shared_experts < 0) return Status::InvalidInput(p + "moe shared_experts < 0");
  }
  return Status::Ok();
}

namespace {

// Matrix parameters (no biases) of the attention block.
double AttentionMatrixParams(const TransformerSpec& m) {
  const double h = static_cast<double>(m.hidden);
  if (m.attention == AttentionKind::kMla) {
    const MlaSpec& a = m.mla;
    const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
    const double q = a.q_lora_rank > 0
                         ? h * a.q_lora_rank + static_cast<double>(a.q_lora_rank) * m.heads * qk
                         : h * m.heads * qk;
    const double kv = h * static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim) +
                      static_cast<double>(a.kv_lora_rank) * m.heads *
                          static_cast<double>(a.qk_nope_head_dim + a.v_head_dim);
    const double o = static_cast<double>(m.heads) * a.v_head_dim * h;
    return q + kv + o;
  }
  const double q = static_cast<double>(m.heads) * m.head_dim;
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim;
  return h * (q + 2 * kv) + q * h;
}

double AttentionBiasAndNormParams(const TransformerSpec& m) {
  double p = 0;
  if (m.attention == AttentionKind::kMla) {
    p += static_cast<double>(m.mla.q_lora_rank + m.mla.kv_lora_rank);  // inner RMSNorms
  } else if (m.biases) {
    p += static_cast<double>(m.heads + 2 * m.kv_heads) * m.head_dim + m.hidden;
  }
  return p;
}

double MlpMatrixParams(const TransformerSpec& m, double ffn) {
  return (m.activation == Activation::kSwiglu ? 3.0 : 2.0) * m.hidden * ffn;
}

double MlpBiasParams(const TransformerSpec& m, double ffn) {
  if (!m.biases) return 0;
  return (m.activation == Activation::kSwiglu ? 2.0 * ffn : ffn) + m.hidden;
}

double NormParams(const TransformerSpec& m) {
  return (m.norm == NormType::kLayerNorm ? 2.0 : 1.0) * m.hidden;
}

double RouterParams(const TransformerSpec& m) {
  return static_cast<double>(m.hidden) * m.moe.experts;
}

// Matrix parameters of layer i that one token multiplies by.
double ActiveLayerMatrixParams(const TransformerSpec& m, int64_t i) {
  double p = AttentionMatrixParams(m);
  if (m.IsMoeLayer(i)) {
    p += RouterParams(m) + (m.moe.top_k + m.moe.shared_experts) *
                               MlpMatrixParams(m, static_cast<double>(m.moe.expert_ffn_hidden));
  } else {
    p += MlpMatrixParams(m, static_cast<double>(m.ffn_hidden));
  }
  return p;
}

int64_t DenseLayers(const TransformerSpec& m) {
  return m.is_moe() ? m.moe.first_k_dense : m.layers;
}

// Attention FLOPs per query per key (QK^T and AV, 2 per MAC), all heads.
double AttentionFlopPerQueryKey(const TransformerSpec& m) {
  if (m.attention == AttentionKind::kMla) {
    return 2.0 * m.heads *
           static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim + m.mla.v_head_dim);
  }
  return 4.0 * m.heads * m.head_dim;
}

double LmHeadMatrixParams(const TransformerSpec& m) {
  return static_cast<double>(m.vocab) * m.hidden;
}

}  // namespace

ParamCounts CountParams(const TransformerSpec& m) {
  ParamCounts c;
  const double h = static_cast<double>(m.hidden);
  c.embedding = static_cast<double>(m.vocab) * h +
                (m.learned_positions ? static_cast<double>(m.seq_len) * h : 0.0);
  c.lm_head = m.tied_embeddings ? 0.0 : LmHeadMatrixParams(m);
  c.attention_per_layer = AttentionMatrixParams(m) + AttentionBiasAndNormParams(m);
  c.norms_per_layer = 2 * NormParams(m);
  const double dense_ffn = static_cast<double>(m.ffn_hidden);
  const int64_t dense_layers = DenseLayers(m);
  c.dense_mlp_per_layer =
      dense_layers > 0 ? MlpMatrixParams(m, dense_ffn) + MlpBiasParams(m, dense_ffn) : 0.0;
  double active_moe = 0;
  if (m.is_moe()) {
    const double eff = static_cast<double>(m.moe.expert_ffn_hidden);
    const double expert = MlpMatrixParams(m, eff) + MlpBiasParams(m, eff);
    c.moe_mlp_per_layer = RouterParams(m) + (m.moe.experts + m.moe.shared_experts) * expert;
    active_moe = RouterParams(m) + (m.moe.top_k + m.moe.shared_experts) * expert;
  }
  c.final_norm = NormParams(m);
  const double per_layer_common = c.attention_per_layer + c.norms_per_layer;
  const double moe_layers = static_cast<double>(m.layers - dense_layers);
  c.non_embedding = m.layers * per_layer_common + dense_layers * c.dense_mlp_per_layer +
                    moe_layers * c.moe_mlp_per_layer + c.final_norm;
  c.total = c.non_embedding + c.embedding + c.lm_head;
  c.active_per_token = m.layers * per_layer_common + dense_layers * c.dense_mlp_per_layer +
                       moe_layers * active_moe + c.final_norm + c.embedding + c.lm_head;
  return c;
}

double LayerParams(const TransformerSpec& m, int64_t i) {
  const ParamCounts c = CountParams(m);
  return c.attention_per_layer + c.norms_per_layer +
         (m.IsMoeLayer(i) ? c.moe_mlp_per_layer : c.dense_mlp_per_layer);
}

std::vector<ParamTensor> LayerTensors(const TransformerSpec& m, int64_t i) {
  std::vector<ParamTensor> t;
  const double h = static_cast<double>(m.hidden);
  const double norm_params = NormParams(m);
  auto norm = [&] {  // LayerNorm: weight and bias; RMSNorm: weight
    if (m.norm == NormType::kLayerNorm) {
      t.push_back({h, false, false});
      t.push_back({h, false, false});
    } else {
      t.push_back({norm_params, false, false});
    }
  };
  norm();
  const double attn_matrix = AttentionMatrixParams(m);
  if (m.attention == AttentionKind::kMla) {
    const double o = static_cast<double>(m.heads) * m.mla.v_head_dim * h;
    t.push_back({attn_matrix - o, true, false});
    const double inner = AttentionBiasAndNormParams(m);
    if (inner > 0) t.push_back({inner, false, false});
    t.push_back({o, true, false});
  } else {
    const double q = static_cast<double>(m.heads) * m.head_dim;
    const double qkv = q + 2.0 * static_cast<double>(m.kv_heads) * m.head_dim;
    t.push_back({h * qkv, true, false});
    if (m.biases) t.push_back({qkv, true, false});
    t.push_back({q * h, true, false});
    if (m.biases) t.push_back({h, false, false});
  }
  norm();
  auto mlp = [&](double ffn, bool expert) {
    const double up = (m.activation == Activation::kSwiglu ? 2.0 : 1.0) * ffn;
    t.push_back({h * up, true, expert});
    if (m.biases) t.push_back({up, true, expert});
    t.push_back({ffn * h, true, expert});
    if (m.biases) t.push_back({h, false, expert});
  };
  if (m.IsMoeLayer(i)) {
    t.push_back({RouterParams(m), false, false});
    const double eff = static_cast<double>(m.moe.expert_ffn_hidden);
    for (int64_t e = 0; e < m.moe.experts + m.moe.shared_experts; ++e) {
      mlp(eff, e < m.moe.experts);
    }
  } else {
    mlp(static_cast<double>(m.ffn_hidden), false);
  }
  return t;
}

double ForwardFlopsPerToken(const TransformerSpec& m, double context_len) {
  double matrix = LmHeadMatrixParams(m);
  for (int64_t i = 0; i < m.layers; ++i) matrix += ActiveLayerMatrixParams(m, i);
  return 2.0 * matrix + m.layers * AttentionFlopPerQueryKey(m) * context_len;
}

double TrainingFlopsPerToken(const TransformerSpec& m, int64_t seq_len, bool causal) {
  const double ctx = causal ? static_cast<double>(seq_len) / 2.0 : static_cast<double>(seq_len);
  return 3.0 * ForwardFlopsPerToken(m, ctx);
}

double NarayananIterationFlops(const TransformerSpec& m, double global_batch, int64_t seq_len,
                               bool full_recompute) {
  const double s = static_cast<double>(seq_len);
  const double l = static_cast<double>(m.layers);
  const double h = static_cast<double>(m.hidden);
  const double v = static_cast<double>(m.vocab);
  const double base = global_batch * s * l * h * h;
  if (full_recompute) return 96.0 * base * (1.0 + s / (6.0 * h) + v / (16.0 * l * h));
  return 72.0 * base * (1.0 + s / (6.0 * h) + v / (12.0 * l * h));
}

double ActivationBytesPerLayer(const TransformerSpec& m, int64_t layer, double b, double s, int tp,
                               bool sp, Recompute r, bool flash) {
  const double t = tp > 0 ? tp : 1;
  const double h = static_cast<double>(m.hidden);
  const double sbh = s * b * h;
  // Replicated across TP ranks unless sequence parallel: layer norm inputs (2 x 2sbh), QKV
  // input 2sbh, MLP input 2sbh, two dropout masks (1 byte each).
  const bool dropout = m.dropout > 0;
  const double replicated = 4 * sbh + 2 * sbh + 2 * sbh + (dropout ? 2 * sbh : 0.0);
  if (r == Recompute::kFull) return 2 * sbh / (sp ? t : 1.0);
  // Split by TP: Q, K, V (2 bytes), out-projection input, MLP hidden tensors.
  double q_dim, k_dim, v_dim, o_dim;
  if (m.attention == AttentionKind::kMla) {
    q_dim = static_cast<double>(m.heads) * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    k_dim = q_dim;
    v_dim = static_cast<double>(m.heads) * m.mla.v_head_dim;
    o_dim = v_dim;
  } else {
    q_dim = static_cast<double>(m.heads) * m.head_dim;
    k_dim = v_dim = static_cast<double>(m.kv_heads) * m.head_dim;
    o_dim = q_dim;
  }
  double split = 2 * s * b * (q_dim + k_dim + v_dim + o_dim);
  const double tensors_per_ffn = m.activation == Activation::kSwiglu ? 3.0 : 2.0;
  if (m.IsMoeLayer(layer)) {
    const double routed = m.moe.top_k * m.moe.capacity_factor;
    const double eff = static_cast<double>(m.moe.expert_ffn_hidden);
    split += 2 * s * b * tensors_per_ffn * eff * (routed + m.moe.shared_experts);
    split += 2 * s * b * h * routed;  // dispatched copies of the expert inputs
  } else {
    split += 2 * s * b * tensors_per_ffn * static_cast<double>(m.ffn_hidden);
  }
  // Attention scores: softmax output (2), dropout mask (1), dropout output (2) per head (no
  // dropout: the softmax output only); with flash attention only the fp32 log-sum-exp per head
  // and token.
  double scores = flash ? 4.0 * m.heads * s * b : (dropout ? 5.0 : 2.0) * m.heads * s * s * b;
  if (r == Recompute::kSelective) scores = 0;
  return replicated / (sp ? t : 1.0) + (split + scores) / t;
}

double KvCacheBytesPerToken(const TransformerSpec& m, Dtype kv) {
  if (m.attention == AttentionKind::kMla) {
    return static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * m.layers *
           DtypeBytes(kv);
  }
  return 2.0 * m.layers * m.kv_heads * m.head_dim * DtypeBytes(kv);
}

double WeightBytes(const TransformerSpec& m, Dtype weights) {
  return CountParams(m).total * DtypeBytes(weights);
}

}  // namespace ndt
