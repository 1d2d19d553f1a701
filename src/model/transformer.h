// File: model/transformer.h
// A decoder-only transformer as ndtwin sees it: dense (GPT: GeLU MLP of two matrices; Llama:
// SwiGLU MLP of three), GQA/MQA, mixture of experts (Mixtral, DeepSeek-V3) and multi-head latent
// attention (DeepSeek-V3). Presets live in data/models/<name>.yaml (strict YAML, each with a
// `source:`); inline flags and Hugging Face config.json files build the same struct.
// From a spec: parameter counts, model FLOPs per token (6N + attention; Narayanan et al. SC21
// eq. (3)), activation memory per layer (Korthikanti et al. 2022, Table 2) and KV-cache bytes.
// Units: counts are plain numbers (double where they may exceed 2^31), bytes in bytes.
// The operators of a layer (FLOPs, bytes, GEMM shapes) are in model/ops.h.
#ifndef NDTWIN_MODEL_TRANSFORMER_H_
#define NDTWIN_MODEL_TRANSFORMER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace ndt {

// Which fused attention kernel runs the attention core (compute/ prices each from its own
// measurements): FlashAttention-2 (Dao 2023; PyTorch SDPA's flash backend, TE's FlashAttention on
// Ampere), or cuDNN's fused flash attention (Transformer Engine's FusedAttention, which TE prefers
// on sm90 and newer): the arch-native kernels, FlashAttention-3 class on Hopper (wgmma/TMA,
// warp-specialized), FlashAttention-4 class on Blackwell (tcgen05, tensor memory). An arch without
// a calibration for them (compute.yaml `fused_attention`: Ampere) runs FlashAttention-2's.
enum class AttentionKernel { kFlash2, kCudnnFused };
const char* AttentionKernelName(AttentionKernel k);

// Number formats of weights, activations, KV cache and tensor math. The model module does not
// depend on hw/, so it has its own enum; compute/compute.h maps it to hw's Precision.
enum class Dtype { kFp32, kFp16, kBf16, kFp8, kFp4 };
// Bytes per stored element: 4, 2, 2, 1, 0.5625. fp4 is NVFP4 (Blackwell's block-scaled E2M1):
// 4-bit values plus one FP8 E4M3 scale per 16-element block (+1/16 B per element; the per-tensor
// FP32 scale is negligible), kNvfp4ScaleBytesPerElement.
double DtypeBytes(Dtype d);
// NVFP4 block scale: 1 byte (E4M3) per 16 elements. Source: NVIDIA, "Introducing NVFP4 for
// Efficient and Accurate Low-Precision Inference" (developer.nvidia.com/blog, 2025: "each 16-value
// micro-block shares an FP8 E4M3 scale ... plus a second-level FP32 per-tensor scale"); cuBLAS
// docs, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 for CUDA_R_4F_E2M1 inputs. A format definition
// (like fp4's 0.5 B), not a measurement.
inline constexpr double kNvfp4ScaleBytesPerElement = 1.0 / 16.0;
const char* DtypeName(Dtype d);  // "fp32", "fp16", "bf16", "fp8", "fp4"
// Parses "bf16", "FP8", ... Returns false if unknown.
bool ParseDtype(const std::string& s, Dtype* out);

enum class Activation { kGelu, kSwiglu };  // GeLU: up+down (2 matrices); SwiGLU: gate+up+down
enum class NormType { kLayerNorm, kRmsNorm };
enum class AttentionKind { kMha, kGqa, kMla };  // MHA: kv_heads == heads; MQA is GQA with 1
const char* ActivationName(Activation a);
const char* NormTypeName(NormType n);
const char* AttentionKindName(AttentionKind a);

