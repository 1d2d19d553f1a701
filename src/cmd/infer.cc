// File: cmd/infer.cc
// `ndtwin infer`: simulates an LLM inference service on N VMs of a size (serve/) and prints
// throughput (output tokens/s total and per GPU, requests/s), TTFT / TPOT / end-to-end latency
// percentiles, the deployment (chosen knobs marked), KV-cache use, preemptions and the cost per
// million output tokens; --json for machines, --trace for a Perfetto timeline of engine 0.
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "compute/compute.h"
#include "core/files.h"
#include "core/units.h"
#include "hw/catalog.h"
#include "model/transformer.h"
#include "parallel/stack.h"
#include "report/infer_render.h"
#include "report/timeline_json.h"
#include "serve/deployment.h"
#include "serve/run.h"

namespace ndt {
namespace {

// Limits of the integer knobs: beyond any engine (TensorRT-LLM's largest MLPerf batch is 3,584
// tokens and 2,048 sequences) and what one simulation handles in seconds.
constexpr int kMaxParallel = 1024;
constexpr int kMaxBatch = 16384;
constexpr int kMaxNumTokens = 1 << 20;
constexpr int kMaxRequests = 1000000;
// Poisson rates: above 1e6 requests/s arrivals pack into nanoseconds, no steady state to
// measure and no service of the catalog's VMs within orders of magnitude; below one request per
// 1,000 s a run of a thousand requests spans more than the 1e6 s a trace may (serve/request.h).
constexpr double kMinQps = 1e-3;
constexpr double kMaxQps = 1e6;
const char* const kChoose = "omit it to choose it automatically";

struct InferFlags : CommandRequest {
  ModelArgs mf;
  std::string sku, weights = "fp16", kv, scenario = "offline";
  std::string trace_file, disaggregate, ttft_p99, tpot_p99, stack;
  std::optional<bool> no_host_overlap, no_cuda_graphs, cuda_graph_padding, attention_dp,
      guaranteed_no_evict;
  std::string tp_allreduce;
  std::optional<std::string> trace;
  bool timeline = false;
  int vms = 1, ep = 1;
  // Integer knobs whose omission means "choose": given, they must be in 1..max.
  std::optional<int> tp, pp, max_batch, max_num_tokens, requests;
  std::optional<double> qps;
  LengthArgs lengths;
  PriceArgs prices;
  uint64_t seed = 1;

