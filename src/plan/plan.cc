// File: plan/plan.cc
// Parallel scoring and ranking for PlanTraining (plan.h); the strategy space is space.cc.
#include "plan/plan.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "parallel/cluster_costs.h"
#include "parallel/stack.h"
#include "parallel/train.h"
#include "topo/builders.h"

namespace ndt {
namespace {

// One size at one VM count, built once and shared read-only by the scoring threads.
struct SizeContext {
  const SkuSpec* sku = nullptr;
  int vms = 0;
  int gpus = 0;
  double gpu_memory_bytes = 0;
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<ClusterCosts> fast;  // analytical
  std::unique_ptr<ClusterCosts> full;  // request fidelity, built for sizes in the top K only
  int tiers = 0, radix = 0;            // the fat tree assumed (0: no scale-out fabric)
  GpuVariability variability;          // the GPU's spread (none: the step at the median's speed)
  MemoryReserve memory_reserve;        // the GPU's reserve (data/memory_reserve.yaml)
};

struct Candidate {
  int context = 0;
  Strategy strategy;
};

struct Evaluation {
  Status status;  // infeasible(): pruned
  PlanResult result;
};

// Lower is better.
double Score(const PlanResult& r, PlanObjective o) {
  switch (o) {
    case PlanObjective::kThroughput:
      return -r.tokens_per_s;
    case PlanObjective::kTime:
      return r.time_to_train_s;
    case PlanObjective::kCost:
      return r.cost_usd;
  }
  return 0;
}

// Best first; ties broken by enumeration index, so the order never depends on threads.
void Rank(PlanObjective o, std::vector<PlanResult>* rs) {
  std::sort(rs->begin(), rs->end(), [o](const PlanResult& a, const PlanResult& b) {
    const double sa = Score(a, o), sb = Score(b, o);
    if (sa != sb) return sa < sb;
    return a.index < b.index;
  });
}

// The first pass scores with the closed form alone; the best max(kSimulatedFactor x K,
// kSimulatedMin) are then simulated, which may reorder them.
constexpr size_t kSimulatedFactor = 4;
constexpr size_t kSimulatedMin = 16;

// One TrainJob per scoring thread holding its copy of the model, made once per plan: copying
// the TransformerSpec (strings) into a fresh job per candidate cost allocations on the hot path.
class JobPerThread {
 public:
  JobPerThread(const TransformerSpec& model, int threads) : jobs_(std::max(1, threads)) {
    for (TrainJob& j : jobs_) j.model = model;
  }
  // The calling thread's job, every field but the model back to its default.
  TrainJob& Fresh() {
#ifdef _OPENMP
    TrainJob& job = jobs_[omp_get_thread_num()];
#else
    TrainJob& job = jobs_[0];
#endif
    TrainJob fresh;
    fresh.model = std::move(job.model);
    job = std::move(fresh);
    return job;
  }

