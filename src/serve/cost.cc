#include "serve/cost.h"

#include <algorithm>
#include <utility>

namespace ndt {
namespace {

double CachedAt(std::vector<double>* cache, int i, const std::function<double()>& fill) {
  if (i >= static_cast<int>(cache->size())) cache->resize(i + 1, -1.0);
  double& v = (*cache)[i];
  if (v < 0) v = fill();
  return v;
}

}  // namespace

IterationCostModel::IterationCostModel(CostSpec spec) : spec_(std::move(spec)) {
  NDT_CHECK(spec_.model && spec_.gpu && spec_.calibration, "IterationCostModel: null spec");
  shape_.micro_batch = 1;
  shape_.causal = true;
  shape_.tp = spec_.tp;
  shape_.ep = spec_.ep;
  shape_.ep_within_tp = true;  // TensorRT-LLM: moe_tp x moe_ep = tp (CountReplicas checks)
  if (spec_.attention_dp > 1) {
    // Each rank: TP1 on its own tokens; the experts over the ranks (ops.h: EP over DP, each GPU
    // computing as many pairs as its own tokens make).
    shape_.tp = 1;
    shape_.ep = spec_.attention_dp;
    shape_.ep_within_tp = false;
    // The MoE dispatch is an all-gather of the ranks' tokens, so the fused MoE op sorts and
    // writes rows for all of them (model/ops.h OpShape::moe_all_gathered).
    shape_.moe_all_gathered = true;
  }
  // Skewed routing: the MoE layers wait for the busiest EP rank (model/ops.h BusiestRankLoad;
  // 1 without a measured imbalance or without EP).
  shape_.moe_rank_load = BusiestRankLoad(spec_.model->moe, shape_.ep);
  shape_.math = spec_.weights;
  // Weight-only quantization: a GPU without tensor cores for the weights' 8/4-bit format and no
  // 8-bit path to run them in (A100: fp8/fp4 weights) multiplies at the activations' 16-bit
  // precision (W8A16/W4A16 kernels: TensorRT-LLM's fpA_intB, Marlin); the activations stay
  // unquantized and only the weights are read narrow (compute/compute.h WeightOnlyGemm).
  if (DtypeBytes(spec_.weights) < 2 && DtypeBytes(spec_.activations) >= 2 &&
      BytesPer(EffectivePrecision(*spec_.gpu, spec_.weights)) >= 2) {
    shape_.math = spec_.activations;
  }
  shape_.weights = spec_.weights;
  shape_.activations = spec_.activations;
  shape_.kv = spec_.kv;
  // NVIDIA's NVFP4 DeepSeek-R1 checkpoints leave self-attention unquantized (hf_quant_config
  // exclude_modules "model.layers.*.self_attn*"; TensorRT-LLM's DeepSeek-R1 blogs: attention
  // modules bf16): MLA's projections run 16-bit (serve/cost.h).
  shape_.attention_unquantized =
      spec_.model->attention == AttentionKind::kMla && spec_.weights == Dtype::kFp4;
  // The LM head stays 16-bit in fp8/fp4 checkpoints: NVIDIA ModelOpt's default quantization
  // configs disable "*lm_head*" (TensorRT-LLM quantizes through ModelOpt).
  head_shape_ = shape_;
  if (DtypeBytes(spec_.weights) < 2) head_shape_.math = head_shape_.weights = Dtype::kBf16;
  for (int64_t l = 0; l < spec_.model->layers; ++l) {
    if (spec_.model->IsMoeLayer(l)) {
      if (first_moe_ < 0) first_moe_ = l;
      ++moe_layers_;
    } else {
      ++dense_layers_;
    }
  }
}

double IterationCostModel::CommTerms(int tokens) {
  return CachedAt(&comm_cache_, tokens, [&] {
    double act_bytes =
        tokens * static_cast<double>(spec_.model->hidden) * DtypeBytes(spec_.activations);
    double t = 0;
    if (spec_.attention_dp > 1) {
      if (spec_.moe_comm_s) t += static_cast<double>(moe_layers_) * spec_.moe_comm_s(tokens);
    } else if (spec_.tp > 1 && spec_.tp_allreduce_s) {
      t += 2.0 * static_cast<double>(spec_.model->layers) * spec_.tp_allreduce_s(act_bytes, tokens);
    }
    if (spec_.pp > 1 && spec_.pp_sends_s) t += spec_.pp_sends_s(act_bytes);
    return t;
  });
}

double IterationCostModel::TokenTerms(int tokens) {
  return CachedAt(&token_cache_, tokens, [&] {
    const GpuSpec& g = *spec_.gpu;
    const ComputeCalibration& c = *spec_.calibration;
    double t = 0;
    if (dense_layers_ > 0) {  // dense layers come first (first_k_dense)
      t += dense_layers_ * OpsTime(g, LayerTokenOps(*spec_.model, 0, tokens, shape_), c);
    }
    if (moe_layers_ > 0) {
      t += moe_layers_ * OpsTime(g, LayerTokenOps(*spec_.model, first_moe_, tokens, shape_), c);
    }
    return t + OpsTime(g, EmbeddingForwardOps(*spec_.model, tokens, shape_), c);
  });
}

double IterationCostModel::HeadTerms(int outputs) {
  return CachedAt(&head_cache_, outputs, [&] {
    const GpuSpec& g = *spec_.gpu;
    const ComputeCalibration& c = *spec_.calibration;
    return OpsTime(g, LmHeadForwardOps(*spec_.model, outputs, head_shape_, false), c);
  });
}

BatchShape IterationCostModel::BusiestRank(const BatchShape& b, int ranks) {
  NDT_CHECK(ranks >= 1, "BusiestRank: ranks < 1");
  BatchShape out;
  if (static_cast<int>(b.ranks.size()) == ranks) {
    // The engine scheduled each rank (serve/engine.h): its chunks are contiguous, in rank order.
    int busiest = 0, most = -1;
    size_t first = 0, busiest_first = 0;
    for (int r = 0; r < ranks; ++r) {
      int tokens = b.ranks[r].decode_seqs;
      for (int c = 0; c < b.ranks[r].chunks; ++c) tokens += b.chunks[first + c].q_tokens;
      if (tokens > most) {
        most = tokens;
        busiest = r;
        busiest_first = first;
      }
      first += b.ranks[r].chunks;
    }
    NDT_CHECK(first == b.chunks.size(), "BusiestRank: rank chunks do not add up");
    out.decode_seqs = b.ranks[busiest].decode_seqs;
    out.decode_context_tokens = b.ranks[busiest].decode_context_tokens;
    for (int c = 0; c < b.ranks[busiest].chunks; ++c) {
      out.chunks.push_back(b.chunks[busiest_first + c]);
      out.prefill_tokens += b.chunks[busiest_first + c].q_tokens;
    }
    return out;
  }
  std::vector<int> decoders(ranks, b.decode_seqs / ranks), load(ranks);
  for (int r = 0; r < b.decode_seqs % ranks; ++r) ++decoders[r];
  for (int r = 0; r < ranks; ++r) load[r] = decoders[r];
  std::vector<int> owner(b.chunks.size());
  for (size_t c = 0; c < b.chunks.size(); ++c) {
    const int r = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    owner[c] = r;
    load[r] += b.chunks[c].q_tokens;
  }
  const int busiest = static_cast<int>(std::max_element(load.begin(), load.end()) - load.begin());
  out.decode_seqs = decoders[busiest];
  if (b.decode_seqs > 0)
    out.decode_context_tokens = b.decode_context_tokens / b.decode_seqs * out.decode_seqs;
  for (size_t c = 0; c < b.chunks.size(); ++c) {
    if (owner[c] != busiest) continue;
    out.chunks.push_back(b.chunks[c]);
    out.prefill_tokens += b.chunks[c].q_tokens;
  }
  return out;
}

IterationTime IterationCostModel::Detail(const BatchShape& whole) {
  // Attention-DP: the iteration is its busiest rank's (serve/cost.h).
  BatchShape rank;
  if (spec_.attention_dp > 1) rank = BusiestRank(whole, spec_.attention_dp);
  const BatchShape& b = spec_.attention_dp > 1 ? rank : whole;
  IterationTime t;
  int tokens = b.tokens();
  if (tokens == 0) return t;
  const GpuSpec& g = *spec_.gpu;
  const ComputeCalibration& c = *spec_.calibration;
  const double layers = static_cast<double>(spec_.model->layers);
  // A padded CUDA graph runs the token operators for its whole size (serve/cost.h).
  const int padded =
      b.chunks.empty() ? PaddedGraphSize(b.decode_seqs, spec_.cuda_graph_padded_sizes) : 0;
  const int run_tokens = std::max(tokens, padded);
  t.layers_s = TokenTerms(run_tokens);
  t.comm_s = CommTerms(run_tokens);
  double attn = 0;
  if (b.decode_seqs > 0) {
    double mean_ctx = b.decode_context_tokens / b.decode_seqs;
    attn += OpTime(g, AttentionCoreOp(*spec_.model, b.decode_seqs, 1, mean_ctx, false, shape_), c);
  }
  for (const PrefillChunk& ch : b.chunks) {
    attn += OpTime(g, AttentionCoreOp(*spec_.model, 1, ch.q_tokens, ch.kv_tokens, true, shape_), c);
  }
  t.attention_s = layers * attn;
  // The LM head runs for sequences that emit a token: decoders and (at most) each prompt chunk.
  int outputs = b.decode_seqs + static_cast<int>(b.chunks.size());
  t.head_s = HeadTerms(std::max(outputs, padded));
  const double per_seq = spec_.overhead_per_seq_s * outputs;
  double fixed = spec_.overhead_s;
  if (spec_.overhead_reference_layers > 0) fixed *= layers / spec_.overhead_reference_layers;
  t.graph =
      padded > 0 || (b.chunks.empty() && GraphCaptured(b.decode_seqs, spec_.cuda_graph_max_batch));
  if (t.graph) fixed = spec_.graph_launch_s;
  t.host_s = fixed + per_seq;
  t.overhead_s = spec_.host_overlap ? fixed + std::max(0.0, per_seq - t.gpu()) : t.host_s;
  return t;
}

int IterationCostModel::PaddedGraphSize(int seqs, const std::vector<int>& sizes) {
  if (seqs < 1) return 0;
  auto it = std::lower_bound(sizes.begin(), sizes.end(), seqs);
  return it == sizes.end() ? 0 : *it;
}

bool IterationCostModel::GraphCaptured(int seqs, int max_batch) {
  if (seqs < 1 || seqs > max_batch) return false;
  // TensorRT-LLM's default sizes without padding: 1..31, then powers of two, then the maximum.
  return seqs <= 31 || (seqs & (seqs - 1)) == 0 || seqs == max_batch;
}

}  // namespace ndt