  void Declare(OptionList* o) override {
    o->Add("sku", &sku, "VM size (see: ndtwin sku list)").Required();
    o->Add("vms", &vms, "Number of VMs (default 1)").Range(1, kMaxVms);
    mf.Declare(o);
    o->Add("weights", &weights, "Weight precision: fp16, bf16, fp8, fp4 (default fp16)");
    o->Add("kv", &kv,
           "KV-cache precision: fp16, bf16, fp8 (default fp8 for 8/4-bit weights, else fp16)");
    o->Add("tp", &tp, "Tensor parallel degree (default: best feasible)")
        .Range(1, kMaxParallel, kChoose);
    o->Add("pp", &pp, "Pipeline parallel degree (default: best feasible)")
        .Range(1, kMaxParallel, kChoose);
    o->Add("ep", &ep,
           "Expert parallel degree (MoE): experts split inside the TP group, divides --tp")
        .Range(1, kMaxParallel);
    o->Add("attention-dp", &attention_dp,
           "MoE: attention data-parallel over the --tp GPUs, each with its own requests and KV "
           "cache, experts split over them (EP = TP; TensorRT-LLM enable_attention_dp); "
           "--max-batch and --max-num-tokens are then per rank");
    o->Add("max-batch", &max_batch, "Max sequences in flight per engine (default: best)")
        .Range(1, kMaxBatch, kChoose);
    o->Add("max-num-tokens", &max_num_tokens, "Max tokens per iteration (default 8192)")
        .Range(1, kMaxNumTokens, kChoose);
    o->Add("scenario", &scenario, "offline | server | interactive (default offline)");
    o->Add("qps", &qps, "Server/interactive: run this Poisson rate instead of searching")
        .Range(kMinQps, kMaxQps, "omit it to search for the highest rate");
    o->Add(
        "ttft-p99", &ttft_p99,
        "p99 TTFT limit, e.g. \"2 s\" (default: the dataset's MLPerf limit, else Llama-2-70B's)");
    o->Add("tpot-p99", &tpot_p99,
           "p99 TPOT limit, e.g. \"200 ms\" (default: the dataset's MLPerf limit, else "
           "Llama-2-70B's)");
    lengths.Declare(o);
    o->Add("requests", &requests, "Requests to simulate (default: automatic)")
        .Range(1, kMaxRequests, kChoose);
    o->Add("seed", &seed, "Seed of the Poisson arrivals (default 1)");
    o->Add("trace", &trace, "Write a Perfetto/Chrome trace of engine 0 to FILE").LocalFile();
    o->Add("timeline", &timeline, "Add engine 0's batch and KV use over time to the JSON")
        .ForReport();
    o->Add("trace-file", &trace_file,
           "Replay arrivals from CSV arrival_s,input_tokens,output_tokens")
        .LocalFile();
    o->Add("disaggregate", &disaggregate, "P:D prefill and decode replicas");
    o->Add("stack", &stack,
           "Serving stack from data/stacks/ (tensorrt-llm-2024, tensorrt-llm-2025): its engine "
           "defaults fill the knobs left unset, its host overlap applies (default: knobs "
           "searched, host overlap of tensorrt-llm-2025)");
    o->Add("no-host-overlap", &no_host_overlap,
           "Host work between GPU iterations (TensorRT-LLM's C++ executor), even if the stack "
           "overlaps it");
    o->Add("tp-allreduce", &tp_allreduce,
           "TP all-reduce of the engine: nccl, trtllm-2024, trtllm-2025 (TensorRT-LLM's own "
           "kernels below a size; default: the stack's, else trtllm-2025)");
    o->Add("no-cuda-graphs", &no_cuda_graphs,
           "Launch every kernel of every iteration (no CUDA graphs for decode-only batches)");
    o->Add("cuda-graph-padding", &cuda_graph_padding,
           "Pad decode-only batches to the next captured CUDA graph size up to 8192 (TensorRT-LLM "
           "perf-overview's cuda_graph_config enable_padding)");
    o->Add(
        "guaranteed-no-evict", &guaranteed_no_evict,
        "Admit a request only when the KV cache holds all of it, input and output (TensorRT-LLM "
        "GUARANTEED_NO_EVICT, trtllm-bench's default); default: admit on the prompt and "
        "preempt the newest when the cache fills (max-utilization, the default of NVIDIA's MLPerf "
        "harness)");
    prices.Declare(o);
  }
};

// fp32 parses as a Dtype (training) but is no serving precision: --weights fp32 ran, priced at
// 4 bytes per weight, though the help and this error list fp16..fp4 and plan infer refuses it.
StatusOr<Dtype> ParseDtypeFlag(const std::string& flag, const std::string& v,
                               const char* choices = "fp16, bf16, fp8 or fp4") {
  Dtype d;
  if (!ParseDtype(v, &d) || d == Dtype::kFp32) {
    return Status::InvalidInput(flag + " '" + v + "' is not a precision; use " + choices);
  }
  return d;
}

StatusOr<double> ParseLimit(const std::string& flag, const std::string& v) {
  if (v.empty()) return 0.0;
  StatusOr<double> s = ParseQuantity(v, Dim::kTime);
  if (!s.ok()) return s.status().WithPrefix(flag + ": ");
  if (*s <= 0) return Status::InvalidInput(flag + " must be > 0 (got '" + v + "')");
  return *s;
}

Status BuildOptions(const Context& ctx, const InferFlags& f, const std::string& model,
                    InferOptions* o) {
  // The integer knobs and --qps are in their declared ranges (CheckRanges, every door).
  o->vms = f.vms;
  if (f.trace.has_value() && f.trace->empty()) {
    return Status::InvalidInput("--trace needs a file name (e.g. --trace serve.json)");
  }
  if (f.trace.has_value()) NDT_RETURN_IF_ERROR(CheckWritablePath(*f.trace, "--trace"));
  o->tp = f.tp.value_or(0);
  o->pp = f.pp.value_or(0);
  o->ep = f.ep;
  o->attention_dp = f.attention_dp.value_or(false);
  o->max_batch = f.max_batch.value_or(0);
  o->max_num_tokens = f.max_num_tokens.value_or(0);
  NDT_ASSIGN_OR_RETURN(o->weights, ParseDtypeFlag("--weights", f.weights));
  if (f.kv.empty()) {
    o->kv = DefaultKv(o->weights);
  } else {
    NDT_ASSIGN_OR_RETURN(o->kv, ParseDtypeFlag("--kv", f.kv, "fp16, bf16 or fp8"));
    if (o->kv == Dtype::kFp4)
      return Status::InvalidInput("--kv fp4 is not supported; use fp16, bf16 or fp8");
  }
  if (!ParseScenario(f.scenario, &o->scenario)) {
    return Status::InvalidInput("--scenario '" + f.scenario +
                                "' is not one of offline, server, interactive");
  }
  const bool qps_given = f.qps.has_value();
  if (qps_given && o->scenario == Scenario::kOffline) {
    return Status::InvalidInput(
        "--qps needs --scenario server or interactive (offline sends all requests at t = 0)");
  }
  o->qps = f.qps.value_or(0.0);
  NDT_ASSIGN_OR_RETURN(o->ttft_p99_s, ParseLimit("--ttft-p99", f.ttft_p99));
  NDT_ASSIGN_OR_RETURN(o->tpot_p99_s, ParseLimit("--tpot-p99", f.tpot_p99));
  o->seed = f.seed;
  o->requests = f.requests.value_or(0);
  if (!f.trace_file.empty()) {
    if (f.lengths.fixed() || !f.lengths.dataset.empty()) {
      return Status::InvalidInput(
          "--trace-file gives the requests; drop --dataset/--input-len/--output-len");
    }
    if (f.lengths.output_tokens_mean.has_value())
      return Status::InvalidInput("--output-tokens-mean does not apply to --trace-file");
    NDT_ASSIGN_OR_RETURN(o->trace, LoadTraceCsv(f.trace_file));
    for (const Request& r : o->trace) o->lengths.push_back({r.input_tokens, r.output_tokens});
  } else {
    NDT_ASSIGN_OR_RETURN(o->lengths, f.lengths.Resolve(ctx, model));
    if (o->scenario != Scenario::kOffline) {
      // Limits not given are the dataset's own benchmark's (MLPerf: 405B 6 s / 175 ms, ...).
      NDT_ASSIGN_OR_RETURN(LatencyLimits l, f.lengths.BenchmarkLimits(
                                                ctx, o->scenario == Scenario::kInteractive, model));
      if (o->ttft_p99_s <= 0) o->ttft_p99_s = l.ttft_s;
      if (o->tpot_p99_s <= 0) o->tpot_p99_s = l.tpot_s;
    }
  }
  if (!f.disaggregate.empty()) {
    int p = 0, d = 0;
    char extra = 0;
    if (std::sscanf(f.disaggregate.c_str(), "%d:%d%c", &p, &d, &extra) != 2 || p < 1 || d < 1) {
      return Status::InvalidInput(
          "--disaggregate wants P:D, prefill and decode replica counts >= 1 (got '" +
          f.disaggregate + "')");
    }
    o->disaggregate_prefill = p;
    o->disaggregate_decode = d;
  }
  o->record_trace = f.trace.has_value() || f.timeline;
  if (!f.stack.empty()) {
    NDT_ASSIGN_OR_RETURN(SoftwareStack st, FindStack(ctx.stacks, f.stack, StackKind::kServing));
    // Flags beat the stack: its knobs fill only what was left unset.
    if (o->max_batch == 0 && st.serve.max_batch) o->max_batch = *st.serve.max_batch;
    if (o->max_num_tokens == 0 && st.serve.max_num_tokens) {
      o->max_num_tokens = *st.serve.max_num_tokens;
    }
    o->host_overlap = st.host_overlap;
    o->cuda_graphs = st.cuda_graphs;
    ParseTpAllReduce(st.tp_allreduce, &o->tp_allreduce);  // a name the stack parser checked
  }
  if (f.no_host_overlap.value_or(false)) o->host_overlap = false;
  if (f.no_cuda_graphs.value_or(false)) o->cuda_graphs = false;
  if (f.cuda_graph_padding.value_or(false)) {
    if (!o->cuda_graphs) {
      // Name what turned them off: the flag, or a stack without CUDA graphs (tensorrt-llm-2024).
      return Status::InvalidInput(
          f.no_cuda_graphs.value_or(false)
              ? std::string("--cuda-graph-padding needs CUDA graphs: drop --no-cuda-graphs")
              : "--cuda-graph-padding needs CUDA graphs, which --stack " + f.stack +
                    " does not use: drop one of the two");
    }
    o->cuda_graph_padding = true;
  }
  o->guaranteed_no_evict = f.guaranteed_no_evict.value_or(false);
  if (!f.tp_allreduce.empty() && !ParseTpAllReduce(f.tp_allreduce, &o->tp_allreduce)) {
    return Status::InvalidInput("--tp-allreduce '" + f.tp_allreduce +
                                "' is not one of nccl, trtllm-2024, trtllm-2025");
  }
  return Status::Ok();
}

StatusOr<CommandOutput> RunInfer(const Context& base, const InferFlags& f, Diagnostics* diag) {
  std::optional<Context> priced;
  NDT_ASSIGN_OR_RETURN(const Context* c, f.prices.Apply(base, &priced));
  const Context& ctx = *c;
  const Catalog& cat = ctx.catalog;
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, cat.FindSku(f.sku));
  NDT_ASSIGN_OR_RETURN(TransformerSpec model, f.mf.Resolve(ctx));
  InferOptions o;
  NDT_RETURN_IF_ERROR(BuildOptions(ctx, f, model.name, &o));
  o.progress = [diag](const std::string& line) { diag->Progress(line); };
  // TP splits the attention heads, PP the layers (TensorRT-LLM refuses the same).
  if (o.tp > 0 && !o.attention_dp && !TpSplitsHeads(model, o.tp)) {
    return Status::Infeasible("--tp " + std::to_string(o.tp) + " does not split " + model.name +
                              "'s " + std::to_string(model.heads) + " attention heads (" +
                              std::to_string(model.kv_heads) +
                              " KV heads); choose a divisor of both");
  }
  if (o.pp > 0 && o.pp > model.layers) {
    return Status::Infeasible("--pp " + std::to_string(o.pp) + " is more stages than " +
                              model.name + "'s " + std::to_string(model.layers) +
                              " layers; lower --pp");
  }
  if (const std::string note = PrecisionNote(cat.GpuOf(*sku), o.weights); !note.empty()) {
    diag->Warn(note);
  }
  EngineParams engine = ctx.engine;  // a serving stack's KV-cache fraction and block size
  if (!f.stack.empty()) {
    NDT_ASSIGN_OR_RETURN(SoftwareStack st, FindStack(ctx.stacks, f.stack, StackKind::kServing));
    if (st.serve.kv_free_memory_frac) engine.kv_free_memory_frac = *st.serve.kv_free_memory_frac;
    if (st.serve.kv_block_tokens) engine.block_tokens = *st.serve.kv_block_tokens;
  }
  const ServeData data{&cat, &ctx.fabric, &ctx.compute, &engine, &ctx.nccl, ctx.data_dir};
  NDT_ASSIGN_OR_RETURN(InferResult r, RunInferenceOn(data, sku->name, model, o));
  for (const std::string& w : r.warnings) diag->Warn(w);
  if (!r.caveat.empty()) diag->Warn(r.caveat);
  if (f.trace.has_value()) NDT_RETURN_IF_ERROR(WriteTrace(InferTrace(r), *f.trace));
  const IntervalClass iv = IntervalFor(ctx, *sku, "serving");
  std::string dataset;  // "" for fixed lengths and a trace file
  if (f.trace_file.empty()) {
    NDT_ASSIGN_OR_RETURN(dataset, f.lengths.Dataset(ctx, model.name));
  }
  const InferView v{f.sku, f.vms, f.seed, model, r, iv, f.stack, dataset};
  CommandOutput out{InferJson(v), InferText(v)};
  if (f.timeline) out.json["timeline"] = InferTimelineJson(r);
  return out;
}

}  // namespace

Command InferCommand() {
  return MakeCommand<InferFlags>(
      "infer", "Simulate an LLM inference service: throughput, TTFT, TPOT", RunInfer);
}

}  // namespace ndt
