#include "serve/deployment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/yaml.h"

namespace ndt {
namespace {

std::string Gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f GB", bytes / 1e9);
  return buf;
}

}  // namespace

StatusOr<EngineParams> LoadEngineParams(const std::string& data_dir) {
  std::string dir = data_dir.empty() ? std::string(NDT_DATA_DIR) : data_dir;
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(dir + "/serve/engine.yaml"));
  EngineParams p;
  NDT_ASSIGN_OR_RETURN(Sourced o, m.Quantity("iteration_overhead", Dim::kTime));
  NDT_ASSIGN_OR_RETURN(Sourced f, m.Quantity("kv_free_memory_fraction", Dim::kFraction));
  NDT_ASSIGN_OR_RETURN(Sourced w, m.Quantity("activation_workspace", Dim::kBytes));
  NDT_ASSIGN_OR_RETURN(Sourced b, m.Count("kv_block_tokens"));
  NDT_ASSIGN_OR_RETURN(YamlMap ae, m.Map("activation_estimate"));
  NDT_ASSIGN_OR_RETURN(Sourced hl, ae.Count("hidden_live_tensors"));
  NDT_ASSIGN_OR_RETURN(Sourced gl, ae.Count("gated_ffn_live_tensors"));
  NDT_ASSIGN_OR_RETURN(Sourced pl, ae.Count("plain_ffn_live_tensors"));
  NDT_ASSIGN_OR_RETURN(Sourced lb, ae.Quantity("logits_bytes", Dim::kBytes));
  NDT_RETURN_IF_ERROR(ae.Finish());
  if (hl.value < 0 || gl.value < 0 || pl.value < 0 || lb.value < 0) {
    return ae.Error("hidden_live_tensors", "the live tensors and logit bytes must be >= 0");
  }
  p.hidden_live_tensors = hl.value;
  p.gated_ffn_live_tensors = gl.value;
  p.plain_ffn_live_tensors = pl.value;
  p.logits_bytes = lb.value;
  NDT_ASSIGN_OR_RETURN(YamlMap ar, m.Map("custom_allreduce"));
  NDT_ASSIGN_OR_RETURN(Sourced ws2, ar.Quantity("workspace_tp2", Dim::kBytes));
  NDT_ASSIGN_OR_RETURN(Sourced ws, ar.Quantity("workspace", Dim::kBytes));
  NDT_ASSIGN_OR_RETURN(Sourced os4, ar.Quantity("oneshot_below_tp4", Dim::kBytes));
  NDT_ASSIGN_OR_RETURN(Sourced os, ar.Quantity("oneshot_below", Dim::kBytes));
  NDT_ASSIGN_OR_RETURN(Sourced ot, ar.Count("min_latency_oneshot_max_tokens"));
  NDT_ASSIGN_OR_RETURN(Sourced kb, ar.Count("kernel_max_blocks_2024"));
  NDT_ASSIGN_OR_RETURN(Sourced kt, ar.Count("kernel_block_threads_2024"));
  NDT_ASSIGN_OR_RETURN(Sourced kl, ar.Quantity("kernel_bytes_per_load", Dim::kBytes));
  NDT_RETURN_IF_ERROR(ar.Finish());
  NDT_ASSIGN_OR_RETURN(Sourced rl, m.Count("host_overhead_reference_layers"));
  NDT_ASSIGN_OR_RETURN(Sourced gb, m.Count("cuda_graph_max_batch"));
  NDT_ASSIGN_OR_RETURN(YamlMap md, m.Map("moe_dispatch"));
  NDT_ASSIGN_OR_RETURN(Sourced rb, md.Quantity("routing_bytes_per_choice", Dim::kBytes));
  NDT_RETURN_IF_ERROR(md.Finish());
  if (rb.value < 0) return md.Error("routing_bytes_per_choice", "must be >= 0");
  p.moe_routing_bytes_per_choice = rb.value;
  NDT_ASSIGN_OR_RETURN(YamlMap pg, m.Map("cuda_graph_padded_batch_sizes"));
  NDT_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, pg.IntList("value"));
  NDT_ASSIGN_OR_RETURN(std::string pg_source, pg.String("source"));
  NDT_RETURN_IF_ERROR(pg.Finish());
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1 || (i > 0 && sizes[i] <= sizes[i - 1])) {
      return m.Error("cuda_graph_padded_batch_sizes", "must be ascending sizes >= 1");
    }
    p.cuda_graph_padded_sizes.push_back(static_cast<int>(sizes[i]));
  }
  NDT_ASSIGN_OR_RETURN(YamlMap ne, m.Map("nccl_in_engine_efficiency"));
  for (const std::string& arch : ne.Keys()) {
    NDT_ASSIGN_OR_RETURN(Sourced e, ne.Quantity(arch, Dim::kFraction));
    if (e.value <= 0 || e.value > 1) return ne.Error(arch, "must be in (0, 100%]");
    p.nccl_in_engine_efficiency[arch] = e.value;
  }
  NDT_RETURN_IF_ERROR(ne.Finish());
  NDT_ASSIGN_OR_RETURN(YamlMap rt, m.Map("remote_read_round_trip_2024"));
  for (const std::string& arch : rt.Keys()) {
    NDT_ASSIGN_OR_RETURN(Sourced t, rt.Quantity(arch, Dim::kTime));
    if (t.value <= 0) return rt.Error(arch, "must be > 0 (a round trip, e.g. \"1.2 us\")");
    p.remote_read_round_trip_2024_s[arch] = t.value;
  }
  NDT_RETURN_IF_ERROR(rt.Finish());
  NDT_RETURN_IF_ERROR(m.Finish());
  if (rl.value < 1) return m.Error("host_overhead_reference_layers", "must be >= 1");
  if (gb.value < 1) return m.Error("cuda_graph_max_batch", "must be >= 1");
  p.custom_allreduce.workspace_tp2_bytes = ws2.value;
  p.custom_allreduce.workspace_bytes = ws.value;
  p.custom_allreduce.oneshot_below_tp4_bytes = os4.value;
  p.custom_allreduce.oneshot_below_bytes = os.value;
  p.custom_allreduce.min_latency_oneshot_max_tokens = static_cast<int>(ot.value);
  if (kb.value < 1 || kt.value < 1 || kl.value <= 0) {
    return ar.Error("kernel_max_blocks_2024",
                    "the 2024 kernels' blocks, threads, bytes must be > 0");
  }
  p.custom_allreduce.inflight_bytes_2024 = kb.value * kt.value * kl.value;
  p.host_overhead_reference_layers = static_cast<int>(rl.value);
  p.cuda_graph_max_batch = static_cast<int>(gb.value);
  if (f.value <= 0 || f.value > 1)
    return m.Error("kv_free_memory_fraction", "must be in (0, 100%]");
  if (b.value < 1) return m.Error("kv_block_tokens", "must be >= 1");
  p.iteration_overhead_s = o.value;
  p.kv_free_memory_frac = f.value;
  p.workspace_bytes = w.value;
  p.block_tokens = static_cast<int>(b.value);
  return p;
}

