// File: serve/knob_search.h
// The deployment search of `infer` (serve/service.h): builds the deployment plan of given knobs
// (memory plan, engine configuration, the iteration cost model with its communication and the
// serving stack's traits) and chooses TP, PP, the batch and the token budget not given (a search
// over powers of two; PP only when nothing fits with fewer stages; for an MoE model whose TP is
// searched, attention data parallelism over 2-8 GPUs too, serve/cost.h). Offline ranks candidates
// by a quick run and re-runs the best few in full; server/interactive without a rate ranks them by
// their throughput at the highest rate within the p99 limits.
#ifndef NDTWIN_SERVE_KNOB_SEARCH_H_
#define NDTWIN_SERVE_KNOB_SEARCH_H_

#include <optional>

#include "core/status.h"
#include "serve/scenario.h"
#include "serve/service.h"

namespace ndt {

// The chosen deployment and what the search already ran on it.
struct Choice {
  DeploymentPlan plan;
  double capacity_rps = 0;  // its quick offline request rate; 0: not run
  double slo_rps = 0;       // the quick search's highest rate within the SLO; 0: none
  // The full run that decided: offline; server/interactive with a small --requests (the rate
  // search in full at the user's count, serve/knob_search.cc).
  std::optional<InferResult> full;
};

// REQUIRES: ctx as RunInference's (serving calibration applied); ttft, tpot the p99 limits.
StatusOr<Choice> Choose(const InferContext& ctx, const InferOptions& o, double ttft, double tpot);

}  // namespace ndt

#endif  // NDTWIN_SERVE_KNOB_SEARCH_H_
