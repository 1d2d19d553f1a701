// File: serve/deployment.h
// How a model is laid out for serving: a replica is TP x PP (x EP) GPUs; replicas fill the VMs
// (TP stays inside one NVLink domain: a VM, or the NVL72 rack; PP may cross VMs). Memory per
// GPU = weights / (TP x PP) + a runtime workspace; the KV cache gets a fraction of what is left
// (TensorRT-LLM's kvcache_free_gpu_mem_frac), in blocks of `block_tokens` tokens; K/V heads are
// split by TP (replicated when TP exceeds them) and layers by PP. Engine constants (overhead,
// fraction, workspace, block size) come from data/serve/engine.yaml. Bytes, seconds.
#ifndef NDTWIN_SERVE_DEPLOYMENT_H_
#define NDTWIN_SERVE_DEPLOYMENT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "hw/spec.h"
#include "model/transformer.h"
#include "serve/allreduce.h"

namespace ndt {

// data/serve/engine.yaml.
struct EngineParams {
  double iteration_overhead_s = 1e-3;
  double kv_free_memory_frac = 0.9;
  double workspace_bytes = 2.0 * (1 << 30);  // the workspace's floor (activation_workspace)
  // activation_estimate: tensors live through one decoder block, per token.
  double hidden_live_tensors = 2;     // x hidden
  double gated_ffn_live_tensors = 3;  // x intermediate / TP, SwiGLU
  double plain_ffn_live_tensors = 2;  // x intermediate / TP, GeLU
  double logits_bytes = 4;            // per logit (max_batch x vocab)
  int block_tokens = 32;
  CustomAllReduceParams custom_allreduce;
  // The fitted fixed host cost per iteration is that of a model of this many layers (its
  // kernel-launch part scales with the layers; serve/cost.h).
  int host_overhead_reference_layers = 80;
  // Largest decode batch the PyTorch backend captures in a CUDA graph (serve/cost.h).
  int cuda_graph_max_batch = 128;
  // Attention-DP MoE dispatch (serve/cost.h): the bytes of one token's routing choice (expert id
  // + weight) all-gathered with it.
  double moe_routing_bytes_per_choice = 8;
  // Captured sizes of TensorRT-LLM's perf-overview CUDA-graph config (padding on), ascending.
  std::vector<int> cuda_graph_padded_sizes;
  // Fraction of the standalone NCCL speed (coll/, as nccl-tests measures it) that an NCCL
  // all-reduce reaches inside a serving iteration, by GPU architecture (fitted on serving.csv by
  // src/serve/fit_serving.py); an arch not listed takes the entry whose name is the longest
  // prefix of its own (blackwell_ultra -> blackwell), else 1.
  std::map<std::string, double> nccl_in_engine_efficiency;
  double NcclInEngineEfficiency(const std::string& arch) const;
  // Round trip of one remote 16-byte load of TensorRT-LLM's 2024 all-reduce kernels over NVLink,
  // by GPU architecture (serve/allreduce.h; fitted on serving.csv by src/serve/fit_serving.py);
  // longest-prefix match as above; 0 for an arch not listed: twice the path's one-way latency.
  std::map<std::string, double> remote_read_round_trip_2024_s;
  double RemoteReadRoundTrip2024(const std::string& arch) const;
};
StatusOr<EngineParams> LoadEngineParams(const std::string& data_dir);  // "" = NDT_DATA_DIR

struct DeploymentRequest {
  int tp = 1, pp = 1, ep = 1;
  // Attention data parallelism (TensorRT-LLM enable_attention_dp): each of the tp GPUs runs
  // attention, the dense MLPs, the shared experts, embedding and LM head on its own requests with
  // those weights whole (replicated) and its own KV cache; only the routed experts are split over
  // the tp GPUs (EP = tp). max_num_tokens and max_batch are then per rank, as TensorRT-LLM's.
  bool attention_dp = false;
  Dtype weights = Dtype::kFp16;
  Dtype kv = Dtype::kFp16;
  int max_seq_tokens = 2048;  // longest request (input + output) the cache must hold
  int max_num_tokens = 8192;  // tokens per iteration (the activations' size)
  int max_batch = 256;        // sequences per iteration (the logits')
  Dtype activations = Dtype::kFp16;
};

struct MemoryPlan {
  double gpu_memory_bytes = 0;
  double weight_bytes_per_gpu = 0;
  double workspace_bytes = 0;
  double kv_bytes_per_gpu = 0;  // cache size on each GPU
  double kv_bytes_per_token_per_gpu = 0;
  int64_t kv_tokens_per_replica = 0;  // cache capacity of one replica in tokens
  int64_t kv_blocks_per_replica = 0;  // attention-DP: the sum over its ranks' caches
};

// Bytes of the weights as served: WeightBytes at the checkpoint's precision, except what an
// 8/4-bit checkpoint (NVIDIA ModelOpt) leaves 16-bit: the token embedding, the LM head and the
// norms, and an MLA model's self-attention at fp4 (NVIDIA's NVFP4 DeepSeek-R1).
double ServedWeightBytes(const TransformerSpec& model, Dtype weights);

// Bytes of the routed experts' weights (every MoE layer's experts, not the shared ones or the
// router): what attention-DP splits over the group while it replicates the rest.
double RoutedExpertBytes(const TransformerSpec& model, Dtype weights);

// Bytes one token moves in attention-DP's MoE dispatch (the all-gather of the hidden states and
// routing before the experts) and combine (the reduce-scatter of the experts' output), as
// TensorRT-LLM's CUTLASS MoE backend runs them (serve/cost.h says where from): dispatch =
// hidden x (fp4 weights: NVFP4's bytes per element, scales included; else the activations'
// bytes) + top_k x moe_routing_bytes_per_choice; combine = hidden x the
// activations' bytes.
double MoeDispatchBytesPerToken(const TransformerSpec& model, Dtype weights, Dtype activations,
                                const EngineParams& params);
double MoeCombineBytesPerToken(const TransformerSpec& model, Dtype activations);

// The serving weight precisions narrower than `w`, for advice: "fp8, fp4" for 16-bit weights,
// "fp4" for fp8, "" for fp4 (nothing narrower to suggest).
std::string NarrowerWeights(Dtype w);

// Whether TP `tp` splits the model's attention heads evenly and its K/V heads evenly or into
// replicas (tp a multiple of them), as TensorRT-LLM requires.
bool TpSplitsHeads(const TransformerSpec& model, int tp);

// Per-GPU runtime workspace of an engine: the larger of params.workspace_bytes (the floor) and
// the activations TensorRT sizes from the iteration's largest shapes, linear in max_num_tokens and
// one decoder block deep (layers reuse it): max_num_tokens x (hidden_live x hidden + the MLP's
// live intermediates, or attention's q/k/v + output if wider, split by TP) x activation bytes,
// plus max_batch x vocab logits. An MoE layer's MLP runs each token through top_k + shared
// experts of expert_ffn_hidden.
double WorkspaceBytes(const TransformerSpec& model, const DeploymentRequest& req,
                      const EngineParams& params);

// The batch sizes a padded CUDA-graph config captures for an engine of `max_batch` sequences and
// `max_num_tokens` tokens per iteration, as TensorRT-LLM's PyTorch backend filters them
// (_torch/pyexecutor/model_engine.py _filter_cuda_graph_batch_sizes, 1.0): the configured sizes
// (ascending) up to min(max_batch, max_num_tokens) (a decode sequence is one token), and, when a
// configured size exceeds that cap, the cap itself ("We will pad batches to max_cuda_graph_bs").
// A decode batch then pads to the next of these, never past the engine's max batch (an engine of
// max batch 224 pads 196 sequences to 224, not to the configured 256).
std::vector<int> CapturedGraphSizes(const std::vector<int>& sizes, int max_batch,
                                    int max_num_tokens);

// Memory of one replica on `gpu`. kInfeasible when weights and workspace exceed the memory,
// or the cache cannot hold one request of max_seq_tokens; the message gives the numbers and a
// fix (more TP/PP, lower --weights/--kv precision).
StatusOr<MemoryPlan> PlanMemory(const TransformerSpec& model, const GpuSpec& gpu,
                                const DeploymentRequest& req, const EngineParams& params);

// Replicas of tp*pp GPUs on `vms` VMs of `sku` (attention-DP: tp ranks of one GPU each; EP splits
// the experts inside the TP group and takes no GPUs of its own). kInfeasible (with the reason) when
// TP exceeds the NVLink domain, EP does not divide TP, or the group is larger than the cluster.
StatusOr<int> CountReplicas(const SkuSpec& sku, int vms, int tp, int pp, int ep);

}  // namespace ndt

#endif  // NDTWIN_SERVE_DEPLOYMENT_H_
