// File: cmd/train.cc
// `ndtwin train`: one training iteration of a transformer on N VMs of a size: step time,
// tokens/s, model and hardware TFLOP/s per GPU, MFU, memory per GPU with its parts, a time
// breakdown, the chosen strategy, and for --tokens the time to train and its cost. Optionally a
// Chrome/Perfetto trace (--trace FILE). The numbers come from parallel/train.h.
#include "parallel/train.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "cmd/text.h"
#include "compute/compute.h"
#include "hw/catalog.h"
#include "parallel/cluster_costs.h"
#include "parallel/stack.h"
#include "report/trace.h"
#include "topo/builders.h"

namespace ndt {
namespace {

struct TrainRequest : CommandRequest {
  std::string sku;
  ModelArgs model;
  FabricArgs fabric;
  int vms = 1;
  int64_t gbs = 0;
  std::optional<int64_t> mbs;
  int tp = 1, pp = 1, cp = 1, ep = 1;
  std::optional<int> dp, vpp;
  bool uneven_stages = false;
  // Knobs a software stack sets unless given (parallel/stack.h).
  std::optional<bool> sp, tp_overlap, no_dp_overlap, no_flash_attn, no_grad_accum_fusion;
  std::optional<int> zero;
  std::optional<std::string> recompute, precision;
  std::string stack = kDefaultTrainStack, fidelity = "analytical";
  std::optional<std::string> schedule, trace;
  std::string order, cp_comm = "ring";
  double tokens = 0;