 private:
  std::vector<TrainJob> jobs_;
};

// first_pass: micro-batch, VPP and the score from the closed form (parallel/step_estimate.h), no
// simulation; else RunTraining's full search, one simulation per candidate. `job` holds the
// model; the rest is filled in here.
Evaluation Evaluate(TrainJob& job, const SizeContext& c, const Strategy& s, double tokens,
                    const ClusterCosts& costs, Fidelity fidelity, bool first_pass) {
  job.closed_form_search = first_pass;
  job.strategy = s;
  job.mbs_given = false;
  job.vpp_given = s.pp == 1;
  job.num_gpus = c.gpus;
  job.gpus_per_vm = c.sku->gpus;
  job.nvlink_domain_gpus = c.cluster->nvlink_domain_gpus();
  job.gpu_memory_bytes = c.gpu_memory_bytes;
  job.memory_reserve = c.memory_reserve;
  job.vm_usd_per_hour = c.sku->price ? c.sku->price->usd_per_hour : 0;
  job.tokens = tokens;
  job.gpu_variability = c.variability;  // RunTraining adds the slowest GPU's wait, as for train
  Evaluation e;
  StatusOr<TrainReport> r = RunTraining(job, costs);
  if (!r.ok()) {
    e.status = r.status();
    return e;
  }
  PlanResult& p = e.result;
  p.sku = c.sku->name;
  p.vms = c.vms;
  p.gpus = c.gpus;
  p.strategy = r->strategy;
  p.step_time_s = r->sim.step_time_s;
  p.straggler_s = r->sim.breakdown.straggler_s;
  p.tokens_per_s = r->tokens_per_s;
  p.mfu = r->mfu;
  p.memory_bytes = r->memory.total_bytes();
  p.time_to_train_s = r->time_to_train_s;
  p.priced = c.sku->price.has_value();
  p.cost_usd = p.priced ? r->cost_usd : 0;
  p.fidelity = fidelity;
  p.fabric_tiers = c.tiers;
  p.fabric_radix = c.radix;
  return e;
}

// Builds the contexts of the sizes that can run, with a note for each one skipped.
std::vector<SizeContext> BuildContexts(const Catalog& cat, const FabricParams& fabric,
                                       const NcclCalibrationSet& nccl,
                                       const ComputeCalibration& cal, const PlanTrainRequest& req,
                                       std::vector<std::string>* notes,
                                       std::vector<std::string>* fabric_notes,
                                       std::vector<std::string>* unpriced_sizes) {
  std::vector<SizeContext> out;
  std::string unpriced;
  for (const SkuSpec* sku : req.skus) {
    if (sku->gpus < 1) continue;
    if (req.gpus > 0 && req.gpus % sku->gpus != 0) {
      notes->push_back(sku->name + ": " + std::to_string(req.gpus) +
                       " GPUs is not a multiple of its " + std::to_string(sku->gpus) +
                       " GPUs per VM; skipped");
      continue;
    }
    const int vms = req.gpus > 0 ? req.gpus / sku->gpus : req.vms;
    if (vms > 1 && !sku->infiniband) {
      notes->push_back(sku->name + ": no InfiniBand to join " + std::to_string(vms) +
                       " VMs; skipped");
      continue;
    }
    if (req.objective == PlanObjective::kCost && !sku->price) {
      unpriced += (unpriced.empty() ? "" : ", ") + sku->name;
      unpriced_sizes->push_back(sku->name);
      continue;
    }
    const GpuSpec& gpu = cat.GpuOf(*sku);
    ClusterSpec cs;
    cs.sku = sku;
    cs.gpu = &gpu;
    cs.vms = vms;
    cs.fabric = req.fabric;
    const std::string assumed = ResolveFabric(&cs);
    StatusOr<Cluster> cluster = BuildCluster(cs, fabric);
    if (cluster.ok() && !assumed.empty()) fabric_notes->push_back(sku->name + ": " + assumed);
    if (!cluster.ok()) {
      notes->push_back(sku->name + ": " + cluster.status().message() + "; skipped");
      continue;
    }
    if (const Status p = CheckTrainPrecision(gpu, req.precision); !p.ok()) {
      notes->push_back(sku->name + ": " + p.message() + "; skipped");
      continue;
    }
    if (const std::string n = PrecisionNote(gpu, req.precision); !n.empty()) {
      notes->push_back(sku->name + ": " + n);
    }
    StatusOr<MemoryReserve> reserve =
        req.memory_reserve != nullptr ? req.memory_reserve->For(gpu.arch)
                                      : StatusOr<MemoryReserve>(Status::InvalidInput(
                                            "no memory reserve table (data/memory_reserve.yaml)"));
    if (!reserve.ok()) {
      notes->push_back(sku->name + ": " + reserve.status().message() + "; skipped");
      continue;
    }
    SizeContext c;
    c.memory_reserve = *reserve;
    c.sku = sku;
    c.vms = cs.vms;
    c.gpus = cluster->num_gpus();
    c.gpu_memory_bytes = gpu.memory_bytes;  // what CUDA can allocate (data/gpus)
    if (req.variability != nullptr) c.variability = req.variability->For(gpu.arch);
    if (vms > 1 && sku->infiniband) {
      c.tiers = cs.fabric.tiers;
      c.radix = cs.fabric.switch_radix;
    }
    c.cluster = std::make_unique<Cluster>(std::move(*cluster));
    c.fast =
        std::make_unique<ClusterCosts>(*c.cluster, cal, nccl, req.precision, Fidelity::kAnalytical);
    out.push_back(std::move(c));
  }
  if (!unpriced.empty()) notes->push_back("no price, skipped (objective cost): " + unpriced);
  return out;
}

// The best score a size could reach: every GPU at its dense peak (MFU 1; the simulated step
// never exceeds it, as model FLOPs over time cannot beat the hardware's peak).
double BestScoreBound(const SizeContext& c, double flop_per_token, const PlanTrainRequest& req) {
  PlanResult r;
  r.tokens_per_s = c.gpus * c.fast->PeakFlops() / flop_per_token;
  r.time_to_train_s = req.tokens / r.tokens_per_s;
  r.cost_usd = c.sku->price ? r.time_to_train_s / 3600.0 * c.vms * c.sku->price->usd_per_hour : 0;
  return Score(r, req.objective);
}

// Re-scores `best` with RunTraining's full search (every micro-batch and VPP simulated) at
// `fidelity` (analytical: the clusters' fast costs) and ranks them again.
Status Rescore(const PlanTrainRequest& req, const ComputeCalibration& cal,
               const NcclCalibrationSet& nccl, const std::vector<Candidate>& cands, int threads,
               const PlanProgress& progress, Fidelity fidelity, JobPerThread* jobs,
               std::vector<SizeContext>* ctx, std::vector<PlanResult>* best) {
  const bool fast = fidelity == Fidelity::kAnalytical;
  for (const PlanResult& r : *best) {
    SizeContext& sc = (*ctx)[cands[r.index].context];
    if (!fast && !sc.full) {
      sc.full = std::make_unique<ClusterCosts>(*sc.cluster, cal, nccl, req.precision, fidelity);
    }
  }
  if (progress) {
    progress("plan: simulating the best " + std::to_string(best->size()) + " at " +
             (fast ? "analytical" : "flow") + " fidelity");
  }
  const int64_t k = static_cast<int64_t>(best->size());
  std::vector<Evaluation> re(best->size());
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
  for (int64_t i = 0; i < k; ++i) {
    const Candidate& c = cands[(*best)[i].index];
    const SizeContext& sc = (*ctx)[c.context];
    re[i] = Evaluate(jobs->Fresh(), sc, c.strategy, req.tokens, fast ? *sc.fast : *sc.full,
                     fidelity, false);
    re[i].result.index = (*best)[i].index;
  }
  for (int64_t i = 0; i < k; ++i) {
    if (!re[i].status.ok()) return re[i].status;
    (*best)[i] = std::move(re[i].result);
  }
  Rank(req.objective, best);
  return Status::Ok();
}

}  // namespace

StatusOr<PlanTrainReport> PlanTraining(const Catalog& catalog, const FabricParams& fabric,
                                       const NcclCalibrationSet& nccl,
                                       const ComputeCalibration& cal, const PlanTrainRequest& req,
                                       const PlanProgress& progress) {
  const char* obj = PlanObjectiveName(req.objective);
  if (req.gbs < 1) return Status::InvalidInput("--gbs (global batch, sequences) must be >= 1");
  if (req.top_k < 1) return Status::InvalidInput("--top must be >= 1");
  if (req.gpus < 0 || req.vms < 0 || (req.gpus == 0 && req.vms == 0)) {
    return Status::InvalidInput("give --gpus N (total GPUs) or --vms N (VMs of each size), N >= 1");
  }
  if (req.objective != PlanObjective::kThroughput && req.tokens <= 0) {
    return Status::InvalidInput(std::string("--objective ") + obj +
                                " needs --tokens (the training tokens, e.g. 300e9)");
  }
  if (req.ep) {
    const int ep = *req.ep;
    if (ep < 1) return Status::InvalidInput("--ep must be >= 1 (got " + std::to_string(ep) + ")");
    if (ep > 1 && !req.model.is_moe()) {
      return Status::InvalidInput("--ep " + std::to_string(ep) +
                                  " needs a mixture-of-experts model; '" + req.model.name +
                                  "' is dense");
    }
    if (ep > 1 && req.model.moe.experts % ep != 0) {
      return Status::InvalidInput("--ep " + std::to_string(ep) + " must divide the " +
                                  std::to_string(req.model.moe.experts) + " routed experts of '" +
                                  req.model.name + "'");
    }
  }
  PlanTrainReport rep;
  rep.objective = req.objective;
  std::vector<SizeContext> ctx = BuildContexts(catalog, fabric, nccl, cal, req, &rep.notes,
                                               &rep.fabric_assumed, &rep.unpriced);
  if (ctx.empty()) {
    std::string why;
    for (size_t i = 0; i < rep.notes.size() && i < 2; ++i) why += (i ? "; " : "") + rep.notes[i];
    if (rep.notes.size() > 2) why += "; ...";
    return Status::InvalidInput(
        "no VM size can run this request (" + why + "); try another --gpus or --sku" +
        (rep.unpriced.empty() ? "" : ", or give a size its price with --price-per-hour"));
  }
  // The planner's space: every knob searched, and the ZeRO stages the stack's software runs
  // (StackZeroStages: megatron-core-2024 0 and 1, its distributed optimizer; torchtitan-fsdp2-2024
  // 0, 2 and 3; deepspeed-zero3-2021 all four). A ZeRO-3 stack's plan that never tried ZeRO 3
  // lost to the stack's own mode (llama2-13b, gbs 128 on 32 H100 with torchtitan-fsdp2-2024:
  // plan's best 163.5k tokens/s at ZeRO 1, train --zero 3 --recompute none 170.1k); a stage the
  // software cannot run is no plan at all (ZeroStagesNote says which were left out).
  Strategy base;
  base.gbs = req.gbs;
  base.precision = req.precision;
  TrainSearchSpace space;
  space.tp_overlap = false;
  space.zero_stages = StackZeroStages(req.stack);
  space.ep = req.ep;
  // Candidates grouped by size: size i owns cands[first[i], first[i + 1]).
  std::vector<Candidate> cands;
  std::vector<size_t> first;
  for (size_t i = 0; i < ctx.size(); ++i) {
    first.push_back(cands.size());
    for (Strategy s : EnumerateTrainStrategies(req.model, ctx[i].gpus,
                                               ctx[i].cluster->nvlink_domain_gpus(), base, space)) {
      if (req.stack != nullptr) {
        // The searched knobs stay as enumerated; the stack sets the rest, TP overlap included
        // (the simulator's overlap never adds time, so where the stack has it, it is on).
        StrategyKnobs searched;
        searched.precision = s.precision;
        searched.recompute = s.recompute;
        searched.zero = s.zero;
        searched.sp = s.sp;
        ApplyTrainStack(*req.stack, searched, &s);
      }
      cands.push_back({static_cast<int>(i), s});
    }
  }
  first.push_back(cands.size());
  // Sizes in order of their best possible score (ties: catalog order), so a size whose bound
  // cannot reach the current top K is skipped whole; the decision is made between sizes, so it
  // does not depend on the thread count.
  const double flop_per_token = TrainingFlopsPerToken(req.model, req.model.seq_len, false);
  std::vector<double> bound(ctx.size());
  std::vector<size_t> order(ctx.size());
  for (size_t i = 0; i < ctx.size(); ++i) {
    bound[i] = BestScoreBound(ctx[i], flop_per_token, req);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bound[a] < bound[b]; });
  const int threads = PlanThreads(req.threads);
  JobPerThread jobs(req.model, threads);
  if (progress) {
    progress("plan: " + std::to_string(cands.size()) + " configurations on " +
             std::to_string(ctx.size()) + (ctx.size() == 1 ? " size" : " sizes") + " (analytical)");
  }
  std::vector<PlanResult> ok;
  std::vector<Evaluation> failed;
  int64_t errors = 0;
  std::string first_error;
  for (size_t i : order) {
    const int64_t lo = static_cast<int64_t>(first[i]), hi = static_cast<int64_t>(first[i + 1]);
    if (req.prune_by_bound && !req.keep_scored && ok.size() >= static_cast<size_t>(req.top_k) &&
        bound[i] > Score(ok[req.top_k - 1], req.objective)) {
      rep.bounded += hi - lo;
      continue;
    }
    std::vector<Evaluation> evals(hi - lo);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (int64_t k = lo; k < hi; ++k) {
      const SizeContext& sc = ctx[i];
      Evaluation& e = evals[k - lo];
      e = Evaluate(jobs.Fresh(), sc, cands[k].strategy, req.tokens, *sc.fast, Fidelity::kAnalytical,
                   true);
      e.result.index = static_cast<size_t>(k);
    }
    for (Evaluation& e : evals) {
      if (e.status.ok()) {
        ok.push_back(std::move(e.result));
      } else if (!e.status.infeasible()) {
        // Not a pruning but a simulator failure (our bug): skip it, say so, keep planning.
        if (errors++ == 0) first_error = ctx[i].sku->name + ": " + e.status.message();
      } else {
        failed.push_back(std::move(e));
      }
    }
    rep.evaluated += hi - lo;
    Rank(req.objective, &ok);
    if (progress) {
      progress("plan: " + ctx[i].sku->name + " x " + std::to_string(ctx[i].vms) + ": " +
               std::to_string(hi - lo) + " configurations");
    }
  }
  rep.infeasible = static_cast<int64_t>(failed.size());
  if (errors > 0) {
    rep.notes.push_back(std::to_string(errors) +
                        " configurations failed in the simulator and were skipped (an ndtwin "
                        "bug; first: " +
                        first_error + ")");
  }
  if (ok.empty()) {
    if (failed.empty()) {
      return Status::InvalidInput(
          req.ep && *req.ep > 1
              ? "no configuration to evaluate: --ep " + std::to_string(*req.ep) +
                    " divides no candidate's dp (expert groups split the data-parallel ranks); "
                    "try another --ep or --gpus"
              : std::string("no configuration to evaluate; try --gpus"));
    }
    std::vector<Status> statuses;
    for (const Evaluation& e : failed) statuses.push_back(e.status);
    return NoneFeasible(statuses);
  }
  // Second pass: the closed form ranked everything; the best kSimulated are simulated (full
  // micro-batch x VPP search) and ranked again, then the top K re-scored at the fidelity asked.
  const size_t simulated = std::max<size_t>(kSimulatedFactor * req.top_k, kSimulatedMin);
  if (req.keep_scored) rep.scored = ok;
  if (ok.size() > simulated) ok.resize(simulated);
  NDT_RETURN_IF_ERROR(
      Rescore(req, cal, nccl, cands, threads, progress, Fidelity::kAnalytical, &jobs, &ctx, &ok));
  if (ok.size() > static_cast<size_t>(req.top_k)) ok.resize(req.top_k);
  if (req.fidelity != Fidelity::kAnalytical) {
    NDT_RETURN_IF_ERROR(
        Rescore(req, cal, nccl, cands, threads, progress, req.fidelity, &jobs, &ctx, &ok));
  }
  rep.results = std::move(ok);
  return rep;
}

int PlanThreads(int requested) {
#ifdef _OPENMP
  return requested > 0 ? requested : omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

}  // namespace ndt
