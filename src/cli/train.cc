// File: cli/train.cc
// `ndtwin train`: one training iteration of a transformer on N VMs of a size: step time,
// tokens/s, model and hardware TFLOP/s per GPU, MFU, memory per GPU with its parts, a time
// breakdown, the chosen strategy, and for --tokens the time to train and its cost. Optionally a
// Chrome/Perfetto trace (--trace FILE). The numbers come from parallel/train.h.
#include "parallel/train.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/fabric_flags.h"
#include "cli/model_flags.h"
#include "compute/compute.h"
#include "hw/catalog.h"
#include "parallel/cluster_costs.h"
#include "parallel/stack.h"
#include "report/trace.h"
#include "topo/builders.h"

namespace ndt {
namespace {

struct TrainFlags {
  std::string sku;
  ModelFlags mf;
  FabricFlags fabric;
  int vms = 1;
  int64_t gbs = 0, mbs = 0;
  int tp = 1, pp = 1, dp = 0, vpp = 0, cp = 1, ep = 1, zero = 0;
  bool sp = false, no_dp_overlap = false, no_flash_attn = false, uneven_stages = false,
       tp_overlap = false, no_grad_accum_fusion = false;
  std::string recompute = "none", precision = "bf16", fidelity = "analytical", schedule = "1f1b";
  std::string order, trace, stack = kDefaultTrainStack;
  double tokens = 0;
  CLI::Option *dp_flag = nullptr, *mbs_flag = nullptr, *vpp_flag = nullptr, *trace_flag = nullptr,
              *schedule_flag = nullptr;
  // Knobs a software stack sets unless the user gives them.
  CLI::Option *sp_flag = nullptr, *tp_overlap_flag = nullptr, *recompute_flag = nullptr,
              *zero_flag = nullptr, *precision_flag = nullptr, *no_flash_flag = nullptr,
              *no_dp_overlap_flag = nullptr, *no_fusion_flag = nullptr;
};

bool Given(const CLI::Option* o) { return o != nullptr && o->count() > 0; }

Status BuildStrategy(const TrainFlags& f, const std::string& data_dir, TrainJob* job) {
  Strategy& s = job->strategy;
  if (f.gbs < 1) return Status::InvalidInput("--gbs (global batch, sequences) must be >= 1");
  for (const auto& [opt, v] :
       {std::pair{f.dp_flag, static_cast<int64_t>(f.dp)}, std::pair{f.mbs_flag, f.mbs},
        std::pair{f.vpp_flag, static_cast<int64_t>(f.vpp)}}) {
    if (opt != nullptr && opt->count() > 0 && v < 1) {
      return Status::InvalidInput(opt->get_name() + " must be >= 1 (got " + std::to_string(v) +
                                  "); omit it to choose it automatically");
    }
  }
  if (f.trace_flag != nullptr && f.trace_flag->count() > 0 && f.trace.empty()) {
    return Status::InvalidInput("--trace needs a file name (e.g. --trace step.json)");
  }
  s.gbs = f.gbs;
  s.tp = f.tp;
  s.pp = f.pp;
  s.dp = f.dp;
  s.cp = f.cp;
  s.ep = f.ep;
  s.uneven_stages = f.uneven_stages;
  job->mbs_given = f.mbs > 0;
  s.mbs = f.mbs > 0 ? f.mbs : 1;
  job->vpp_given = f.vpp > 0 || f.pp == 1;
  s.vpp = f.vpp > 0 ? f.vpp : 1;
  if (!ParseRecompute(f.recompute, &s.recompute)) {
    return Status::InvalidInput("--recompute '" + f.recompute + "'; use none, selective or full");
  }
  if (!ParseDtype(f.precision, &s.precision) || s.precision == Dtype::kFp32 ||
      s.precision == Dtype::kFp4) {
    return Status::InvalidInput("--precision '" + f.precision + "'; use bf16, fp16 or fp8");
  }
  if (!ParsePipeSchedule(f.schedule, &s.schedule)) {
    return Status::InvalidInput("--schedule '" + f.schedule +
                                "'; use gpipe, 1f1b or interleaved (with --vpp > 1)");
  }
  if (f.vpp > 1 && f.schedule_flag != nullptr && f.schedule_flag->count() > 0 &&
      s.schedule != PipeSchedule::kInterleaved) {
    return Status::InvalidInput("--vpp " + std::to_string(f.vpp) + " interleaves the pipeline; " +
                                "drop --schedule " + f.schedule + " or use --vpp 1");
  }
  if (!f.order.empty()) {
    NDT_ASSIGN_OR_RETURN(s.order, ParseOrder(f.order));
  }
  // The stack fills every knob the user did not give (parallel/stack.h).
  StrategyKnobs user;
  if (Given(f.sp_flag)) user.sp = f.sp;
  if (Given(f.tp_overlap_flag)) user.tp_overlap = f.tp_overlap;
  if (Given(f.zero_flag)) user.zero = f.zero;
  if (Given(f.recompute_flag)) user.recompute = s.recompute;
  if (Given(f.precision_flag)) user.precision = s.precision;
  if (Given(f.no_flash_flag)) user.flash_attention = false;
  if (Given(f.no_dp_overlap_flag)) user.overlap_dp = false;
  if (Given(f.no_fusion_flag)) user.grad_accum_fusion = false;
  NDT_ASSIGN_OR_RETURN(std::vector<SoftwareStack> stacks, LoadStacks(data_dir));
  NDT_ASSIGN_OR_RETURN(SoftwareStack stack, FindStack(stacks, f.stack, StackKind::kTraining));
  ApplyTrainStack(stack, user, &s);
  if (f.tokens < 0) return Status::InvalidInput("--tokens must be >= 0");
  job->tokens = f.tokens;
  job->want_trace = !f.trace.empty();
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

void PrintText(const TrainJob& job, const std::string& stack, const SkuSpec& sku,
               const TrainReport& r) {
  const TimeBreakdown& b = r.sim.breakdown;
  const MemoryBreakdown& m = r.memory;
  const double t = r.sim.step_time_s;
  std::printf("Job:           %s, seq %lld, on %d x %s (%d GPUs)\n", job.model.name.c_str(),
              static_cast<long long>(job.model.seq_len), job.num_gpus / job.gpus_per_vm,
              sku.name.c_str(), job.num_gpus);
  std::printf("Strategy:      %s\n", StrategyLine(stack, r.strategy).c_str());
  if (!r.chosen.empty()) {
    std::string c;
    for (const std::string& x : r.chosen) c += (c.empty() ? "" : ", ") + x;
    std::printf("Chosen:        %s (best feasible)\n", c.c_str());
  }
  std::printf("Step time:     %.4f s\n", t);
  std::printf("Throughput:    %.0f tokens/s\n", r.tokens_per_s);
  std::printf("Model FLOP/s:  %.1f TFLOP/s per GPU, MFU %.1f%% of %.0f TFLOP/s peak\n",
              r.model_tflops_per_gpu, 100 * r.mfu, r.peak_flops / 1e12);
  // MFU counts attention over the whole sequence (Megatron's and PaLM's convention); the GPU
  // executes causal attention, half the score blocks, so "executed" can be below the model rate.
  std::printf(
      "Hardware:      %.1f TFLOP/s per GPU executed (recompute in, masked half of causal "
      "attention out)\n",
      r.hardware_tflops_per_gpu);
  std::printf(
      "Memory/GPU:    %.1f GiB of %.1f GiB (stage %d): weights %.1f, grads %.1f, "
      "optimizer %.1f, activations %.1f, comm %.1f, workspace %.1f\n",
      GiB(m.total_bytes()), GiB(job.gpu_memory_bytes), m.peak_stage, GiB(m.weights_bytes),
      GiB(m.gradients_bytes), GiB(m.optimizer_bytes), GiB(m.activations_bytes),
      GiB(m.comm_buffers_bytes), GiB(m.workspace_bytes));
  auto pct = [&](double x) { return t > 0 ? 100 * x / t : 0.0; };
  std::printf(
      "Breakdown:     compute %.4f s (%.1f%%), TP %.4f s (%.1f%%), CP %.4f s (%.1f%%), "
      "EP %.4f s (%.1f%%), bubble %.4f s (%.1f%%), DP %.4f s (%.1f%%), optimizer "
      "%.4f s (%.1f%%)\n",
      b.compute_s, pct(b.compute_s), b.tp_comm_s, pct(b.tp_comm_s), b.cp_comm_s, pct(b.cp_comm_s),
      b.ep_comm_s, pct(b.ep_comm_s), b.pp_bubble_s, pct(b.pp_bubble_s), b.dp_comm_s,
      pct(b.dp_comm_s), b.optimizer_s, pct(b.optimizer_s));
  if (job.tokens > 0) {
    std::printf("Time to train: %.2f days for %.3g tokens", r.time_to_train_s / 86400, job.tokens);
    if (job.vm_usd_per_hour > 0) {
      std::printf(", $%.0f at $%.2f per VM-hour", r.cost_usd, job.vm_usd_per_hour);
    } else {
      std::printf(" (no price for this size)");
    }
    std::printf("\n");
  }
}

nlohmann::ordered_json ToJson(const TrainJob& job, const std::string& stack, const SkuSpec& sku,
                              const TrainReport& r) {
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
  j["tokens_per_s"] = r.tokens_per_s;
  j["model_tflops_per_gpu"] = r.model_tflops_per_gpu;
  j["hardware_tflops_per_gpu"] = r.hardware_tflops_per_gpu;
  j["mfu"] = r.mfu;
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

}  // namespace

CommandRun SetupTrain(CLI::App* sub) {
  auto f = std::make_shared<TrainFlags>();
  sub->add_option("--sku", f->sku, "VM size (see: ndtwin sku list)")->required();
  sub->add_option("--vms", f->vms, "Number of VMs (default 1)");
  AddModelFlags(sub, &f->mf);
  sub->add_option("--gbs", f->gbs, "Global batch (sequences per iteration)")->required();
  f->mbs_flag = sub->add_option("--mbs", f->mbs, "Micro-batch size (default: best feasible)");
  sub->add_option("--tp", f->tp, "Tensor parallel degree (default 1)");
  sub->add_option("--pp", f->pp, "Pipeline parallel degree (default 1)");
  f->dp_flag = sub->add_option("--dp", f->dp, "Data parallel degree (default: GPUs / (tp*pp*cp))");
  f->vpp_flag =
      sub->add_option("--vpp", f->vpp, "Model chunks per stage, interleaved 1F1B (default: best)");
  sub->add_option("--cp", f->cp, "Context parallel degree (default 1)");
  sub->add_option("--ep", f->ep, "Expert parallel degree, MoE (default 1)");
  f->sp_flag = sub->add_flag("--sp", f->sp, "Sequence parallelism (with --tp > 1)");
  f->tp_overlap_flag = sub->add_flag(
      "--tp-overlap", f->tp_overlap,
      "Overlap TP communication with the GEMMs (Megatron --tp-comm-overlap; needs --sp)");
  sub->add_flag("--uneven-stages", f->uneven_stages,
                "Allow layers not divisible by pp*vpp: the first and last stages get fewer");
  f->recompute_flag = sub->add_option("--recompute", f->recompute,
                                      "none | selective | full (default: the stack's)");
  f->zero_flag = sub->add_option("--zero", f->zero, "ZeRO stage 0-3 (default: the stack's)");
  f->precision_flag =
      sub->add_option("--precision", f->precision, "bf16 | fp16 | fp8 (default: the stack's)");
  sub->add_option("--stack", f->stack,
                  "Software stack, a dated preset of knobs and traits from data/stacks/ (default " +
                      std::string(kDefaultTrainStack) + "); flags beat it");
  f->schedule_flag =
      sub->add_option("--schedule", f->schedule, "gpipe | 1f1b (default; interleaved with --vpp)");
  sub->add_option("--fidelity", f->fidelity, "analytical | flow (default analytical)");
  sub->add_option("--order", f->order, "Rank order, fastest first (default tp,cp,ep,dp,pp)");
  f->no_flash_flag = sub->add_flag("--no-flash-attn", f->no_flash_attn,
                                   "Unfused attention (Megatron-LM before FlashAttention)");
  f->no_dp_overlap_flag =
      sub->add_flag("--no-dp-overlap", f->no_dp_overlap, "Reduce gradients after the backward");
  f->no_fusion_flag =
      sub->add_flag("--no-grad-accum-fusion", f->no_grad_accum_fusion,
                    "Accumulate weight gradients in a separate kernel per micro-batch (before "
                    "Megatron-LM's gradient_accumulation_fusion)");
  sub->add_option("--tokens", f->tokens, "Training tokens: print time to train and cost");
  f->trace_flag =
      sub->add_option("--trace", f->trace, "Write a Chrome/Perfetto trace of the step to FILE");
  AddFabricFlags(sub, &f->fabric);
  return [f](const GlobalOptions& g) -> Status {
    const std::string dir = g.data_dir.empty() ? Catalog::DefaultDataDir() : g.data_dir;
    NDT_ASSIGN_OR_RETURN(Catalog cat, Catalog::Load(dir));
    NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, cat.FindSku(f->sku));
    if (f->vms < 1) return Status::InvalidInput("--vms must be >= 1");
    NDT_ASSIGN_OR_RETURN(TransformerSpec model, ResolveModel(f->mf, dir));
    Fidelity fidelity;
    if (!ParseFidelity(f->fidelity, &fidelity)) {
      return Status::InvalidInput("--fidelity '" + f->fidelity + "'; use analytical or flow");
    }
    TrainJob job;
    job.model = model;
    NDT_RETURN_IF_ERROR(BuildStrategy(*f, dir, &job));
    const GpuSpec& gpu = cat.GpuOf(*sku);
    if (f->vms > 1 && !sku->infiniband && sku->nvlink_domain_gpus <= sku->gpus) {
      return Status::InvalidInput(sku->name +
                                  " has no InfiniBand: training across VMs needs a scale-out "
                                  "network; use --vms 1 or a size with InfiniBand");
    }
    if (const std::string note = PrecisionNote(gpu, job.strategy.precision); !note.empty()) {
      Warn(note);
    }
    ClusterSpec cs;
    cs.sku = sku;
    cs.gpu = &gpu;
    cs.vms = f->vms;
    ApplyFabricFlags(f->fabric, &cs);
    NDT_ASSIGN_OR_RETURN(Cluster cluster, BuildCluster(cs));
    NDT_ASSIGN_OR_RETURN(ComputeCalibration cal, LoadComputeCalibration(dir));
    job.num_gpus = cluster.num_gpus();
    job.gpus_per_vm = cluster.gpus_per_vm();
    job.nvlink_domain_gpus = cluster.nvlink_domain_gpus();
    job.gpu_memory_bytes = gpu.memory_bytes;  // what CUDA can allocate (data/gpus)
    job.vm_usd_per_hour = sku->price ? sku->price->usd_per_hour : 0;
    ClusterCosts costs(cluster, cal, job.strategy.precision, fidelity);
    NDT_ASSIGN_OR_RETURN(TrainReport r, RunTraining(job, costs));
    for (const std::string& w : r.warnings) Warn(w);
    if (!f->trace.empty()) NDT_RETURN_IF_ERROR(WriteTrace(BuildTrace(r), f->trace));
    if (g.json) {
      std::printf("%s\n", ToJson(job, f->stack, *sku, r).dump(2).c_str());
    } else {
      PrintText(job, f->stack, *sku, r);
    }
    return Status::Ok();
  };
}

}  // namespace ndt
