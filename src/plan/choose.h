// File: plan/choose.h
// `train`'s omitted knobs: the best feasible strategy for one size and count, with the
// planner's machinery (plan.h's enumeration, the closed form to score, the simulator to re-score
// the best few). Knobs the user gave are kept; tp, pp and dp are searched when left out, and so
// is ep for an MoE model (TrainSearchSpace::ep unset). The
// software stack's knobs (ZeRO stage, recompute, SP, TP overlap: parallel/stack.h) are kept as the
// stack sets them when some tp x pp fits with them, since the stack states what software is run;
// when none does, ZeRO 0-3 and every recompute the user left out are searched too ("widened").
#ifndef NDTWIN_PLAN_CHOOSE_H_
#define NDTWIN_PLAN_CHOOSE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "parallel/costs.h"
#include "parallel/stack.h"
#include "parallel/train.h"
#include "plan/plan.h"

namespace ndt {

struct TrainChoice {
  Strategy strategy;                // the chosen knobs; mbs and vpp as the job had them
  std::vector<std::string> chosen;  // "tp 2", "pp 1", "dp 4", "ep 8", "zero 3": what was searched
  int64_t evaluated = 0;            // configurations scored
  bool widened = false;             // the stack's ZeRO stage / recompute did not fit anywhere
};

// True when `space` leaves any of tp, pp, dp, zero, recompute out (a search is needed).
bool NeedsChoice(const TrainSearchSpace& space);

// The fastest feasible strategy of `space` for `job` (its model, GPUs, memory, and its strategy
// as the base: gbs, cp, ep, schedule, order and the knobs the user gave), each candidate's
// stack knobs applied as ApplyTrainStack(stack, user) would. Candidates are scored with the
// closed form (job.closed_form_search), the best 8 simulated (mbs and VPP searched where the job
// leaves them out), each step waiting for the slowest GPU as job.gpu_variability says (as the job
// runs, and as plan ranks), on `costs` (analytical is enough: the caller re-runs the chosen one at
// its fidelity). Fails with kDoesNotFit when nothing fits (the smallest footprint and a fix), else
// with the error of the configuration a user would get without the search (tp, pp 1).
// `as_given`, when not null, is the failed status of RunTraining(job, costs) the caller already
// ran on these same `costs`: a candidate equal to the job as given (the same Strategy, scored as
// the job was: closed form, no trace, the same vpp_given) takes it instead of running again.
StatusOr<TrainChoice> ChooseTrainStrategy(const TrainJob& job, const TrainCosts& costs,
                                          const TrainSearchSpace& space, const SoftwareStack& stack,
                                          const StrategyKnobs& user,
                                          const Status* as_given = nullptr);

}  // namespace ndt

#endif  // NDTWIN_PLAN_CHOOSE_H_