  void Declare(OptionList* o) override {
    o->Add("sku", &sku, "VM size (see: ndtwin sku list)").Required();
    o->Add("vms", &vms, "Number of VMs (default 1)");
    model.Declare(o);
    o->Add("gbs", &gbs, "Global batch (sequences per iteration)").Required();
    o->Add("mbs", &mbs, "Micro-batch size (default: best feasible)");
    o->Add("tp", &tp, "Tensor parallel degree (default 1)");
    o->Add("pp", &pp, "Pipeline parallel degree (default 1)");
    o->Add("dp", &dp, "Data parallel degree (default: GPUs / (tp*pp*cp))");
    o->Add("vpp", &vpp, "Model chunks per stage, interleaved 1F1B (default: best)");
    o->Add("cp", &cp, "Context parallel degree (default 1)");
    o->Add("cp-comm", &cp_comm,
           "ring (P2P, overlapped with attention; default) | all_gather (Llama 3)");
    o->Add("ep", &ep, "Expert parallel degree, MoE (default 1)");
    o->Add("sp", &sp, "Sequence parallelism (with --tp > 1)");
    o->Add("tp-overlap", &tp_overlap,
           "Overlap TP communication with the GEMMs (Megatron --tp-comm-overlap; needs --sp)");
    o->Add("uneven-stages", &uneven_stages,
           "Allow layers not divisible by pp*vpp: the first and last stages get fewer");
    o->Add("recompute", &recompute, "none | selective | full (default: the stack's)");
    o->Add("zero", &zero, "ZeRO stage 0-3 (default: the stack's)");
    o->Add("precision", &precision, "bf16 | fp16 | fp8 (default: the stack's)");
    o->Add("stack", &stack,
           std::string("Software stack, a dated preset of knobs and traits from data/stacks/ "
                       "(default ") +
               kDefaultTrainStack + "); flags beat it");
    o->Add("schedule", &schedule, "gpipe | 1f1b (default; interleaved with --vpp)");
    o->Add("fidelity", &fidelity,
           "analytical | flow | estimate (the planner's closed form; default analytical)");
    o->Add("order", &order, "Rank order, fastest first (default tp,cp,ep,dp,pp)");
    o->Add("no-flash-attn", &no_flash_attn,
           "Unfused attention (Megatron-LM before FlashAttention)");
    o->Add("no-dp-overlap", &no_dp_overlap, "Reduce gradients after the backward");
    o->Add("no-grad-accum-fusion", &no_grad_accum_fusion,
           "Accumulate weight gradients in a separate kernel per micro-batch (before "
           "Megatron-LM's gradient_accumulation_fusion)");
    o->Add("tokens", &tokens, "Training tokens: print time to train and cost");
    o->Add("trace", &trace, "Write a Chrome/Perfetto trace of the step to FILE").LocalFile();
    fabric.Declare(o);
  }
};

Status BuildStrategy(const TrainRequest& f, const std::vector<SoftwareStack>& stacks,
                     TrainJob* job) {
  Strategy& s = job->strategy;
  if (f.gbs < 1) return Status::InvalidInput("--gbs (global batch, sequences) must be >= 1");
  for (const auto& [name, v] :
       {std::pair{"--dp", f.dp ? std::optional<int64_t>(*f.dp) : std::nullopt},
        std::pair{"--mbs", f.mbs},
        std::pair{"--vpp", f.vpp ? std::optional<int64_t>(*f.vpp) : std::nullopt}}) {
    if (v.has_value() && *v < 1) {
      return Status::InvalidInput(std::string(name) + " must be >= 1 (got " + std::to_string(*v) +
                                  "); omit it to choose it automatically");
    }
  }
  if (f.trace.has_value() && f.trace->empty()) {
    return Status::InvalidInput("--trace needs a file name (e.g. --trace step.json)");
  }
  s.gbs = f.gbs;
  s.tp = f.tp;
  s.pp = f.pp;
  s.dp = f.dp.value_or(0);
  s.cp = f.cp;
  s.ep = f.ep;
  s.uneven_stages = f.uneven_stages;
  job->mbs_given = f.mbs.has_value();
  s.mbs = f.mbs.value_or(1);
  job->vpp_given = f.vpp.has_value() || f.pp == 1;
  s.vpp = f.vpp.value_or(1);
  // The stack fills every knob the user did not give (parallel/stack.h).
  StrategyKnobs user;
  if (f.recompute.has_value()) {
    Recompute r;
    if (!ParseRecompute(*f.recompute, &r)) {
      return Status::InvalidInput("--recompute '" + *f.recompute +
                                  "'; use none, selective or full");
    }
    user.recompute = r;
  }
  if (f.precision.has_value()) {
    Dtype d;
    if (!ParseDtype(*f.precision, &d) || d == Dtype::kFp32 || d == Dtype::kFp4) {
      return Status::InvalidInput("--precision '" + *f.precision + "'; use bf16, fp16 or fp8");
    }
    user.precision = d;
  }
  if (f.sp.has_value()) user.sp = *f.sp;
  if (f.tp_overlap.has_value()) user.tp_overlap = *f.tp_overlap;
  if (f.zero.has_value()) user.zero = *f.zero;
  if (f.no_flash_attn.has_value()) user.flash_attention = false;
  if (f.no_dp_overlap.has_value()) user.overlap_dp = false;
  if (f.no_grad_accum_fusion.has_value()) user.grad_accum_fusion = false;
  NDT_ASSIGN_OR_RETURN(SoftwareStack stack, FindStack(stacks, f.stack, StackKind::kTraining));
  ApplyTrainStack(stack, user, &s);
  const std::string schedule = f.schedule.value_or("1f1b");
  if (!ParsePipeSchedule(schedule, &s.schedule)) {
    return Status::InvalidInput("--schedule '" + schedule +
                                "'; use gpipe, 1f1b or interleaved (with --vpp > 1)");
  }
  if (f.vpp.value_or(0) > 1 && f.schedule.has_value() && s.schedule != PipeSchedule::kInterleaved) {
    return Status::InvalidInput("--vpp " + std::to_string(*f.vpp) + " interleaves the pipeline; " +
                                "drop --schedule " + schedule + " or use --vpp 1");
  }
  if (!f.order.empty()) {
    NDT_ASSIGN_OR_RETURN(s.order, ParseOrder(f.order));
  }
  if (!ParseCpComm(f.cp_comm, &s.cp_comm)) {
    return Status::InvalidInput("--cp-comm '" + f.cp_comm + "'; use ring or all_gather");
  }
  if (f.tokens < 0) return Status::InvalidInput("--tokens must be >= 0");
  job->tokens = f.tokens;
  job->want_trace = f.trace.has_value();
  return Status::Ok();
}

double GiB(double b) { return b / (1024.0 * 1024 * 1024); }

std::string StrategyLine(const std::string& stack, const Strategy& s) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s: tp %d, pp %d, dp %d, cp %d, ep %d, vpp %d, sp %s, zero %d, recompute %s, "
                "mbs %lld, gbs %lld (%lld micro-batch%s), %s, %s",
                stack.c_str(), s.tp, s.pp, s.dp, s.cp, s.ep, s.vpp, s.sp ? "on" : "off", s.zero,
                RecomputeName(s.recompute), static_cast<long long>(s.mbs),
                static_cast<long long>(s.gbs), static_cast<long long>(s.micro_batches()),
                s.micro_batches() == 1 ? "" : "es", PipeScheduleName(s.schedule),
                DtypeName(s.precision));
  return std::string(buf) + (s.tp_overlap ? ", tp overlap" : "") +
         (s.uneven_stages ? ", uneven stages" : "");
}

