// File: parallel/train.cc
// Strategy completion, memory check and throughput metrics around SimulateTrainingStep.
#include "parallel/train.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ndt {
namespace {

struct Candidate {
  Strategy s;
  MemoryBreakdown mem;
  ReserveBreakdown reserve;
};

}  // namespace

StatusOr<TrainReport> RunTraining(const TrainJob& job, const TrainCosts& costs) {
  const TransformerSpec& m = job.model;
  if (!job.memory_reserve.loaded()) {
    return Status::InvalidInput(
        "training job has no memory reserve; set TrainJob::memory_reserve from "
        "data/memory_reserve.yaml (LoadMemoryReserve, MemoryReserveTable::For the GPU's arch)");
  }
  // Candidate values for what was left out.
  std::vector<int64_t> mbs_list = {job.strategy.mbs};
  if (!job.mbs_given) mbs_list = {1, 2, 4, 8, 16};
  std::vector<int> vpp_list = {job.strategy.vpp};
  if (!job.vpp_given) {
    vpp_list.clear();
    const int64_t pp = std::max(1, job.strategy.pp);
    // Chunk counts that split the layers evenly; with uneven stages, every count that leaves
    // each inner virtual stage a layer (the first and last may hold only the embedding and the
    // LM head: ChunkLayers, ResolveStrategy).
    const int64_t max_v = job.strategy.uneven_stages ? (m.layers + 2) / pp : m.layers / pp;
    for (int v = 1; v <= max_v && v <= 16 && job.strategy.pp > 1; ++v) {
      if (job.strategy.uneven_stages ||
          m.layers % (static_cast<int64_t>(job.strategy.pp) * v) == 0) {
        vpp_list.push_back(v);
      }
    }
    if (vpp_list.empty()) vpp_list = {1};
  }
  Status first_error;
  Status first_memory_error;
  std::optional<Candidate> best;
  std::optional<TrainSimResult> best_sim;
  std::vector<std::string> warnings;
  for (int v : vpp_list) {
    for (int64_t b : mbs_list) {
      Strategy s = job.strategy;
      s.mbs = b;
      s.vpp = v;
      std::vector<std::string> w;
      Status st = ResolveStrategy(m, job.num_gpus, job.nvlink_domain_gpus, &s, &w);
      if (!st.ok()) {
        if (first_error.ok()) first_error = st;
        continue;
      }
      MemoryBreakdown mem = EstimateMemory(m, s);
      const ReserveBreakdown reserve = ReserveOf(job.memory_reserve, job.gpu_memory_bytes, m, s);
      st = CheckFits(mem, reserve, job.gpu_memory_bytes, s, job.zero_stages);
      if (!st.ok()) {
        if (first_memory_error.ok()) first_memory_error = st;
        continue;
      }
      TrainSimOptions o;
      o.closed_form = job.closed_form_search;
      o.nvlink_domain_gpus = job.nvlink_domain_gpus;
      NDT_ASSIGN_OR_RETURN(TrainSimResult r, SimulateTrainingStep(m, s, costs, o));
      if (!best_sim || r.step_time_s < best_sim->step_time_s) {
        best = Candidate{s, mem, reserve};
        best_sim = std::move(r);
        warnings = w;
      }
    }
  }
  if (!best) {
    if (!first_memory_error.ok()) return first_memory_error;
    return first_error;
  }
  TrainReport rep;
  rep.strategy = best->s;
  rep.memory = best->mem;
  rep.reserve = best->reserve;
  rep.usable_bytes = best->reserve.usable_bytes(job.gpu_memory_bytes);
  rep.warnings = warnings;
  if (!job.mbs_given) rep.chosen.push_back("mbs " + std::to_string(best->s.mbs));
  if (!job.vpp_given) rep.chosen.push_back("vpp " + std::to_string(best->s.vpp));
  if (job.want_trace) {
    TrainSimOptions o;
    o.want_trace = job.want_trace;
    o.nvlink_domain_gpus = job.nvlink_domain_gpus;
    NDT_ASSIGN_OR_RETURN(rep.sim, SimulateTrainingStep(m, best->s, costs, o));
  } else {
    rep.sim = std::move(*best_sim);
  }
  // The step is finished: it waits for the job's slowest GPU (parallel/variability.h).
  ApplyStraggler(job.gpu_variability, job.num_gpus, &rep.sim);
  const double t = rep.sim.step_time_s;
  const double tokens = static_cast<double>(best->s.gbs) * static_cast<double>(m.seq_len);
  rep.tokens_per_s = tokens / t;
  rep.peak_flops = costs.PeakFlops();
  rep.model_tflops_per_gpu = rep.sim.model_flop / t / job.num_gpus / 1e12;
  rep.hardware_tflops_per_gpu = rep.sim.hardware_flop / t / job.num_gpus / 1e12;
  rep.mfu = rep.peak_flops > 0 ? rep.model_tflops_per_gpu * 1e12 / rep.peak_flops : 0;
  if (job.tokens > 0) {
    rep.time_to_train_s = job.tokens / rep.tokens_per_s;
    const double vms = static_cast<double>(job.num_gpus) / std::max(1, job.gpus_per_vm);
    rep.cost_usd = rep.time_to_train_s / 3600.0 * vms * job.vm_usd_per_hour;
  }
  return rep;
}

}  // namespace ndt
