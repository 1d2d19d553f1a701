// File: serve/cost.h
// Duration of one serving-engine iteration (serve/engine.h) on a replica of TP x PP GPUs:
//   sum over all layers of the token operators (QKV/out/MLP GEMMs, norms, element-wise: weights
//   read once per iteration, at the weight precision's tensor rate) for the iteration's tokens,
//   + the attention core per layer: decode sequences over their contexts (K/V bytes at the KV
//   precision) and each prompt chunk over its prior context (causal),
//   + embedding and the LM head for the sequences that emit a token (the head in 16-bit: fp8/fp4
//   checkpoints leave it unquantized; so do NVIDIA's NVFP4 DeepSeek-R1 checkpoints for
//   self-attention: an MLA model at fp4 runs its attention projections in 16-bit, hf_quant_config
//   exclude_modules "model.layers.*.self_attn*", OpShape::attention_unquantized),
//   + 2 TP all-reduces per layer of tokens x hidden activations, (pp - 1) stage-to-stage sends,
//   + the engine's host cost: fixed per iteration plus per sequence it carries (scheduling,
//   sampling, per-request bookkeeping; the arch's serving fit in data/calibration/compute.yaml,
//   else data/serve/engine.yaml's fixed overhead). Without host overlap (TensorRT-LLM's C++
//   executor of 2024) the host work runs between GPU iterations: iteration = GPU + fixed +
//   per-sequence. With it (the PyTorch backend's overlap scheduler, the serving stack's
//   host_overlap trait) the per-sequence work of one iteration runs while the GPU runs the next:
//   iteration = max(GPU, per-sequence host) + fixed, the fixed part (the loop's launch and
//   synchronisation) staying serial. IterationTime::overhead_s is the host time left exposed.
//   The fixed part is launch-bound: the fitted value is that of a reference model
//   (overhead_reference_layers layers, data/serve/engine.yaml) and scales with the model's layers,
//   as the kernels an iteration launches do. With CUDA graphs (the PyTorch backend's, the stack's
//   cuda_graphs trait) a decode-only iteration whose batch size has a captured graph (1..31 and
//   the powers of two up to cuda_graph_max_batch, TensorRT-LLM's default sizes without padding)
//   launches one graph: its fixed part is one launch (graph_launch_s) instead. With padding
//   (CudaGraphConfig enable_padding, as TensorRT-LLM's perf-overview runs set it with captured
//   sizes up to 8192: cuda_graph_padded_sizes) a decode-only batch up to the largest captured
//   size runs the graph of the next captured size: one launch, and the token operators, LM head
//   and TP all-reduces of the padded batch (the padding's dummy sequences attend to nothing).
//   The TP all-reduce is priced by a callback given the bytes and the tokens (serve/allreduce.h:
//   TensorRT-LLM picks its kernels by both).
// Attention data parallelism (attention_dp ranks > 1; TensorRT-LLM enable_attention_dp, the
// recipe of its DeepSeek-R1 max-throughput runs): each GPU of the group is a rank with its own
// requests. It runs attention, the dense MLPs (DeepSeek's first_k_dense layers), the shared
// experts, embedding and LM head at TP1 on its own tokens (modeling_deepseekv3.py: "If using
// attention DP, the MLP also uses DP instead of TP"; the shared experts likewise), so no TP
// all-reduce. The routed experts are split over the group (EP = ranks): each MoE layer
// all-gathers every rank's tokens (dispatch), each GPU computes its experts' token-expert pairs,
// and a reduce-scatter returns each rank its tokens' sums (combine), on the group's GPUs
// (moe_comm_s: NCCL groups of per-rank broadcasts and reduces, serve/comm.cc; bytes in
// serve/deployment.h MoeDispatchBytesPerToken); the fused MoE op between them sorts the pairs of,
// and writes an output row for, every gathered token (OpShape::moe_all_gathered). The
// engine schedules each rank's own requests (serve/engine.h: a request stays on the rank it was
// assigned to, BatchShape::ranks); an iteration is priced on its busiest rank (BusiestRank: the
// rank with the most tokens): the ranks step together, held by the MoE collectives, so the step
// waits for it. Its experts are priced at its token count on every
// rank (a bound: CUDA graphs pad the ranks to the largest, use_dp_padding).
// Skewed routing (with EP, attention-DP or EP inside TP): the MoE layers wait for the busiest EP
// rank, whose experts compute BusiestRankLoad (model/ops.h; the model's measured imbalance) x the
// mean rank's token-expert pairs; 1 (uniform) for a model without a measurement.
// Operator times come from compute/compute.h (roofline calibrated on microbenchmarks);
// communication times from callbacks (serve/deployment.cc uses coll/). With pipeline
// parallelism, one micro-batch group's iteration runs through all stages, so the iteration time
// is the whole model's per-GPU time; the p groups keep the p stages busy at once. Token-count
// dependent terms are cached per token count, so an iteration costs O(prompt chunks).
// Seconds out.
#ifndef NDTWIN_SERVE_COST_H_
#define NDTWIN_SERVE_COST_H_