// Mixture of experts. experts == 0 means a dense model.
struct MoeSpec {
  int experts = 0;                // routed experts per MoE layer
  int top_k = 0;                  // routed experts per token
  int shared_experts = 0;         // always-on experts (DeepSeek)
  int64_t expert_ffn_hidden = 0;  // intermediate size of one expert (routed and shared)
  int first_k_dense = 0;          // the first k layers are dense (ffn_hidden), the rest MoE
  double capacity_factor = 1.0;   // tokens per expert = capacity * tokens * top_k / experts
  // Measured load imbalance of the trained router at inference (model yaml moe.rank_imbalance):
  // at imbalance_ep expert-parallel ranks (contiguous expert slots, no EPLB) the busiest rank
  // receives (1 + imbalance_ratio) x the mean rank's routed tokens (model/ops.h
  // BusiestRankLoad). 0: no measurement, routing taken as uniform.
  double imbalance_ratio = 0;
  int imbalance_ep = 0;
  std::string imbalance_source;
};

// Multi-head latent attention (DeepSeek-V2/V3). Used when attention == kMla.
struct MlaSpec {
  int64_t q_lora_rank = 0;       // 0: queries projected directly from hidden
  int64_t kv_lora_rank = 0;      // compressed KV latent size (what the KV cache stores)
  int64_t qk_rope_head_dim = 0;  // decoupled RoPE key dim (shared across heads, cached)
  int64_t qk_nope_head_dim = 0;  // per-head non-RoPE query/key dim
  int64_t v_head_dim = 0;        // per-head value dim
};

struct TransformerSpec {
  std::string name;    // "llama2-70b"
  std::string arch;    // family tag shown by `model list`: "gpt", "llama", "mixtral", "deepseek"
  std::string source;  // where the numbers come from
  int64_t layers = 0;
  int64_t hidden = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;    // == heads for MHA
  int64_t head_dim = 0;    // usually hidden / heads
  int64_t ffn_hidden = 0;  // dense MLP intermediate size (4h for GPT)
  int64_t vocab = 0;
  int64_t seq_len = 0;  // default / maximum training sequence length
  // Tokens one served request may span, input + output: the positions the released model
  // handles (Hugging Face max_position_embeddings). 0: seq_len. Llama 3.1 pre-trained at 8,192
  // and serves 131,072.
  int64_t max_context = 0;
  int64_t served_context() const { return max_context > 0 ? max_context : seq_len; }
  Activation activation = Activation::kGelu;
  NormType norm = NormType::kLayerNorm;
  AttentionKind attention = AttentionKind::kMha;
  bool tied_embeddings = false;    // LM head shares the input embedding matrix
  bool biases = true;              // linear layers have biases (GPT yes, Llama no)
  bool learned_positions = false;  // learned position embedding (seq_len x hidden), as GPT-3
  // Training dropout probability (hidden and attention). Megatron's GPT runs use 0.1; Llama-family
  // recipes 0, and PyTorch's dropout at p = 0 stores no mask.
  double dropout = 0;
  MoeSpec moe;
  MlaSpec mla;

  bool is_moe() const { return moe.experts > 0; }
  // True if layer i (0-based) uses experts.
  bool IsMoeLayer(int64_t i) const { return is_moe() && i >= moe.first_k_dense; }
};

// ---- Bounds ----
// The range of every dimension, one rule for every door (flags, model YAML, config.json, the
// JSON of Python and the web): far beyond every published model (the largest have 126-128
// layers, hidden 25,600 (Megatron 1T), 160 heads, head_dim 256, an MLP of 53,248 (Llama 3
// 405B), a vocabulary of 262,144 (Gemma 3), 256-384 experts, contexts of 10M tokens (Llama 4
// Scout)), so a typo or a hostile value (10^15, 2^62) is refused rather than simulated.
struct ModelDimLimit {
  const char* key;  // the YAML key
  int64_t lo, hi;   // inclusive
};
inline constexpr int64_t kMaxModelLayers = 4096;
inline constexpr int64_t kMaxModelHidden = int64_t{1} << 20;  // 1,048,576
inline constexpr int64_t kMaxModelHeads = 65536;
inline constexpr int64_t kMaxModelHeadDim = 16384;
inline constexpr int64_t kMaxModelFfn = int64_t{1} << 22;    // 4,194,304
inline constexpr int64_t kMaxModelVocab = int64_t{1} << 24;  // 16,777,216
inline constexpr int64_t kMaxModelSeq = int64_t{1} << 24;    // tokens; 10M-token contexts exist
inline constexpr int64_t kMaxModelExperts = 4096;
// "hidden must be in 1..1048576 (got 0)" or Ok; `what` names the value in the door's terms.
Status CheckModelDim(const std::string& what, int64_t v, int64_t lo, int64_t hi);