namespace {

// The value of the entry whose name is the longest prefix of `arch`; `fallback` if none.
double ByArchPrefix(const std::map<std::string, double>& m, const std::string& arch,
                    double fallback) {
  double e = fallback;
  size_t best = 0;
  for (const auto& [name, value] : m) {
    if (arch.rfind(name, 0) == 0 && name.size() > best) {
      best = name.size();
      e = value;
    }
  }
  return e;
}

}  // namespace

double EngineParams::NcclInEngineEfficiency(const std::string& arch) const {
  return ByArchPrefix(nccl_in_engine_efficiency, arch, 1.0);
}

double EngineParams::RemoteReadRoundTrip2024(const std::string& arch) const {
  return ByArchPrefix(remote_read_round_trip_2024_s, arch, 0.0);
}

std::string NarrowerWeights(Dtype w) {
  if (DtypeBytes(w) >= 2) return "fp8, fp4";
  return w == Dtype::kFp8 ? "fp4" : "";
}

bool TpSplitsHeads(const TransformerSpec& model, int tp) {
  if (tp < 1 || model.heads % tp != 0) return false;
  return model.kv_heads <= 0 || model.kv_heads % tp == 0 || tp % model.kv_heads == 0;
}

double WorkspaceBytes(const TransformerSpec& model, const DeploymentRequest& req,
                      const EngineParams& params) {
  const double tp = std::max(1, req.tp);
  const double ffn_live = model.activation == Activation::kSwiglu ? params.gated_ffn_live_tensors
                                                                  : params.plain_ffn_live_tensors;
  double ffn = 0;  // the widest MLP's intermediate per token, per GPU
  if (!model.is_moe() || model.moe.first_k_dense > 0) ffn = static_cast<double>(model.ffn_hidden);
  if (model.is_moe()) {
    ffn = std::max(ffn, static_cast<double>(model.moe.top_k + model.moe.shared_experts) *
                            static_cast<double>(model.moe.expert_ffn_hidden));
  }
  const int64_t head_dim = model.head_dim > 0 ? model.head_dim : model.hidden / model.heads;
  const int64_t kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
  // Attention: q, k, v and the attention output (heads x head_dim).
  const double attn = static_cast<double>((2 * model.heads + 2 * kv_heads) * head_dim);
  const double per_token = params.hidden_live_tensors * static_cast<double>(model.hidden) +
                           std::max(ffn_live * ffn, attn) / tp;
  const double act =
      static_cast<double>(req.max_num_tokens) * per_token * DtypeBytes(req.activations) +
      static_cast<double>(req.max_batch) * static_cast<double>(model.vocab) * params.logits_bytes;
  return std::max(params.workspace_bytes, act);
}