std::string TrainText(const TrainJob& job, const std::string& stack, const SkuSpec& sku,
                      const TrainReport& r, const IntervalClass& iv) {
  TextOut p;
  const TimeBreakdown& b = r.sim.breakdown;
  const MemoryBreakdown& m = r.memory;
  const double t = r.sim.step_time_s;
  p("Job:           %s, seq %lld, on %d x %s (%d GPUs)\n", job.model.name.c_str(),
    static_cast<long long>(job.model.seq_len), job.num_gpus / job.gpus_per_vm, sku.name.c_str(),
    job.num_gpus);
  p("Strategy:      %s\n", StrategyLine(stack, r.strategy).c_str());
  if (!r.chosen.empty()) {
    std::string c;
    for (const std::string& x : r.chosen) c += (c.empty() ? "" : ", ") + x;
    p("Chosen:        %s (best feasible)\n", c.c_str());
  }
  p("Step time:     %.4f s%s\n", t, IntervalText(iv, iv.OfTime(t), "%.4g", "s").c_str());
  p("Throughput:    %.0f tokens/s\n", r.tokens_per_s);
  const std::pair<double, double> mfu = iv.OfRate(100 * r.mfu);
  p("Model FLOP/s:  %.1f TFLOP/s per GPU, MFU %.1f%% of %.0f TFLOP/s peak%s\n",
    r.model_tflops_per_gpu, 100 * r.mfu, r.peak_flops / 1e12,
    IntervalText(iv, mfu, "%.1f", "% MFU").c_str());
  // MFU counts attention over the whole sequence (Megatron's and PaLM's convention); the GPU
  // executes causal attention, half the score blocks, so "executed" can be below the model rate.
  p("Hardware:      %.1f TFLOP/s per GPU executed (recompute in, masked half of causal "
    "attention out)\n",
    r.hardware_tflops_per_gpu);
  p("Memory/GPU:    %.1f GiB of %.1f GiB (stage %d): weights %.1f, grads %.1f, "
    "optimizer %.1f, activations %.1f, comm %.1f, workspace %.1f\n",
    GiB(m.total_bytes()), GiB(job.gpu_memory_bytes), m.peak_stage, GiB(m.weights_bytes),
    GiB(m.gradients_bytes), GiB(m.optimizer_bytes), GiB(m.activations_bytes),
    GiB(m.comm_buffers_bytes), GiB(m.workspace_bytes));
  auto pct = [&](double x) { return t > 0 ? 100 * x / t : 0.0; };
  p("Breakdown:     compute %.4f s (%.1f%%), TP %.4f s (%.1f%%), CP %.4f s (%.1f%%), "
    "EP %.4f s (%.1f%%), bubble %.4f s (%.1f%%), DP %.4f s (%.1f%%), optimizer "
    "%.4f s (%.1f%%)\n",
    b.compute_s, pct(b.compute_s), b.tp_comm_s, pct(b.tp_comm_s), b.cp_comm_s, pct(b.cp_comm_s),
    b.ep_comm_s, pct(b.ep_comm_s), b.pp_bubble_s, pct(b.pp_bubble_s), b.dp_comm_s, pct(b.dp_comm_s),
    b.optimizer_s, pct(b.optimizer_s));
  if (job.tokens > 0) {
    p("Time to train: %.2f days for %.3g tokens", r.time_to_train_s / 86400, job.tokens);
    if (job.vm_usd_per_hour > 0) {
      p(", $%.0f at $%.2f per VM-hour", r.cost_usd, job.vm_usd_per_hour);
    } else {
      p(" (no price for this size)");
    }
    p("\n");
  }
  return p.take();
}

