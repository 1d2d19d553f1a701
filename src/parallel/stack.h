// File: parallel/stack.h
// Named software stacks: dated presets (data/stacks/*.yaml) of what users run ("Megatron-LM as of
// SC21", "DeepSpeed ZeRO-3, 2021", "TensorRT-LLM 0.14"), each knob and trait with its source.
// A training stack sets strategy knobs the tool already has (precision, recompute, FlashAttention,
// gradient-accumulation fusion, DP/PP overlap, SP, TP overlap, ZeRO stage) and implementation
// traits the user cannot set (how ZeRO-3 gathers weights: Zero3Traits). A serving stack sets the
// defaults of `infer`'s engine knobs (max batch, max tokens per iteration, KV-cache fraction and
// block size) and states the engine behaviours it relies on (in-flight batching, chunked prefill).
// Knobs fill only what the user left unset: flags beat the stack (ApplyTrainStack).
// Files are read strictly (core/yaml.h): unknown or missing keys, a value without its source, a
// quantity without its unit are one-line errors with file:line.
#ifndef NDTWIN_PARALLEL_STACK_H_
#define NDTWIN_PARALLEL_STACK_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/yaml.h"
#include "hw/spec.h"
#include "model/transformer.h"
#include "parallel/strategy.h"

namespace ndt {

// The strategy knobs a stack (or the user) may set; nullopt = not set.
struct StrategyKnobs {
  std::optional<Dtype> precision;
  std::optional<Recompute> recompute;
  std::optional<bool> flash_attention;
  std::optional<bool> grad_accum_fusion;
  std::optional<bool> overlap_dp;
  std::optional<bool> overlap_p2p;
  std::optional<bool> sp;          // applied only where tp > 1
  std::optional<bool> tp_overlap;  // applied only where sp is on and tp > 1
  std::optional<int> zero;
  std::optional<AttentionKernel> attention_kernel;  // a trait of the stack; the user may override
  // Optional in a stack file (absent: not set; the defaults are Megatron-core's ring and even
  // stages): how context parallelism moves K/V, and whether the first and last pipeline stages
  // hold fewer layers (Llama 3's layout, Strategy::uneven_stages).
  std::optional<CpComm> cp_comm;
  std::optional<bool> uneven_stages;
  // Optional knob: the weights' all-gather overlapped with the next forward
  // (Strategy::overlap_param_gather); absent: after the optimizer.
  std::optional<bool> overlap_param_gather;
};

// Serving-engine defaults of a stack; nullopt = the engine's own default (data/serve/engine.yaml).
struct ServeKnobs {
  std::optional<int> max_batch;
  std::optional<int> max_num_tokens;
  std::optional<double> kv_free_memory_frac;
  std::optional<int> kv_block_tokens;
};

enum class StackKind { kTraining, kServing };

struct SoftwareStack {
  std::string name;  // "megatron-lm-2021"
  std::string date;  // "2021-04": when the software was as described
  std::string description;
  StackKind kind = StackKind::kTraining;
  StrategyKnobs knobs;    // training
  Zero3Traits zero3;      // training trait
  TpOverlapTraits tp_ub;  // training trait: how its TP overlap runs, if tp_overlap is on
  // training trait: the fused attention kernel it runs (with flash_attention on)
  AttentionKernel attention_kernel = AttentionKernel::kFlash2;
  // training trait `elementwise_kernels` (optional, default fused): eager runs norms, RoPE and
  // SwiGLU as PyTorch's eager kernels (Strategy::eager_elementwise).
  bool eager_elementwise = false;
  // training trait `selective_recompute` (optional, default attention_core): what selective
  // recompute re-runs (Strategy::selective_recompute).
  SelectiveRecompute selective_recompute = SelectiveRecompute::kAttentionCore;
  // training trait `zero_stages` (optional): the ZeRO stages the stack's software can run,
  // ascending, its own knobs.zero among them; the planners search these (plan/plan.h). Empty: not
  // stated (the planners search 0 up to the stack's stage, at least 1).
  std::vector<int> zero_stages;
  // training trait `host_issue_per_kernel` (optional, default 0):
  // Strategy::host_issue_per_kernel_s.
  double host_issue_per_kernel_s = 0;
  // training trait `loss_logits` (optional, default in_place): fp32_copy when the loss upcasts
  // the logits out of place before an eager cross-entropy (Strategy::loss_fp32_copy).
  bool loss_fp32_copy = false;
  // training trait `grad_dtype` (optional, default: the precision's, fp32 main_grad for bf16/fp8):
  // Strategy::grad_bytes_per_param (bf16: 2, fp32: 4).
  double grad_bytes_per_param = 0;
  // training trait `fp8_scaling` (optional, default delayed): current when Transformer Engine
  // scales each FP8 tensor by its own amax of the pass (Strategy::fp8_current_scaling).
  bool fp8_current_scaling = false;
  ServeKnobs serve;  // serving
  // Serving traits the engine model must have (serve/engine.h models both, always).
  bool in_flight_batching = true;
  bool chunked_prefill = true;
  // Whether the executor runs its host work (scheduling, stop checks, response updates) for one
  // iteration while the GPU runs the next (TensorRT-LLM's PyTorch-backend overlap scheduler);
  // serve/cost.h prices an iteration as max(host, GPU) + the fixed host part when it does.
  bool host_overlap = false;
  // Which TP all-reduce the engine runs (serve/allreduce.h): "nccl", "trtllm-2024" (the TensorRT
  // backend's AllReduce plugin), "trtllm-2025" (the PyTorch backend's AllreduceOp).
  std::string tp_allreduce = "nccl";
  // Whether decode-only iterations run as captured CUDA graphs (serve/cost.h).
  bool cuda_graphs = false;
  // "knobs.precision" / "traits.zero3_gather" -> where the value comes from.
  std::map<std::string, std::string> sources;
  std::string file;  // the YAML it came from
};

// Today's training stack: what `train` uses when no --stack is given.
inline constexpr const char* kDefaultTrainStack = "megatron-core-2024";

// Parses one stack file; errors carry file:line.
StatusOr<SoftwareStack> ParseStack(const YamlMap& m);
StatusOr<SoftwareStack> LoadStackFile(const std::string& path);
// Every data_dir/stacks/*.yaml ("" = NDT_DATA_DIR), sorted by name; a duplicate name or a file
// whose name is not "<name>.yaml" is an error.
StatusOr<std::vector<SoftwareStack>> LoadStacks(const std::string& data_dir = "");
// The stack called `name`; kNotFound with "did you mean" and the list of names otherwise.
// `kind`, when given, must match (a serving stack for `train` is kInvalidInput).
StatusOr<SoftwareStack> FindStack(const std::vector<SoftwareStack>& stacks, const std::string& name,
                                  std::optional<StackKind> kind = std::nullopt);

// Sets every knob of `s`: the user's where given, else the stack's, else s's current value; and
// the stack's implementation traits. REQUIRES: stack.kind == kTraining.
void ApplyTrainStack(const SoftwareStack& stack, const StrategyKnobs& user, Strategy* s);

// Whether `gpu` can train at `precision`. FP8 training needs FP8 tensor cores: Transformer
// Engine refuses it below compute capability 8.9 (transformer_engine/pytorch/fp8.py
// check_fp8_support, TE 1.x-2.x: "Device compute capability 8.9 or higher required for FP8
// execution"; fp8_autocast asserts it), and training has no weight-only FP8 to fall back on.
// kUnsupported naming --precision for FP8 on a GPU without FP8 tensor cores (Ampere, Volta);
// OK otherwise (other precisions keep the compute/ note where the GPU lacks them).
Status CheckTrainPrecision(const GpuSpec& gpu, Dtype precision);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_STACK_H_