double RoutedExpertBytes(const TransformerSpec& model, Dtype weights) {
  double params = 0;
  for (int64_t l = 0; l < model.layers; ++l) {
    if (!model.IsMoeLayer(l)) continue;
    for (const ParamTensor& t : LayerTensors(model, l)) {
      if (t.expert) params += t.params;
    }
  }
  return params * DtypeBytes(weights);
}

double MoeDispatchBytesPerToken(const TransformerSpec& model, Dtype weights, Dtype activations,
                                const EngineParams& params) {
  const double h = static_cast<double>(model.hidden);
  // NVFP4 checkpoints quantize before the all-gather (post-quant dispatch): FP4 elements with
  // their FP8 block scales (DtypeBytes(kFp4) counts both); others gather the 16-bit hidden states
  // and quantize inside the MoE.
  const double x = h * DtypeBytes(weights == Dtype::kFp4 ? Dtype::kFp4 : activations);
  return x + model.moe.top_k * params.moe_routing_bytes_per_choice;
}

double MoeCombineBytesPerToken(const TransformerSpec& model, Dtype activations) {
  return static_cast<double>(model.hidden) * DtypeBytes(activations);
}

double ServedWeightBytes(const TransformerSpec& model, Dtype weights) {
  double bytes = WeightBytes(model, weights);
  const double widen = DtypeBytes(Dtype::kBf16) - DtypeBytes(weights);  // per 16-bit weight
  if (widen <= 0) return bytes;
  // NVIDIA ModelOpt quantizes the linear layers of the transformer blocks only: the token
  // embedding (a lookup table, not a GEMM) and the norms stay 16-bit, and its default FP8 / NVFP4
  // configs (FP8_DEFAULT_CFG, NVFP4_DEFAULT_CFG in modelopt/torch/quantization/config.py) set
  // "*lm_head*" {enable: False}. serve/cost.cc prices the LM head's GEMM 16-bit; its weights are
  // stored so too (Llama 3 8B: 128,256 x 4,096 = 525M weights, 1.05 GB). Tied embeddings count
  // once.
  const ParamCounts c = CountParams(model);
  bytes += (c.embedding + c.lm_head + c.norms_per_layer * static_cast<double>(model.layers) +
            c.final_norm) *
           widen;
  // NVIDIA's NVFP4 DeepSeek-R1 checkpoints keep self-attention 16-bit (hf_quant_config
  // exclude_modules "model.layers.*.self_attn*"), as serve/cost.cc prices it: store it so too.
  if (model.attention == AttentionKind::kMla && weights == Dtype::kFp4) {
    bytes += c.attention_per_layer * static_cast<double>(model.layers) * widen;
  }
  return bytes;
}