nlohmann::ordered_json ToJson(const TrainJob& job, const std::string& stack, const SkuSpec& sku,
                              const TrainReport& r, const IntervalClass& iv) {
  using Json = nlohmann::ordered_json;
  const Strategy& s = r.strategy;
  const MemoryBreakdown& m = r.memory;
  const TimeBreakdown& b = r.sim.breakdown;
  Json j;
  j["schema"] = "ndtwin.train/1";
  j["ndtwin_version"] = NDT_VERSION;
  j["sku"] = sku.name;
  j["vms"] = job.num_gpus / job.gpus_per_vm;
  j["gpus"] = job.num_gpus;
  j["model"] = job.model.name;
  j["seq_len"] = job.model.seq_len;
  j["step_time_s"] = r.sim.step_time_s;
  j["step_time_s_interval"] = IntervalJson(iv, iv.OfTime(r.sim.step_time_s));
  j["tokens_per_s"] = r.tokens_per_s;
  j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["mfu_interval"] = IntervalJson(iv, iv.OfRate(r.mfu));
  j["peak_tflops_per_gpu"] = r.peak_flops / 1e12;
  j["memory"] = Json{{"peak_bytes_per_gpu", m.total_bytes()},
                     {"capacity_bytes", job.gpu_memory_bytes},
                     {"peak_stage", m.peak_stage},
                     {"weights_bytes", m.weights_bytes},
                     {"gradients_bytes", m.gradients_bytes},
                     {"optimizer_bytes", m.optimizer_bytes},
                     {"activations_bytes", m.activations_bytes},
                     {"comm_buffers_bytes", m.comm_buffers_bytes},
                     {"workspace_bytes", m.workspace_bytes},
                     {"inflight_microbatches", m.inflight_microbatches}};
  j["breakdown"] = Json{{"compute_s", b.compute_s},     {"tp_comm_s", b.tp_comm_s},
                        {"cp_comm_s", b.cp_comm_s},     {"ep_comm_s", b.ep_comm_s},
                        {"pp_bubble_s", b.pp_bubble_s}, {"dp_comm_s", b.dp_comm_s},
                        {"optimizer_s", b.optimizer_s}};
  Json chosen = Json::array();
  for (const std::string& c : r.chosen) chosen.push_back(c);
  j["strategy"] = Json{{"stack", stack},
                       {"tp", s.tp},
                       {"pp", s.pp},
                       {"dp", s.dp},
                       {"cp", s.cp},
                       {"ep", s.ep},
                       {"vpp", s.vpp},
                       {"sp", s.sp},
                       {"zero", s.zero},
                       {"recompute", RecomputeName(s.recompute)},
                       {"mbs", s.mbs},
                       {"gbs", s.gbs},
                       {"micro_batches", s.micro_batches()},
                       {"schedule", PipeScheduleName(s.schedule)},
                       {"precision", DtypeName(s.precision)},
                       {"uneven_stages", s.uneven_stages},
                       {"tp_overlap", s.tp_overlap},
                       {"chosen", chosen}};
  if (job.tokens > 0) {
    j["tokens"] = job.tokens;
    j["time_to_train_s"] = r.time_to_train_s;
    j["cost_usd"] = job.vm_usd_per_hour > 0 ? Json(r.cost_usd) : Json(nullptr);
  }
  j["simulated_tasks"] = r.sim.tasks;
  return j;
}

