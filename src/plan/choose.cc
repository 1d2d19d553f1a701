// File: plan/choose.cc
// ChooseTrainStrategy (choose.h): enumerate, score with the closed form, simulate the best few.
#include "plan/choose.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "parallel/memory.h"

namespace ndt {
namespace {

// Simulated after the closed form ranked every candidate (as the planner's second pass).
constexpr size_t kSimulated = 8;

struct Scored {
  size_t index = 0;
  double step_time_s = std::numeric_limits<double>::infinity();
  Status status;
};

// Threads only when not already inside a parallel region: a sweep runs its points on its own
// threads (sweep/sweep.h), and a team of one there does not count as active, so without this
// check each point would start a team on every core (the same choice either way: every
// candidate is scored into its own slot).
bool TopLevel() {
#ifdef _OPENMP
  return omp_get_level() == 0;
#else
  return true;
#endif
}

// fn(i) for i in [0, n): on OpenMP threads for several candidates at the top level, else in
// order on this thread. Even with its `if` false an OpenMP region costs the runtime's set-up
// (libgomp's team of one, system calls included), which a sweep's single-candidate points paid
// for every point.
template <typename Fn>
void ForEachCandidate(int64_t n, Fn fn) {
  if (n > 1 && TopLevel()) {
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1)
#endif
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  for (int64_t i = 0; i < n; ++i) fn(i);
}

// The job's strategy with dp 0 ("derived") replaced by the value ResolveStrategy derives, when it
// derives one: the two then resolve alike (ResolveStrategy's checks before the derivation read
// dp only for degrees < 1, excluded here; after it they see the same dp), so RunTraining gives
// the same status for both. Otherwise the strategy unchanged.
Strategy WithDerivedDp(const Strategy& s, int num_gpus) {
  Strategy out = s;
  const int64_t mp = static_cast<int64_t>(s.tp) * s.pp * s.cp;
  if (s.dp == 0 && s.tp >= 1 && s.pp >= 1 && s.cp >= 1 && s.ep >= 1 && s.vpp >= 1 &&
      num_gpus % mp == 0) {
    out.dp = static_cast<int>(num_gpus / mp);
  }
  return out;
}

// One phase: every candidate scored by the closed form, the best kSimulated simulated; the index
// of the fastest feasible one, or nullopt (failures appended).
// `as_given` (ChooseTrainStrategy): the job's own failed status, taken by a candidate that is the
// job as given and would be scored exactly as the job was run.
std::optional<size_t> Best(const TrainJob& job, const TrainCosts& costs,
                           const std::vector<Strategy>& cands, std::vector<Status>* failures,
                           const Status* as_given) {
  const int64_t n = static_cast<int64_t>(cands.size());
  std::vector<Scored> scored(cands.size());
  const Strategy given = WithDerivedDp(job.strategy, job.num_gpus);
  auto score = [&](int64_t i, bool closed_form) {
    Scored s;
    s.index = static_cast<size_t>(i);
    const bool vpp_given = job.vpp_given || cands[i].pp == 1;
    // RunTraining reads of the job only what j below copies, want_trace and closed_form_search:
    // equal fields and the same costs give the same status (checked before j copies the model).
    if (as_given != nullptr && !as_given->ok() && closed_form == job.closed_form_search &&
        !job.want_trace && vpp_given == job.vpp_given && cands[i] == given) {
      s.status = *as_given;
      return s;
    }
    TrainJob j;
    j.model = job.model;
    j.strategy = cands[i];
    j.mbs_given = job.mbs_given;
    j.vpp_given = vpp_given;
    j.num_gpus = job.num_gpus;
    j.nvlink_domain_gpus = job.nvlink_domain_gpus;
    j.gpu_memory_bytes = job.gpu_memory_bytes;
    j.memory_reserve = job.memory_reserve;
    j.gpus_per_vm = job.gpus_per_vm;
    // The slowest GPU's wait, as the job will run and as plan ranks (plan/plan.cc): it weighs
    // compute and the bubble, so it can reorder candidates.
    j.gpu_variability = job.gpu_variability;
    j.zero_stages = job.zero_stages;
    j.closed_form_search = closed_form;
    StatusOr<TrainReport> r = RunTraining(j, costs);
    if (r.ok()) {
      s.step_time_s = r->sim.step_time_s;
    } else {
      s.status = r.status();
    }
    return s;
  };
  ForEachCandidate(n, [&](int64_t i) { scored[i] = score(i, true); });
  std::vector<Scored> ok;
  for (Scored& s : scored) {
    if (s.status.ok()) {
      ok.push_back(s);
    } else {
      failures->push_back(s.status);
    }
  }
  if (ok.empty()) return std::nullopt;
  auto by_time = [](const Scored& a, const Scored& b) {
    if (a.step_time_s != b.step_time_s) return a.step_time_s < b.step_time_s;
    return a.index < b.index;
  };
  std::sort(ok.begin(), ok.end(), by_time);
  if (ok.size() > kSimulated) ok.resize(kSimulated);
  const int64_t k = static_cast<int64_t>(ok.size());
  std::vector<Scored> sim(ok.size());
  ForEachCandidate(k, [&](int64_t i) { sim[i] = score(static_cast<int64_t>(ok[i].index), false); });
  std::vector<Scored> good;
  for (const Scored& s : sim) {
    if (s.status.ok()) good.push_back(s);
  }
  if (good.empty()) return ok[0].index;  // the simulator refused what the closed form took
  return std::min_element(good.begin(), good.end(), by_time)->index;
}

// The candidates of `space`, each with the stack's (and the user's) knobs applied, duplicates
// (knobs the stack overrode) dropped.
std::vector<Strategy> Candidates(const TrainJob& job, const TrainSearchSpace& space,
                                 const SoftwareStack& stack, const StrategyKnobs& user) {
  std::vector<Strategy> out;
  for (Strategy s : EnumerateTrainStrategies(job.model, job.num_gpus, job.nvlink_domain_gpus,
                                             job.strategy, space)) {
    ApplyTrainStack(stack, user, &s);
    const bool dup = std::any_of(out.begin(), out.end(), [&](const Strategy& o) {
      return o.tp == s.tp && o.pp == s.pp && o.dp == s.dp && o.ep == s.ep && o.zero == s.zero &&
             o.recompute == s.recompute && o.sp == s.sp && o.tp_overlap == s.tp_overlap;
    });
    if (!dup) out.push_back(s);
  }
  return out;
}

// The memory error of the candidate with the smallest footprint (mbs 1 unless given), or "".
std::string SmallestFootprint(const TrainJob& job, const std::vector<Strategy>& cands) {
  double least = std::numeric_limits<double>::infinity();
  std::string msg;
  for (Strategy s : cands) {
    if (!job.mbs_given) s.mbs = 1;
    if (!job.vpp_given) s.vpp = 1;
    std::vector<std::string> w;
    if (!ResolveStrategy(job.model, job.num_gpus, job.nvlink_domain_gpus, &s, &w).ok()) continue;
    const MemoryBreakdown m = EstimateMemory(job.model, s);
    if (m.total_bytes() < least) {
      least = m.total_bytes();
      const Status st =
          CheckFits(m, ReserveOf(job.memory_reserve, job.gpu_memory_bytes, job.model, s),
                    job.gpu_memory_bytes, s, job.zero_stages);
      msg = st.ok() ? "" : st.message();
      if (!msg.empty()) {
        msg += " (tp " + std::to_string(s.tp) + ", pp " + std::to_string(s.pp) +
               (job.model.is_moe() ? ", ep " + std::to_string(s.ep) : std::string()) + ", zero " +
               std::to_string(s.zero) + ", recompute " + RecomputeName(s.recompute) + ")";
      }
    }
  }
  return msg;
}

}  // namespace

bool NeedsChoice(const TrainSearchSpace& space) {
  return !space.tp || !space.pp || !space.dp || !space.zero || !space.recompute;
}

StatusOr<TrainChoice> ChooseTrainStrategy(const TrainJob& job, const TrainCosts& costs,
                                          const TrainSearchSpace& space, const SoftwareStack& stack,
                                          const StrategyKnobs& user, const Status* as_given) {
  // Phase 1: the stack's ZeRO stage and recompute where it sets them (the user's where given).
  TrainSearchSpace first = space;
  if (!first.zero && stack.knobs.zero) first.zero = *stack.knobs.zero;
  if (!first.recompute && stack.knobs.recompute) first.recompute = *stack.knobs.recompute;
  // SP and TP overlap as the stack applies them (ApplyTrainStack), unless the user gave them.
  if (!first.tp_overlap) first.tp_overlap = false;
  std::vector<Status> failures;
  std::vector<Strategy> cands = Candidates(job, first, stack, user);
  std::optional<size_t> best = Best(job, costs, cands, &failures, as_given);
  int64_t evaluated = static_cast<int64_t>(cands.size());
  bool widened = false;
  // Phase 2: nothing fits with the stack's knobs: widen recompute first within the ZeRO stages
  // the stack's software runs (SoftwareStack::zero_stages), then every stage 0-3 (the Chosen
  // line then says the stack cannot run it). Megatron-Core 0.9 answers a memory shortfall with
  // recompute, not with a ZeRO stage it does not have.
  if (!best && ((!space.zero && first.zero) || (!space.recompute && first.recompute))) {
    // Pass 0 only where it differs from pass 1 (plan already searches the stack's stages).
    const bool stages_first =
        !space.zero && !stack.zero_stages.empty() && space.zero_stages != stack.zero_stages;
    for (int pass = stages_first ? 0 : 1; pass < 2 && !best; ++pass) {
      TrainSearchSpace second = first;
      second.zero = space.zero;
      second.recompute = space.recompute;
      second.max_zero = 3;
      if (pass == 0) {
        second.zero_stages = stack.zero_stages;
      } else if (stages_first) {  // the stages pass 0 left out, each configuration once
        second.zero_stages.clear();
        for (int z = 0; z <= 3; ++z) {
          if (std::find(stack.zero_stages.begin(), stack.zero_stages.end(), z) ==
              stack.zero_stages.end())
            second.zero_stages.push_back(z);
        }
      }
      SoftwareStack loose = stack;
      loose.knobs.zero.reset();
      loose.knobs.recompute.reset();
      std::vector<Strategy> more = Candidates(job, second, loose, user);
      best = Best(job, costs, more, &failures, as_given);
      evaluated += static_cast<int64_t>(more.size());
      cands.insert(cands.end(), more.begin(), more.end());
      if (best) {
        *best += cands.size() - more.size();
        widened = true;
      }
    }
  }
  if (!best) {
    if (evaluated == 1 && !failures.empty()) return failures.back();
    const bool memory = std::any_of(failures.begin(), failures.end(), [](const Status& s) {
      return s.code() == StatusCode::kDoesNotFit;
    });
    if (memory) {
      const std::string smallest = SmallestFootprint(job, cands);
      if (!smallest.empty()) {
        return Status::DoesNotFit("none of " + std::to_string(evaluated) +
                                  " configurations searched fits; the smallest " + smallest +
                                  ", or more --vms");
      }
    }
    // What the user would get without the search: the error of the job as given (tp, pp 1
    // where left out), which names the flag to change.
    if (as_given != nullptr && !as_given->ok() && job.closed_form_search) return *as_given;
    TrainJob plain = job;
    plain.closed_form_search = true;
    StatusOr<TrainReport> r = RunTraining(plain, costs);
    if (!r.ok()) return r.status();
    if (!failures.empty()) return NoneFeasible(failures);
    return Status::Infeasible("no configuration to search; give --tp and --pp");
  }
  TrainChoice c;
  c.strategy = cands[*best];
  c.strategy.mbs = job.strategy.mbs;
  c.strategy.vpp = job.strategy.vpp;
  c.evaluated = evaluated;
  c.widened = widened;
  if (!space.tp) c.chosen.push_back("tp " + std::to_string(c.strategy.tp));
  if (!space.pp) c.chosen.push_back("pp " + std::to_string(c.strategy.pp));
  if (!space.dp && (!space.tp || !space.pp)) {
    c.chosen.push_back("dp " + std::to_string(c.strategy.dp));
  }
  if (!space.ep && job.model.is_moe()) c.chosen.push_back("ep " + std::to_string(c.strategy.ep));
  // Where the stack's value was left, say so: the stack no longer describes the run.
  if (widened && !space.zero) {
    // A stage the stack's software cannot run (SoftwareStack::zero_stages) is said too: the
    // widened search spans 0-3 so that train answers, but the stack no longer runs it.
    const std::vector<int>& runs = stack.zero_stages;
    const bool cannot =
        !runs.empty() && std::find(runs.begin(), runs.end(), c.strategy.zero) == runs.end();
    c.chosen.push_back("zero " + std::to_string(c.strategy.zero) +
                       (first.zero && *first.zero != c.strategy.zero
                            ? " (the stack's " + std::to_string(*first.zero) + " does not fit" +
                                  (cannot ? "; " + stack.name + " cannot run ZeRO " +
                                                std::to_string(c.strategy.zero) + ")"
                                          : ")")
                            : ""));
  }
  if (widened && !space.recompute) {
    c.chosen.push_back(
        std::string("recompute ") + RecomputeName(c.strategy.recompute) +
        (first.recompute && *first.recompute != c.strategy.recompute
             ? std::string(" (the stack's ") + RecomputeName(*first.recompute) + " does not fit)"
             : ""));
  }
  return c;
}

}  // namespace ndt