std::vector<int> CapturedGraphSizes(const std::vector<int>& sizes, int max_batch,
                                    int max_num_tokens) {
  const int cap = std::min(max_batch, max_num_tokens);
  std::vector<int> out;
  for (int s : sizes) {
    if (s <= cap) {
      out.push_back(s);
      continue;
    }
    if (cap >= 1 && (out.empty() || out.back() != cap)) out.push_back(cap);
    break;
  }
  return out;
}

StatusOr<MemoryPlan> PlanMemory(const TransformerSpec& model, const GpuSpec& gpu,
                                const DeploymentRequest& req, const EngineParams& params) {
  MemoryPlan p;
  const int shards = req.tp * req.pp;
  p.gpu_memory_bytes = gpu.memory_bytes;
  p.weight_bytes_per_gpu = ServedWeightBytes(model, req.weights) / shards;
  DeploymentRequest rank = req;  // what one GPU runs: attention-DP's ranks are TP1 but experts
  if (req.attention_dp) {
    // Replicated weights whole on each GPU of a stage, the routed experts 1/tp of them.
    const double routed = RoutedExpertBytes(model, req.weights);
    p.weight_bytes_per_gpu =
        (ServedWeightBytes(model, req.weights) - routed) / req.pp + routed / shards;
    rank.tp = 1;
  }
  p.workspace_bytes = WorkspaceBytes(model, rank, params);
  double free_bytes = p.gpu_memory_bytes - p.weight_bytes_per_gpu - p.workspace_bytes;
  const std::string narrower = NarrowerWeights(req.weights);
  std::string where = model.name + " with --weights " + DtypeName(req.weights) + " at TP" +
                      std::to_string(req.tp) + " PP" + std::to_string(req.pp) +
                      (req.attention_dp ? " attention-DP" : "") + " on " + gpu.name;
  if (free_bytes <= 0) {
    return Status::DoesNotFit(
        "model does not fit: " + where + " needs " + Gb(p.weight_bytes_per_gpu) + " of weights + " +
        Gb(p.workspace_bytes) + " workspace per GPU, the GPU has " + Gb(p.gpu_memory_bytes) +
        "; use more --tp/--pp" +
        (narrower.empty() ? "" : " or a lower --weights precision (" + narrower + ")") +
        (p.workspace_bytes > params.workspace_bytes
             ? "; the workspace holds the activations of --max-num-tokens " +
                   std::to_string(req.max_num_tokens) + " tokens: lower it"
             : ""));
  }
  // K/V heads split by TP; replicated when TP exceeds the K/V heads (MLA latents: replicated).
  double kv_token = KvCacheBytesPerToken(model, req.kv);
  double kv_share = 1.0;
  if (model.attention != AttentionKind::kMla && model.kv_heads > 0) {
    int64_t heads_per_gpu = (model.kv_heads + rank.tp - 1) / rank.tp;
    kv_share = static_cast<double>(heads_per_gpu) / static_cast<double>(model.kv_heads);
  }
  p.kv_bytes_per_token_per_gpu = kv_token * kv_share / req.pp;
  p.kv_bytes_per_gpu = free_bytes * params.kv_free_memory_frac;
  // Attention-DP: each of the tp ranks has a cache of its own (its requests' K/V whole).
  const int caches = req.attention_dp ? req.tp : 1;
  const int64_t cache_tokens =
      static_cast<int64_t>(std::floor(p.kv_bytes_per_gpu / p.kv_bytes_per_token_per_gpu));
  const int64_t cache_blocks = cache_tokens / params.block_tokens;
  p.kv_tokens_per_replica = cache_tokens * caches;
  p.kv_blocks_per_replica = cache_blocks * caches;
  int64_t need_blocks = (req.max_seq_tokens + params.block_tokens - 1) / params.block_tokens;
  if (cache_blocks < need_blocks * req.pp) {
    return Status::DoesNotFit(
        "model does not fit: " + where + " leaves " + Gb(p.kv_bytes_per_gpu) +
        " of KV cache per GPU, " + std::to_string(cache_tokens) +
        (req.attention_dp ? " tokens per attention-DP rank" : " tokens per replica") +
        ", fewer than one request of " + std::to_string(req.max_seq_tokens) +
        " tokens per pipeline group; use more --tp/--pp" +
        (narrower.empty() ? "" : ", lower --weights (" + narrower + ")") +
        (DtypeBytes(req.kv) >= 2 ? ", --kv fp8" : "") + " or shorter requests");
  }
  return p;
}