Trace BuildTrace(const TrainReport& r) {
  Trace t;
  t.title = "ndtwin train";
  int pp = r.strategy.pp;
  const int streams = static_cast<int>(r.sim.stream_names.size());
  for (int st = 0; st < pp; ++st) {
    for (int k = 0; k < streams; ++k) {
      t.tracks.push_back({st, k, "stage " + std::to_string(st), r.sim.stream_names[k]});
    }
  }
  for (const StepSpan& sp : r.sim.spans) {
    t.spans.push_back({sp.stage * streams + sp.stream, sp.name, sp.category, sp.start_s, sp.dur_s});
  }
  return t;
}

StatusOr<CommandOutput> RunTrain(const Context& ctx, const TrainRequest& f, Diagnostics* diag) {
  const Catalog& cat = ctx.catalog;
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, cat.FindSku(f.sku));
  if (f.vms < 1) return Status::InvalidInput("--vms must be >= 1");
  NDT_ASSIGN_OR_RETURN(TransformerSpec model, f.model.Resolve(ctx));
  // estimate: the planner's first pass, the closed form of parallel/step_estimate.h over the
  // analytical costs (mbs and vpp chosen by it too), no task graph: what sweeps use for speed.
  const bool estimate = f.fidelity == "estimate";
  Fidelity fidelity = Fidelity::kAnalytical;
  if (!estimate && !ParseFidelity(f.fidelity, &fidelity)) {
    return Status::InvalidInput("--fidelity '" + f.fidelity +
                                "'; use analytical, flow or estimate");
  }
  TrainJob job;
  job.model = model;
  job.closed_form_search = estimate;
  NDT_RETURN_IF_ERROR(BuildStrategy(f, ctx.stacks, &job));
  const GpuSpec& gpu = cat.GpuOf(*sku);
  if (f.vms > 1 && !sku->infiniband && sku->nvlink_domain_gpus <= sku->gpus) {
    return Status::InvalidInput(sku->name +
                                " has no InfiniBand: training across VMs needs a scale-out "
                                "network; use --vms 1 or a size with InfiniBand");
  }
  if (const std::string note = PrecisionNote(gpu, job.strategy.precision); !note.empty()) {
    diag->Warn(note);
  }
  ClusterSpec cs;
  cs.sku = sku;
  cs.gpu = &gpu;
  cs.vms = f.vms;
  f.fabric.Apply(&cs);
  NDT_ASSIGN_OR_RETURN(Cluster cluster, BuildCluster(cs, ctx.fabric));
  job.num_gpus = cluster.num_gpus();
  job.gpus_per_vm = cluster.gpus_per_vm();
  job.nvlink_domain_gpus = cluster.nvlink_domain_gpus();
  job.gpu_memory_bytes = gpu.memory_bytes;  // what CUDA can allocate (data/gpus)
  job.vm_usd_per_hour = sku->price ? sku->price->usd_per_hour : 0;
  ClusterCosts costs(cluster, ctx.compute, ctx.nccl, job.strategy.precision, fidelity);
  NDT_ASSIGN_OR_RETURN(TrainReport r, RunTraining(job, costs));
  for (const std::string& w : r.warnings) diag->Warn(w);
  if (f.trace.has_value()) NDT_RETURN_IF_ERROR(WriteTrace(BuildTrace(r), *f.trace));
  // ZeRO-3 runs have their own class: their parameter gathers are a mechanism of their own.
  const IntervalClass iv =
      IntervalFor(ctx, *sku, r.strategy.zero == 3 ? "training-zero3" : "training");
  return CommandOutput{ToJson(job, f.stack, *sku, r, iv), TrainText(job, f.stack, *sku, r, iv)};
}

}  // namespace

Command TrainCommand() {
  return MakeCommand<TrainRequest>(
      "train", "Simulate one training iteration: time, memory, MFU, trace", RunTrain);
}

}  // namespace ndt