// Checks ranges (the bounds above) and divisibility ("heads (64) must be divisible by kv_heads
// (6)"...).
Status Validate(const TransformerSpec& spec);

// Architecture families a model file or --arch may name, and what each implies for the keys a
// hand-written file leaves out (the flags' inline model takes the same): gpt is GPT-2/3 and
// Megatron's GPT (GeLU, LayerNorm, biases, tied and learned position embeddings, dropout 0.1,
// ffn 4h, vocab 51,200, seq 2,048); llama, mixtral and deepseek are the Llama family (SwiGLU,
// RMSNorm, no biases, untied, rotary positions, no dropout, ffn the 256-rounded 8h/3, vocab
// 32,000, seq 4,096).
inline constexpr const char* kModelArchs[] = {"gpt", "llama", "mixtral", "deepseek"};
bool IsModelArch(const std::string& arch);
std::string ModelArchList();  // "gpt, llama, mixtral, deepseek"

// ---- Presets and files ----
// data/models under a data dir ("" = NDT_DATA_DIR).
std::string ModelsDir(const std::string& data_dir);
// Names of the presets (file stems) in `dir`, sorted.
std::vector<std::string> ListModels(const std::string& dir);
// Loads all presets in `dir`, sorted by name.
StatusOr<std::vector<TransformerSpec>> LoadAllModels(const std::string& dir);
// `name_or_path`: a preset name in `dir` (case-insensitive) or a path to a .yaml file. Unknown
// names: "unknown model 'x'; did you mean 'y'? (see: ndtwin model list)".
StatusOr<TransformerSpec> LoadModel(const std::string& name_or_path, const std::string& dir);
// Parses one model YAML file (strict).
StatusOr<TransformerSpec> LoadModelFile(const std::string& path);
StatusOr<TransformerSpec> ParseModelYaml(const std::string& text, const std::string& name);

// Inline construction from flags: `--layers --hidden --heads --kv-heads --ffn --vocab --seq
// --arch gpt|llama|mixtral|deepseek`. Zero means "default": kv_heads = heads, then the
// architecture's defaults (kModelArchs above), as a hand-written model file gets them.
struct InlineModelArgs {
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, seq = 0;
  std::string arch = "gpt";  // one of kModelArchs
  std::string name = "custom";
};
StatusOr<TransformerSpec> BuildInlineModel(const InlineModelArgs& args);

// Hugging Face config.json (Llama, Mistral/Mixtral, Qwen2/3(-MoE), GPT-2/NeoX-style keys,
// DeepSeek-V3). Unknown keys are ignored (HF configs carry many); missing required keys are
// errors that name the key.
StatusOr<TransformerSpec> LoadHfConfigFile(const std::string& path);
StatusOr<TransformerSpec> ParseHfConfig(const std::string& json_text, const std::string& name);

// ---- Parameters ----
struct ParamCounts {
  double total = 0;                // every parameter (embedding and LM head counted once if tied)
  double embedding = 0;            // input token embedding (vocab x hidden)
  double lm_head = 0;              // output projection (0 if tied)
  double non_embedding = 0;        // total - embedding - lm_head
  double active_per_token = 0;     // parameters touched by one token (MoE: top_k + shared experts)
  double attention_per_layer = 0;  // QKV + out projections (+ MLA low-rank parts), with biases
  double dense_mlp_per_layer = 0;  // one dense MLP (0 if no dense layer)
  double moe_mlp_per_layer = 0;    // router + all experts of one MoE layer (0 if dense)
  double norms_per_layer = 0;
  double final_norm = 0;
};
ParamCounts CountParams(const TransformerSpec& spec);
// Parameters of layer i (attention + MLP/MoE + norms).
double LayerParams(const TransformerSpec& spec, int64_t i);
// One parameter tensor of a layer as Megatron-LM / DeepSpeed GPT modules hold it (fused QKV
// weight, its bias, the output projection, each norm's weight and bias, the MLP's fused
// up(/gate) weight and bias, the down weight and bias; MoE: the router, then each expert's up and
// down weights; MLA: its low-rank projections as one tensor each side). `params` is the element
// count of the whole tensor; `tp_split` whether Megatron's tensor parallelism splits it (norm
// weights and the row-parallel biases are replicated); `expert` whether expert parallelism does.
struct ParamTensor {
  double params = 0;
  bool tp_split = true;
  bool expert = false;
};
// The tensors of layer i, in forward order; their params sum to LayerParams(spec, i).
std::vector<ParamTensor> LayerTensors(const TransformerSpec& spec, int64_t i);