#include <functional>
#include <vector>

#include "compute/compute.h"
#include "hw/spec.h"
#include "model/ops.h"
#include "model/transformer.h"
#include "serve/engine.h"

namespace ndt {

struct CostSpec {
  const TransformerSpec* model = nullptr;
  const GpuSpec* gpu = nullptr;
  const ComputeCalibration* calibration = nullptr;
  int tp = 1;
  int pp = 1;
  int ep = 1;
  Dtype weights = Dtype::kFp16;
  Dtype kv = Dtype::kFp16;
  Dtype activations = Dtype::kFp16;
  double overhead_s = 0;          // per iteration
  double overhead_per_seq_s = 0;  // per sequence the iteration carries (decoders + prompt chunks)
  bool host_overlap = false;      // per-sequence host work hidden behind the GPU's (see above)
  int overhead_reference_layers = 0;  // overhead_s is for this many layers; 0 = not scaled
  int cuda_graph_max_batch = 0;       // 0 = no CUDA graphs
  double graph_launch_s = 0;          // fixed host cost of a graph-launched iteration
  // Captured sizes of a padded CUDA-graph config, ascending; empty: no padding (see above).
  std::vector<int> cuda_graph_padded_sizes;
  // Time of one all-reduce of `bytes` (`tokens` tokens) over the TP group; of the pp - 1 sends of
  // `bytes` from stage to stage. Empty: no such communication (tp == 1, pp == 1).
  std::function<double(double bytes, int tokens)> tp_allreduce_s;
  std::function<double(double bytes)> pp_sends_s;
  // Attention data parallelism: the group's ranks (1 = off; else ep == attention_dp), and the
  // dispatch + combine of one MoE layer when each rank holds `rank_tokens` tokens.
  int attention_dp = 1;
  std::function<double(int rank_tokens)> moe_comm_s;
};

// Breakdown of one iteration's time (for reports and tests).
struct IterationTime {
  double layers_s = 0;     // token operators of all layers
  double attention_s = 0;  // attention cores of all layers
  double head_s = 0;       // embedding + LM head
  double comm_s = 0;       // TP all-reduce + PP sends (attention-DP: MoE dispatch + combine)
  double overhead_s = 0;   // host time not hidden behind GPU work
  double host_s = 0;       // all host work of the iteration (fixed + per sequence)
  bool graph = false;      // launched as one CUDA graph
  double gpu() const { return layers_s + attention_s + head_s + comm_s; }
  double total() const { return layers_s + attention_s + head_s + comm_s + overhead_s; }
};

// Not thread-safe (it fills its caches as it goes); one per engine run or per thread.
class IterationCostModel {
 public:
  // REQUIRES: spec.model, spec.gpu, spec.calibration non-null and outliving this object.
  explicit IterationCostModel(CostSpec spec);
  IterationTime Detail(const BatchShape& shape);
  double Time(const BatchShape& shape) { return Detail(shape).total(); }
  IterationCostFn AsFn() {
    return [this](const BatchShape& s) { return Time(s); };
  }
  const CostSpec& spec() const { return spec_; }
  // Whether a decode-only batch of `seqs` sequences has a captured CUDA graph (see above).
  static bool GraphCaptured(int seqs, int max_batch);
  // The padded graph size a decode-only batch of `seqs` runs at: the smallest of `sizes`
  // (ascending) >= seqs; 0 if none (seqs above the largest: launched kernel by kernel).
  static int PaddedGraphSize(int seqs, const std::vector<int>& sizes);
  // The busiest of `ranks` attention-DP ranks' share of batch `b` (see above): the rank with the
  // most tokens (ties: the lowest) of the engine's per-rank schedule b.ranks. A batch without it
  // (b.ranks.size() != ranks: built by hand, not by the engine) is split as if balanced: decoders
  // dealt evenly (the first decode_seqs % ranks ranks one more, each at the mean context), then
  // each prompt chunk in order to the rank with the fewest tokens (ties: the lowest rank).
  // REQUIRES ranks >= 1.
  static BatchShape BusiestRank(const BatchShape& b, int ranks);

 private:
  double TokenTerms(int tokens);  // layer ops + embedding for `tokens` tokens (cached)
  double HeadTerms(int outputs);  // LM head for `outputs` sequences (cached)
  double CommTerms(int tokens);

  CostSpec spec_;
  OpShape shape_;
  OpShape head_shape_;  // shape_ with the LM head's 16-bit weights and math
  int64_t dense_layers_ = 0, moe_layers_ = 0, first_moe_ = -1;
  std::vector<double> token_cache_, comm_cache_, head_cache_;
};

}  // namespace ndt

#endif  // NDTWIN_SERVE_COST_H_
