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
#include "cmd/text.h"
#include "compute/compute.h"
#include "core/files.h"
#include "core/units.h"
#include "hw/catalog.h"
#include "model/transformer.h"
#include "parallel/stack.h"
#include "report/trace.h"
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
  std::optional<bool> no_host_overlap;
  std::optional<std::string> trace;
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
    o->Add("max-batch", &max_batch, "Max sequences in flight per engine (default: best)")
        .Range(1, kMaxBatch, kChoose);
    o->Add("max-num-tokens", &max_num_tokens, "Max tokens per iteration (default 8192)")
        .Range(1, kMaxNumTokens, kChoose);
    o->Add("scenario", &scenario, "offline | server | interactive (default offline)");
    o->Add("qps", &qps, "Server/interactive: run this Poisson rate instead of searching")
        .Range(kMinQps, kMaxQps, "omit it to search for the highest rate");
    o->Add("ttft-p99", &ttft_p99, "p99 TTFT limit, e.g. \"2 s\" (default: the scenario's)");
    o->Add("tpot-p99", &tpot_p99, "p99 TPOT limit, e.g. \"200 ms\" (default: the scenario's)");
    lengths.Declare(o);
    o->Add("requests", &requests, "Requests to simulate (default: automatic)")
        .Range(1, kMaxRequests, kChoose);
    o->Add("seed", &seed, "Seed of the Poisson arrivals (default 1)");
    o->Add("trace", &trace, "Write a Perfetto/Chrome trace of engine 0 to FILE").LocalFile();
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
    prices.Declare(o);
  }
};