// ---- FLOPs ----
// Forward FLOPs of one token at position-averaged context `context_len` (GEMMs 2 per MAC over
// active parameters incl. LM head, plus attention QK^T and AV over context_len keys).
double ForwardFlopsPerToken(const TransformerSpec& spec, double context_len);
// Training model FLOPs per token for sequence length s (no recompute): 3 x forward, with
// causal = false counting full s x s attention as Megatron/PaLM do (6N + 12 l h_attn s), and
// causal = true counting half of it.
double TrainingFlopsPerToken(const TransformerSpec& spec, int64_t seq_len, bool causal = false);
// Narayanan et al. SC21 eq. (3) for one iteration of global batch B (GPT, MHA, 4h MLP):
//  with full recompute: 96 B s l h^2 (1 + s/(6h) + V/(16 l h));
//  without:             72 B s l h^2 (1 + s/(6h) + V/(12 l h))  (Korthikanti et al., model FLOPs).
double NarayananIterationFlops(const TransformerSpec& spec, double global_batch, int64_t seq_len,
                               bool full_recompute);

// ---- Activation memory (Korthikanti et al. 2022, 16-bit activations) ----
enum class Recompute { kNone, kSelective, kFull };
const char* RecomputeName(Recompute r);
bool ParseRecompute(const std::string& s, Recompute* out);
// Bytes of activations one layer keeps for backward for micro-batch b, sequence s (per CP
// rank: pass s / cp), tensor-parallel t, with/without sequence parallelism. GPT layer
// (MHA, 4h GeLU) gives exactly the paper's:
//   none:      sbh(34 + 5as/h)            ; TP: sbh(10 + 24/t + 5as/(ht)) ; TP+SP: /t of none
//   selective: sbh(10 + 24/t)  ; TP+SP: 34 sbh / t
//   full:      2 sbh           ; TP+SP: 2 sbh / t
// (with dropout; without it the two 1-byte masks, 2sbh, and the scores' mask and dropped copy,
// 3as^2b, are not kept: 32 + 2as/h in place of 34 + 5as/h).
// Other shapes (GQA, SwiGLU, ffn != 4h, MoE with top_k) follow the same per-tensor derivation.
// Flash attention never materializes the a*s*s scores (nor their dropout mask: it regenerates
// it from the RNG state); backward needs only Q, K, V, the output and the fp32 log-sum-exp per
// head and token, so the 5as/h term becomes 4a/h (Dao et al. 2022, FlashAttention, section 3.1).
double ActivationBytesPerLayer(const TransformerSpec& spec, int64_t layer, double micro_batch,
                               double seq_len, int tp, bool sequence_parallel, Recompute r,
                               bool flash_attention);

// ---- KV cache ----
// Bytes per token over all layers: 2 * layers * kv_heads * head_dim * bytes(kv);
// MLA: (kv_lora_rank + qk_rope_head_dim) * layers * bytes(kv).
double KvCacheBytesPerToken(const TransformerSpec& spec, Dtype kv);
// Weight bytes of the whole model at a precision (all parameters).
double WeightBytes(const TransformerSpec& spec, Dtype weights);

}  // namespace ndt

#endif  // NDTWIN_MODEL_TRANSFORMER_H_
