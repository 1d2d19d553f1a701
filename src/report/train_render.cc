#include "report/train_render.h"

#include <cstdio>
#include <string>

#include "compute/compute.h"
#include "report/interval_render.h"
#include "report/text.h"

namespace ndt {
namespace {

double GiB(double b) { return b / (1024.0 * 1024 * 1024); }

// The precision the job's GEMMs run in: the strategy's, or the wider one a GPU without its tensor
// path runs (a V100 has no bf16: fp16, with the warning compute/ PrecisionNote gives).
std::string PrecisionUsed(const Strategy& s, const GpuSpec* gpu) {
  if (gpu == nullptr) return DtypeName(s.precision);
  const Precision p = EffectivePrecision(*gpu, s.precision);
  return p == ToPrecision(s.precision) ? DtypeName(s.precision) : PrecisionName(p);
}

std::string StrategyLine(const std::string& stack, const Strategy& s,
                         const std::string& precision) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "%s: tp %d, pp %d, dp %d, cp %d, ep %d, vpp %d, sp %s, zero %d, recompute %s, "
                "mbs %lld, gbs %lld (%lld micro-batch%s), %s, %s",
                stack.c_str(), s.tp, s.pp, s.dp, s.cp, s.ep, s.vpp, s.sp ? "on" : "off", s.zero,
                RecomputeName(s.recompute), static_cast<long long>(s.mbs),
                static_cast<long long>(s.gbs), static_cast<long long>(s.micro_batches()),
                s.micro_batches() == 1 ? "" : "es", PipeScheduleName(s.schedule),
                precision.c_str());
  return std::string(buf) + (s.tp_overlap ? ", tp overlap" : "") +
         (s.uneven_stages ? ", uneven stages" : "");
}