StatusOr<int> CountReplicas(const SkuSpec& sku, int vms, int tp, int pp, int ep) {
  // Experts are split over the TP group's GPUs (TensorRT-LLM's moe_ep x moe_tp = tp): EP takes no
  // extra GPUs, and must divide TP.
  if (ep > 1 && tp % ep != 0) {
    return Status::Infeasible("--ep " + std::to_string(ep) +
                              " splits the experts over the TP group, so TP must be a multiple "
                              "of it (TP is " +
                              std::to_string(tp) + "); use --tp " + std::to_string(ep) +
                              " or more, or a smaller --ep");
  }
  const int group = tp * pp;
  const int total = sku.gpus * vms;
  if (tp > sku.nvlink_domain_gpus) {
    return Status::Infeasible("--tp " + std::to_string(tp) + " exceeds the NVLink domain of " +
                              sku.name + " (" + std::to_string(sku.nvlink_domain_gpus) +
                              " GPUs); use --tp <= " + std::to_string(sku.nvlink_domain_gpus) +
                              " and --pp across VMs");
  }
  if (group > total) {
    return Status::Infeasible("a replica of TP" + std::to_string(tp) + " x PP" +
                              std::to_string(pp) + " = " + std::to_string(group) +
                              " GPUs needs more than the " + std::to_string(total) + " GPUs of " +
                              std::to_string(vms) + " VM(s); add --vms or lower --tp/--pp");
  }
  if (group > sku.gpus && !sku.infiniband) {
    return Status::Infeasible("a replica of TP" + std::to_string(tp) + " x PP" +
                              std::to_string(pp) + " = " + std::to_string(group) +
                              " GPUs spans VMs, and " + sku.name +
                              " has no InfiniBand to carry its pipeline sends; keep --tp x --pp "
                              "<= " +
                              std::to_string(sku.gpus) +
                              " (one VM per replica) or use a size "
                              "with InfiniBand");
  }
  if (group <= sku.gpus) return (sku.gpus / group) * vms;
  // A replica spans VMs: its TP groups each lie inside one NVLink domain (a VM, or an NVL72 rack
  // of vms_per_nvlink_domain consecutive VMs, the last rack possibly partial) and its PP stages
  // may cross them. Count the TP groups each domain holds: total / group would also count groups
  // straddling two racks, whose all-reduces would cross InfiniBand while being priced on NVLink
  // (GB300, 20 VMs, TP16: 80 / 16 = 5, but the first rack holds 4 and the second's 8 GPUs none).
  const int domain_vms = std::max(1, sku.vms_per_nvlink_domain);
  const int64_t domain_gpus = int64_t{domain_vms} * sku.gpus;
  const int64_t tp_groups =
      int64_t{vms / domain_vms} * (domain_gpus / tp) + int64_t{vms % domain_vms} * sku.gpus / tp;
  const int64_t replicas = tp_groups / pp;
  if (replicas < 1) {
    return Status::Infeasible(
        "a replica of TP" + std::to_string(tp) + " x PP" + std::to_string(pp) + " needs " +
        std::to_string(pp) + " TP group(s) of " + std::to_string(tp) +
        " GPUs, each inside one NVLink domain of " + std::to_string(domain_gpus) + " GPUs, and " +
        std::to_string(vms) + " VM(s) of " + sku.name + " hold " + std::to_string(tp_groups) +
        "; add --vms or lower --tp/--pp");
  }
  return static_cast<int>(replicas);
}

}  // namespace ndt