StatusOr<Dtype> ParseDtypeFlag(const std::string& flag, const std::string& v) {
  Dtype d;
  if (!ParseDtype(v, &d)) {
    return Status::InvalidInput(flag + " '" + v +
                                "' is not a precision; use fp16, bf16, fp8 or fp4");
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

Status BuildOptions(const Context& ctx, const InferFlags& f, InferOptions* o) {
  // The integer knobs and --qps are in their declared ranges (CheckRanges, every door).
  o->vms = f.vms;
  if (f.trace.has_value() && f.trace->empty()) {
    return Status::InvalidInput("--trace needs a file name (e.g. --trace serve.json)");
  }
  if (f.trace.has_value()) NDT_RETURN_IF_ERROR(CheckWritablePath(*f.trace, "--trace"));
  o->tp = f.tp.value_or(0);
  o->pp = f.pp.value_or(0);
  o->ep = f.ep;
  o->max_batch = f.max_batch.value_or(0);
  o->max_num_tokens = f.max_num_tokens.value_or(0);
  NDT_ASSIGN_OR_RETURN(o->weights, ParseDtypeFlag("--weights", f.weights));
  if (f.kv.empty()) {
    o->kv = DefaultKv(o->weights);
  } else {
    NDT_ASSIGN_OR_RETURN(o->kv, ParseDtypeFlag("--kv", f.kv));
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
    NDT_ASSIGN_OR_RETURN(o->lengths, f.lengths.Resolve(ctx));
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
  o->record_trace = f.trace.has_value();
  if (!f.stack.empty()) {
    NDT_ASSIGN_OR_RETURN(SoftwareStack st, FindStack(ctx.stacks, f.stack, StackKind::kServing));
    // Flags beat the stack: its knobs fill only what was left unset.
    if (o->max_batch == 0 && st.serve.max_batch) o->max_batch = *st.serve.max_batch;
    if (o->max_num_tokens == 0 && st.serve.max_num_tokens) {
      o->max_num_tokens = *st.serve.max_num_tokens;
    }
    o->host_overlap = st.host_overlap;
  }
  if (f.no_host_overlap.value_or(false)) o->host_overlap = false;
  return Status::Ok();
}

nlohmann::ordered_json Stats(const LatencyStats& s) {
  return {{"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean}, {"max", s.max}};
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

nlohmann::ordered_json ToJson(const InferFlags& f, const TransformerSpec& m, const InferResult& r,
                              const IntervalClass& iv) {
  const DeploymentInfo& d = r.deployment;
  nlohmann::ordered_json j;
  j["schema"] = "ndtwin.infer/1";
  j["ndtwin_version"] = NDT_VERSION;
  j["sku"] = f.sku;
  j["vms"] = f.vms;
  j["model"] = m.name;
  j["scenario"] = ScenarioName(r.scenario);
  j["seed"] = f.seed;
  j["output_tokens_per_s"] = r.output_tokens_per_s;
  j["output_tokens_per_s_interval"] = IntervalJson(iv, iv.OfRate(r.output_tokens_per_s));
  j["per_gpu_output_tokens_per_s"] = r.per_gpu_output_tokens_per_s;
  j["requests_per_s"] = r.requests_per_s;
  j["qps"] = r.qps;
  j["ttft_s"] = Stats(r.stats.ttft_s);
  // TTFT and TPOT were not measured in the validation data: their interval is the class's
  // tokens/s residuals applied to a time (1 / rate), and its basis says so.
  IntervalClass lat = iv;
  lat.basis += "; TTFT/TPOT not measured: the tokens/s residuals applied to a time (1/rate)";
  j["ttft_s"]["p99_interval"] = IntervalJson(lat, iv.OfTime(r.stats.ttft_s.p99));
  j["tpot_s"] = Stats(r.stats.tpot_s);
  j["tpot_s"]["p99_interval"] = IntervalJson(lat, iv.OfTime(r.stats.tpot_s.p99));
  j["e2e_s"] = Stats(r.stats.e2e_s);
  if (r.scenario != Scenario::kOffline) {
    j["slo"] = {{"ttft_p99_s", r.ttft_limit_s}, {"tpot_p99_s", r.tpot_limit_s}};
  }
  j["deployment"] = {{"tp", d.tp},
                     {"pp", d.pp},
                     {"ep", d.ep},
                     {"replicas", d.replicas},
                     {"gpus_used", d.gpus_used},
                     {"gpus_total", d.gpus_total},
                     {"max_batch", d.max_batch},
                     {"max_num_tokens", d.max_num_tokens},
                     {"weights", DtypeName(d.weights)},
                     {"kv", DtypeName(d.kv)},
                     {"chosen", d.chosen},
                     {"stack", f.stack.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(f.stack)},
                     {"host_overlap", r.host_overlap}};
  if (d.prefill_replicas > 0) {
    j["deployment"]["prefill_replicas"] = d.prefill_replicas;
    j["deployment"]["decode_replicas"] = d.decode_replicas;
  }
  j["kv_cache"] = {{"bytes_per_gpu", d.memory.kv_bytes_per_gpu},
                   {"weight_bytes_per_gpu", d.memory.weight_bytes_per_gpu},
                   {"tokens_per_replica", d.memory.kv_tokens_per_replica},
                   {"blocks_per_replica", d.memory.kv_blocks_per_replica},
                   {"mean_use", r.kv_mean_use_frac},
                   {"peak_use", r.kv_peak_use_frac},
                   {"preemptions", r.preemptions}};
  j["mean_batch"] = r.mean_batch;
  j["requests_simulated"] = r.requests_simulated;
  j["engines"] = r.engines;
  j["engines_simulated"] = r.engines_simulated;
  j["mean_input_tokens"] = r.mean_input_tokens;
  j["mean_output_tokens"] = r.mean_output_tokens;
  if (r.usd_per_million_tokens) {
    j["usd_per_million_tokens"] = *r.usd_per_million_tokens;
  } else {
    j["usd_per_million_tokens"] = nullptr;
  }
  if (r.caveat.empty()) {
    j["accuracy_caveat"] = nullptr;
  } else {
    j["accuracy_caveat"] = r.caveat;
  }
  return j;
}

std::string InferText(const InferFlags& f, const TransformerSpec& m, const InferResult& r,
                      const IntervalClass& iv) {
  TextOut p;
  const DeploymentInfo& d = r.deployment;
  auto ms = [](double s) { return s * 1e3; };
  p("Model:          %s (weights %s, KV %s)\n", m.name.c_str(), DtypeName(d.weights),
    DtypeName(d.kv));
  p("Cluster:        %d x %s = %d GPUs\n", f.vms, f.sku.c_str(), d.gpus_total);
  const std::string ep = d.ep > 1 ? " (EP" + std::to_string(d.ep) + " inside TP)" : "";
  p("Deployment:     %d %s of TP%d x PP%d%s (%d GPUs used), max batch %d, max tokens "
    "%d%s%s\n",
    d.replicas, d.replicas == 1 ? "replica" : "replicas", d.tp, d.pp, ep.c_str(), d.gpus_used,
    d.max_batch, d.max_num_tokens, d.chosen.empty() ? "" : "; chosen: ", Join(d.chosen).c_str());
  if (d.prefill_replicas > 0) {
    p("Disaggregated:  %d prefill replicas, %d decode replicas\n", d.prefill_replicas,
      d.decode_replicas);
  }
  p("Scenario:       %s", ScenarioName(r.scenario));
  if (r.scenario != Scenario::kOffline) {
    p(" at %.2f req/s (p99 limits: TTFT %.0f ms, TPOT %.0f ms)", r.qps, ms(r.ttft_limit_s),
      ms(r.tpot_limit_s));
  }
  p("\nRequests:       mean input %.1f, mean output %.1f tokens; %lld simulated on %d of %d "
    "engines\n",
    r.mean_input_tokens, r.mean_output_tokens, static_cast<long long>(r.requests_simulated),
    r.engines_simulated, r.engines);
  p("Throughput:     %.1f output tokens/s (%.1f per GPU), %.2f requests/s%s\n",
    r.output_tokens_per_s, r.per_gpu_output_tokens_per_s, r.requests_per_s,
    IntervalText(iv, iv.OfRate(r.output_tokens_per_s), "%.1f", "tokens/s").c_str());
  p("TTFT:           p50 %.1f ms, p90 %.1f ms, p99 %.1f ms%s\n", ms(r.stats.ttft_s.p50),
    ms(r.stats.ttft_s.p90), ms(r.stats.ttft_s.p99),
    IntervalText(iv, iv.OfTime(ms(r.stats.ttft_s.p99)), "%.1f", "ms p99").c_str());
  p("TPOT:           p50 %.2f ms, p90 %.2f ms, p99 %.2f ms%s\n", ms(r.stats.tpot_s.p50),
    ms(r.stats.tpot_s.p90), ms(r.stats.tpot_s.p99),
    IntervalText(iv, iv.OfTime(ms(r.stats.tpot_s.p99)), "%.2f", "ms p99").c_str());
  p("End to end:     p50 %.2f s, p90 %.2f s, p99 %.2f s\n", r.stats.e2e_s.p50, r.stats.e2e_s.p90,
    r.stats.e2e_s.p99);
  p("Batch:          mean %.1f sequences per iteration\n", r.mean_batch);
  p("KV cache:       %.1f GB per GPU (%lld tokens per replica), mean use %.0f%%, peak %.0f%%, "
    "%lld preemptions\n",
    d.memory.kv_bytes_per_gpu / 1e9, static_cast<long long>(d.memory.kv_tokens_per_replica),
    r.kv_mean_use_frac * 100, r.kv_peak_use_frac * 100, static_cast<long long>(r.preemptions));
  if (r.usd_per_million_tokens) {
    p("Cost:           $%.3f per million output tokens ($%.2f/h)\n", *r.usd_per_million_tokens,
      r.usd_per_hour);
  } else {
    p("Cost:           n/a (no price for this size)\n");
  }
  return p.take();
}

Trace BuildTrace(const InferResult& r) {
  Trace t;
  t.title = "ndtwin infer: engine 0";
  t.tracks.push_back({0, 0, "engine 0", "iterations"});
  for (const IterationRecord& it : r.trace_iterations) {
    t.spans.push_back({0,
                       "iter b" + std::to_string(it.batch) + " p" +
                           std::to_string(it.prefill_tokens) + " d" +
                           std::to_string(it.decode_tokens),
                       "compute", it.start_s, it.dur_s});
  }
  // Requests on lanes: each goes to the lowest lane free at its arrival (deterministic).
  std::vector<double> lane_free;
  for (const RequestRecord& q : r.trace_requests) {
    size_t lane = 0;
    while (lane < lane_free.size() && lane_free[lane] > q.arrival_s) ++lane;
    if (lane == lane_free.size()) {
      if (lane_free.size() >= 256) continue;  // keep the file small
      lane_free.push_back(0);
      t.tracks.push_back({1, static_cast<int>(lane), "requests", "lane " + std::to_string(lane)});
    }
    lane_free[lane] = q.finish_s;
    int track = static_cast<int>(lane) + 1;
    std::string id = "req " + std::to_string(q.id);
    t.spans.push_back({track, id + " ttft", "prefill", q.arrival_s, q.ttft_s()});
    t.spans.push_back(
        {track, id + " decode", "decode", q.first_token_s, q.finish_s - q.first_token_s});
  }
  return t;
}

StatusOr<CommandOutput> RunInfer(const Context& base, const InferFlags& f, Diagnostics* diag) {
  std::optional<Context> priced;
  NDT_ASSIGN_OR_RETURN(const Context* c, f.prices.Apply(base, &priced));
  const Context& ctx = *c;
  const Catalog& cat = ctx.catalog;
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, cat.FindSku(f.sku));
  NDT_ASSIGN_OR_RETURN(TransformerSpec model, f.mf.Resolve(ctx));
  InferOptions o;
  NDT_RETURN_IF_ERROR(BuildOptions(ctx, f, &o));
  o.progress = [diag](const std::string& line) { diag->Progress(line); };
  // TP splits the attention heads, PP the layers (TensorRT-LLM refuses the same).
  if (o.tp > 0 &&
      (model.heads % o.tp != 0 || (model.kv_heads % o.tp != 0 && o.tp % model.kv_heads != 0))) {
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
  if (f.trace.has_value()) NDT_RETURN_IF_ERROR(WriteTrace(BuildTrace(r), *f.trace));
  const IntervalClass iv = IntervalFor(ctx, *sku, "serving");
  return CommandOutput{ToJson(f, model, r, iv), InferText(f, model, r, iv)};
}

}  // namespace

Command InferCommand() {
  return MakeCommand<InferFlags>(
      "infer", "Simulate an LLM inference service: throughput, TTFT, TPOT", RunInfer);
}

}  // namespace ndt
