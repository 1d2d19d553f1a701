// File: parallel/memory.cc
// Memory accounting per GPU; formulas and assumptions in memory.h.
#include "parallel/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "parallel/schedule.h"

namespace ndt {
namespace {

// bf16/fp16 weights; under TE's FP8 recipe the primary weights stay bf16 and TE adds its FP8
// copies (kTeFp8WeightCacheBytesPerParam, memory.h).
constexpr double kWeightBytesPerParam = 2;

double LayerParamsPerGpu(const TransformerSpec& m, const ParamCounts& pc, int64_t layer,
                         const Strategy& s) {
  double p = pc.attention_per_layer / s.tp + pc.norms_per_layer;
  if (m.IsMoeLayer(layer)) {
    p += pc.moe_mlp_per_layer / (static_cast<double>(s.ep) * s.tp);
  } else {
    p += pc.dense_mlp_per_layer / s.tp;
  }
  return p;
}

// Layers of (stage, chunk): virtual stage v = chunk * pp + stage (ChunkLayers).
LayerRange StageChunk(const TransformerSpec& m, const Strategy& s, int stage, int chunk) {
  return ChunkLayers(m.layers, s.pp, s.vpp, chunk * s.pp + stage);
}

// Peak of the activations a stage holds, walking its schedule as Megatron-core runs it
// (parallel/schedule.h, which follows get_pp_rank_microbatches): a forward pass of (chunk,
// micro-batch) stores that chunk's activations, its backward frees them; the peak is reached
// right after a forward. chunk_bytes[c]: one micro-batch through chunk c. With equal chunks this
// is Korthikanti et al.'s count (1F1B: pp - stage micro-batches; interleaved: (pp - stage - 1) * 2
// + (vpp - 1) * pp + 1 chunk passes, i.e. the first stage holds 1 + (pp - 1) / (pp * vpp) times
// 1F1B's); with unequal chunks it counts what is really held, e.g. a first chunk that holds only
// the embedding (Llama 3's layout) adds almost nothing for its extra warm-up passes.
double PeakActivations(const Strategy& s, int stage, const std::vector<double>& chunk_bytes) {
  return StagePeakHeld(s.schedule, s.pp, s.vpp, s.micro_batches(), stage, chunk_bytes);
}

MemoryBreakdown StageMemory(const TransformerSpec& m, const Strategy& s, int stage) {
  MemoryBreakdown b;
  b.peak_stage = stage;
  const double params = StageParamsPerGpu(m, s, stage);
  b.params_per_gpu = params;
  // ZeRO shards a parameter over the ranks that hold a copy of it: the dense ones over DP x CP,
  // an expert's over the expert-data-parallel group, DP x CP / EP (the other EP ranks hold other
  // experts; Megatron-core's expert_data_parallel_group).
  const double expert = StageExpertParamsPerGpu(m, s, stage);
  const double dense = params - expert;
  const double shards = s.weight_replicas();
  const double expert_shards = std::max(1.0, shards / s.ep);
  auto sharded = [&](double bytes_per_param, bool on) {
    return on ? bytes_per_param * (dense / shards + expert / expert_shards)
              : bytes_per_param * params;
  };
  b.weights_bytes = sharded(kWeightBytesPerParam, s.zero >= 3);
  b.expert_weights_bytes = kWeightBytesPerParam * expert / (s.zero >= 3 ? expert_shards : 1.0);
  if (TeFp8(s)) {
    // TE's FP8 copies of the layers' linear weights (not norms, embedding, output layer); with
    // ZeRO-3 TE scatters them over the sharding group after the forward like the weights.
    const ParamCounts pc = CountParams(m);
    double norms = 0;
    for (int c = 0; c < s.vpp; ++c) norms += pc.norms_per_layer * StageChunk(m, s, stage, c).count;
    double linear = params - norms;
    if (stage == 0) linear -= pc.embedding / s.tp;
    if (stage == s.pp - 1) {
      linear -=
          pc.final_norm + (m.tied_embeddings ? (s.pp > 1 ? pc.embedding : 0.0) : pc.lm_head) / s.tp;
    }
    const double dense_linear = std::max(0.0, linear - expert);
    b.fp8_weight_cache_bytes =
        kTeFp8WeightCacheBytesPerParam *
        (s.zero >= 3 ? dense_linear / shards + expert / expert_shards : dense_linear + expert);
    b.weights_bytes += b.fp8_weight_cache_bytes;
  }
  b.gradients_bytes = sharded(GradBytesPerParam(s), s.zero >= 2);
  b.optimizer_bytes = sharded(OptimizerStateBytesPerParam(s.precision), s.zero >= 1);

  const double seq = static_cast<double>(m.seq_len) / s.cp;
  const double b_mb = static_cast<double>(s.mbs);
  double per_mb = 0;  // activations of one micro-batch through the whole stage
  std::vector<double> chunk_bytes(static_cast<size_t>(s.vpp), 0.0);
  double recompute_working_set = 0;
  for (int c = 0; c < s.vpp; ++c) {
    const LayerRange r = StageChunk(m, s, stage, c);
    for (int64_t l = r.first; l < r.first + r.count; ++l) {
      chunk_bytes[static_cast<size_t>(c)] += LayerActivationBytes(m, s, l, b_mb, seq, s.recompute);
      if (s.recompute != Recompute::kNone) {
        // The recompute's working set during one layer's backward: what the layer would keep
        // without recompute less what it kept (all of it under full recompute).
        const double none = LayerActivationBytes(m, s, l, b_mb, seq, Recompute::kNone);
        const double kept = s.recompute == Recompute::kSelective
                                ? LayerActivationBytes(m, s, l, b_mb, seq, Recompute::kSelective)
                                : 0.0;
        recompute_working_set = std::max(recompute_working_set, none - kept);
      }
    }
  }
  for (double c : chunk_bytes) per_mb += c;
  const double held = PeakActivations(s, stage, chunk_bytes);
  b.inflight_microbatches = per_mb > 0 ? held / per_mb : 0;
  b.activations_bytes = held + recompute_working_set;
  if (stage == s.pp - 1) {
    // fp32 logits and their gradient for one micro-batch, vocabulary split by TP; a loss that
    // upcasts out of place before an eager cross-entropy holds a third fp32 tensor at its peak
    // (the log-softmax backward: its saved output, the incoming gradient and the new one).
    const double fp32_logits = 4.0 * b_mb * seq * static_cast<double>(m.vocab) / s.tp;
    b.activations_bytes += (s.loss_fp32_copy ? 3.0 : 2.0) * fp32_logits;
  }
  // PP send/recv buffers (two directions, double-buffered). NCCL's and TP overlap's buffers are
  // in the reserve (memory_reserve.h).
  const double msg = b_mb * seq * static_cast<double>(m.hidden) * 2.0 / (s.sp ? s.tp : 1);
  b.comm_buffers_bytes = s.pp > 1 ? 4.0 * msg : 0.0;
  if (s.zero >= 3) {
    // Prefetched full weights of two layers (the one running and the next).
    const ParamCounts pc = CountParams(m);
    b.comm_buffers_bytes += 2.0 * kWeightBytesPerParam * LayerParamsPerGpu(m, pc, 0, s);
  }
  return b;
}

std::string GiB(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

double AlternateMatmulsActivationBytes(const TransformerSpec& m, int64_t layer, double b, double s,
                                       int tp, bool sp, bool flash) {
  if (m.IsMoeLayer(layer) || m.attention == AttentionKind::kMla) {
    return ActivationBytesPerLayer(m, layer, b, s, tp, sp, Recompute::kSelective, flash);
  }
  const double t = tp > 0 ? tp : 1;
  const double sb = s * b;
  const double h = static_cast<double>(m.hidden);
  const double q_dim = static_cast<double>(m.heads) * m.head_dim;
  const double v_dim = static_cast<double>(m.kv_heads) * m.head_dim;
  const double ffn = static_cast<double>(m.ffn_hidden);
  double bytes = 2 * sb * h / (sp ? t : 1.0);           // block input
  bytes += 2 * sb * (q_dim + v_dim + ffn + q_dim) / t;  // wq, wv, w1, SDPA output
  bytes += 4 * sb * static_cast<double>(m.heads) / t;   // SDPA log-sum-exp
  bytes += 2 * sb * h;                                  // w2's output
  if (sp && t > 1) bytes += 2 * (2 * sb * h / t);       // reduce-scatter outputs
  return bytes;
}

bool TeFp8(const Strategy& s) { return s.precision == Dtype::kFp8 && !s.eager_elementwise; }

double TeFp8ActivationDelta(const TransformerSpec& m, const Strategy& s, int64_t layer, double b,
                            double seq, Recompute r) {
  if (!TeFp8(s) || r == Recompute::kFull || m.attention == AttentionKind::kMla) return 0.0;
  const double t = s.tp > 0 ? s.tp : 1;
  const double sb = seq * b;
  const double h = static_cast<double>(m.hidden);
  const double o_dim = static_cast<double>(m.heads) * m.head_dim;
  double delta = -sb * h / (s.sp ? t : 1.0);                       // QKV ln_out: 1 B, not 2
  delta += (r == Recompute::kNone ? 1.0 : -1.0) * sb * o_dim / t;  // out projection's FP8 input
  if (!m.IsMoeLayer(layer)) {
    delta -= sb * h / (s.sp ? t : 1.0);                   // FC1 ln_out
    delta -= sb * static_cast<double>(m.ffn_hidden) / t;  // FC2's input
  }
  return delta;
}

double LayerActivationBytes(const TransformerSpec& m, const Strategy& s, int64_t layer, double b,
                            double seq, Recompute r) {
  if (r == Recompute::kSelective &&
      s.selective_recompute == SelectiveRecompute::kAlternateMatmuls) {
    return AlternateMatmulsActivationBytes(m, layer, b, seq, s.tp, s.sp, s.flash_attention);
  }
  return ActivationBytesPerLayer(m, layer, b, seq, s.tp, s.sp, r, s.flash_attention) +
         TeFp8ActivationDelta(m, s, layer, b, seq, r);
}

double UserbufferBytes(const TransformerSpec& m, const Strategy& s) {
  if (!s.tp_overlap || s.tp < 2) return 0.0;
  // One buffer of the full (gathered) activation, [seq * mbs / cp, hidden], per overlapped GEMM.
  const double elems = static_cast<double>(m.seq_len) / s.cp * static_cast<double>(s.mbs) *
                       static_cast<double>(m.hidden);
  const double ag_bytes = s.precision == Dtype::kFp8 ? 1.0 : 2.0;
  return elems * (kUbAllGatherBuffers * ag_bytes + kUbOtherBuffers * 2.0);
}

double GradBytesPerParam(Dtype precision) { return precision == Dtype::kFp16 ? 2.0 : 4.0; }

double GradBytesPerParam(const Strategy& s) {
  if (s.precision == Dtype::kFp16 || s.grad_bytes_per_param <= 0) {
    return GradBytesPerParam(s.precision);
  }
  return s.grad_bytes_per_param;
}

double OptimizerStateBytesPerParam(Dtype precision) {
  return precision == Dtype::kFp16 ? 16.0 : 12.0;
}

double StageParamsPerGpu(const TransformerSpec& m, const Strategy& s, int stage) {
  const ParamCounts pc = CountParams(m);
  double p = 0;
  for (int c = 0; c < s.vpp; ++c) {
    const LayerRange r = StageChunk(m, s, stage, c);
    for (int64_t l = r.first; l < r.first + r.count; ++l) p += LayerParamsPerGpu(m, pc, l, s);
  }
  if (stage == 0) p += pc.embedding / s.tp;
  if (stage == s.pp - 1) {
    p += pc.final_norm;
    // A tied LM head is a second copy of the embedding on the last stage when pp > 1.
    p += (m.tied_embeddings ? (s.pp > 1 ? pc.embedding : 0.0) : pc.lm_head) / s.tp;
  }
  return p;
}

double StageExpertParamsPerGpu(const TransformerSpec& m, const Strategy& s, int stage) {
  const ParamCounts pc = CountParams(m);
  double p = 0;
  for (int c = 0; c < s.vpp; ++c) {
    const LayerRange r = StageChunk(m, s, stage, c);
    for (int64_t l = r.first; l < r.first + r.count; ++l) {
      if (m.IsMoeLayer(l)) p += pc.moe_mlp_per_layer / (static_cast<double>(s.ep) * s.tp);
    }
  }
  return p;
}

MemoryBreakdown StageMemoryOf(const TransformerSpec& m, const Strategy& s, int stage) {
  return StageMemory(m, s, stage);
}

MemoryBreakdown EstimateMemory(const TransformerSpec& m, const Strategy& s) {
  MemoryBreakdown best = StageMemory(m, s, 0);
  if (s.pp > 1) {
    MemoryBreakdown last = StageMemory(m, s, s.pp - 1);
    if (last.total_bytes() > best.total_bytes()) best = last;
  }
  return best;
}

Status CheckFits(const MemoryBreakdown& m, const ReserveBreakdown& reserve, double capacity_bytes,
                 const Strategy& s, std::span<const int> zero_stages) {
  const double usable = reserve.usable_bytes(capacity_bytes);
  if (m.total_bytes() <= usable) return Status::Ok();
  std::vector<std::pair<double, std::string>> parts = {{m.weights_bytes, "weights"},
                                                       {m.gradients_bytes, "gradients"},
                                                       {m.optimizer_bytes, "optimizer"},
                                                       {m.activations_bytes, "activations"},
                                                       {m.comm_buffers_bytes, "comm buffers"}};
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string msg =
      "does not fit: " + GiB(m.total_bytes()) + " per GPU (stage " + std::to_string(m.peak_stage) +
      ") > " + GiB(usable) + " usable (" + GiB(capacity_bytes) + " less a reserve of " +
      GiB(reserve.total_bytes()) + ", data/memory_reserve.yaml); largest: " + parts[0].second +
      " " + GiB(parts[0].first) + ", " + parts[1].second + " " + GiB(parts[1].first) + "; try ";
  std::vector<std::string> fixes;
  const double states = m.weights_bytes + m.gradients_bytes + m.optimizer_bytes;
  if (states >= m.activations_bytes) {
    fixes.push_back("more --tp/--pp");
    if (s.zero < 3 && s.weight_replicas() > 1) {
      const int next = s.zero + 1;
      const bool runs = zero_stages.empty() || std::find(zero_stages.begin(), zero_stages.end(),
                                                         next) != zero_stages.end();
      fixes.push_back("--zero " + std::to_string(next) +
                      (runs ? "" : " with a --stack that runs it"));
    }
  } else {
    if (s.recompute != Recompute::kFull) fixes.push_back("--recompute full");
    if (s.mbs > 1) fixes.push_back("a smaller --mbs");
    if (!s.sp && s.tp > 1) fixes.push_back("--sp");
    fixes.push_back("more --tp/--pp");
  }
  for (size_t i = 0; i < fixes.size(); ++i) msg += (i ? ", " : "") + fixes[i];
  return Status::DoesNotFit(msg);
}

}  // namespace ndt