std::string TrainTextOf(const TrainJob& job, const std::string& stack, const SkuSpec& sku,
                        const TrainReport& r, const IntervalClass& iv, const GpuSpec* gpu) {
  TextOut p;
  const TimeBreakdown& b = r.sim.breakdown;
  const MemoryBreakdown& m = r.memory;
  const double t = r.sim.step_time_s;
  p("Job:           %s, seq %lld, on %d x %s (%d GPUs)\n", job.model.name.c_str(),
    static_cast<long long>(job.model.seq_len), job.num_gpus / job.gpus_per_vm, sku.name.c_str(),
    job.num_gpus);
  p("Strategy:      %s\n", StrategyLine(stack, r.strategy, PrecisionUsed(r.strategy, gpu)).c_str());
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
  p("Memory/GPU:    %.1f GiB of %.1f GiB usable (stage %d): weights %.1f, grads %.1f, "
    "optimizer %.1f, activations %.1f, comm %.1f\n",
    GiB(m.total_bytes()), GiB(r.usable_bytes), m.peak_stage, GiB(m.weights_bytes),
    GiB(m.gradients_bytes), GiB(m.optimizer_bytes), GiB(m.activations_bytes),
    GiB(m.comm_buffers_bytes));
  const ReserveBreakdown& rs = r.reserve;
  p("Reserve/GPU:   %.1f GiB of %.1f GiB: CUDA context %.2f, cuBLAS %.2f, NCCL %.2f (%d "
    "communicators), userbuffers %.2f, allocator fragmentation %.2f\n",
    GiB(rs.total_bytes()), GiB(job.gpu_memory_bytes), GiB(rs.cuda_context_bytes),
    GiB(rs.cublas_workspace_bytes), GiB(rs.nccl_buffers_bytes), rs.nccl_communicators,
    GiB(rs.userbuffers_bytes), GiB(rs.allocator_fragmentation_bytes));
  auto pct = [&](double x) { return t > 0 ? 100 * x / t : 0.0; };
  p("Breakdown:     compute %.4f s (%.1f%%), TP %.4f s (%.1f%%), CP %.4f s (%.1f%%), "
    "EP %.4f s (%.1f%%), bubble %.4f s (%.1f%%), DP %.4f s (%.1f%%), optimizer "
    "%.4f s (%.1f%%), straggler %.4f s (%.1f%%)\n",
    b.compute_s, pct(b.compute_s), b.tp_comm_s, pct(b.tp_comm_s), b.cp_comm_s, pct(b.cp_comm_s),
    b.ep_comm_s, pct(b.ep_comm_s), b.pp_bubble_s, pct(b.pp_bubble_s), b.dp_comm_s, pct(b.dp_comm_s),
    b.optimizer_s, pct(b.optimizer_s), b.straggler_s, pct(b.straggler_s));
  if (b.straggler_s > 0) {
    const GpuVariability& v = job.gpu_variability;
    p("Stragglers:    the slowest of %d GPUs is %.1f%% slower than the median (GPUs spread %.0f%%, "
      "%s; --gpu-variability=false to ignore)\n",
      job.num_gpus, 100 * StragglerFraction(v, job.num_gpus), 100 * v.variability, v.basis.c_str());
  }
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
                              const TrainReport& r, const IntervalClass& iv, const GpuSpec* gpu) {
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
  j["memory"] =
      Json{{"peak_bytes_per_gpu", m.total_bytes()},
           {"capacity_bytes", job.gpu_memory_bytes},
           {"usable_bytes", r.usable_bytes},
           {"peak_stage", m.peak_stage},
           {"weights_bytes", m.weights_bytes},
           {"gradients_bytes", m.gradients_bytes},
           {"optimizer_bytes", m.optimizer_bytes},
           {"activations_bytes", m.activations_bytes},
           {"comm_buffers_bytes", m.comm_buffers_bytes},
           {"inflight_microbatches", m.inflight_microbatches},
           {"reserve",
            Json{{"total_bytes", r.reserve.total_bytes()},
                 {"cuda_context_bytes", r.reserve.cuda_context_bytes},
                 {"cublas_workspace_bytes", r.reserve.cublas_workspace_bytes},
                 {"nccl_buffers_bytes", r.reserve.nccl_buffers_bytes},
                 {"nccl_communicators", r.reserve.nccl_communicators},
                 {"userbuffers_bytes", r.reserve.userbuffers_bytes},
                 {"allocator_fragmentation_bytes", r.reserve.allocator_fragmentation_bytes}}}};
  j["breakdown"] = Json{{"compute_s", b.compute_s},     {"tp_comm_s", b.tp_comm_s},
                        {"cp_comm_s", b.cp_comm_s},     {"ep_comm_s", b.ep_comm_s},
                        {"pp_bubble_s", b.pp_bubble_s}, {"dp_comm_s", b.dp_comm_s},
                        {"optimizer_s", b.optimizer_s}, {"straggler_s", b.straggler_s}};
  j["gpu_variability"] =
      Json{{"variability", job.gpu_variability.variability},
           {"basis", job.gpu_variability.basis},
           {"slowest_gpu_slowdown", StragglerFraction(job.gpu_variability, job.num_gpus)}};
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
                       {"precision", PrecisionUsed(s, gpu)},
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

}  // namespace

Json TrainJson(const TrainView& v) {
  Json j = ToJson(v.job, v.stack, v.sku, v.report, v.interval, v.gpu);
  if (v.fabric_nics > 0) {
    const Placement& place = v.placement;
    j["placement"] = {{"scale_sets", place.scale_sets},
                      {"racks", place.racks},
                      {"azure_arranged", place.azure_arranged}};
  }
  return j;
}

std::string TrainText(const TrainView& v) {
  std::string text = TrainTextOf(v.job, v.stack, v.sku, v.report, v.interval, v.gpu);
  const PlacementData& limits = v.limits;
  const Placement& place = v.placement;
  const int vms = v.job.num_gpus / v.job.gpus_per_vm;
  if (place.racks > 0 || (v.sku.infiniband && vms > limits.scale_set_default_vms)) {
    text += "Placement:     " + DescribePlacement(place, limits) + "\n";
  }
  return text;
}

Trace TrainTrace(const TrainReport& r) {
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

}  // namespace ndt
