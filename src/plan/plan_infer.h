// File: plan/plan_infer.h
// The planning question for inference: which VM size, how many, which weight precision, what
// throughput and what it costs per million output tokens. For every candidate size and every
// weight precision its GPU computes natively (fp16, and fp8 / fp4 where the GPU has them; or the
// precisions asked for), it runs the inference service (serve/run.h), which itself chooses TP,
// PP and the batch for the scenario (and, for an MoE model, tries attention data parallelism:
// serve/knob_search.h), and ranks the results. Candidates run in parallel (OpenMP)
// into a pre-sized vector: the output does not depend on the thread count.
#ifndef NDTWIN_PLAN_PLAN_INFER_H_
#define NDTWIN_PLAN_PLAN_INFER_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "hw/catalog.h"
#include "model/transformer.h"
#include "plan/plan.h"
#include "serve/run.h"
#include "serve/service.h"

namespace ndt {

// throughput: most output tokens/s; cost: fewest dollars per million output tokens (sizes
// without a price skipped).
enum class PlanInferObjective { kThroughput, kCost };

struct PlanInferRequest {
  TransformerSpec model;
  std::vector<const SkuSpec*> skus;  // sizes to consider, in output order
  int gpus = 0;                      // total GPUs (sizes whose GPUs per VM divide it); 0: vms
  int vms = 0;                       // VMs of each size (when gpus == 0)
  std::vector<Dtype> weights;        // empty: every precision each GPU computes natively
  InferOptions base;                 // scenario, requests, limits; vms, weights and kv are set
  PlanInferObjective objective = PlanInferObjective::kThroughput;
  int top_k = 10;
  int threads = 0;  // OpenMP threads; 0: the runtime's default
};

struct PlanInferResult {
  size_t index = 0;  // enumeration order: the tie-breaker
  std::string sku;
  int vms = 0, gpus = 0;
  Dtype weights = Dtype::kFp16, kv = Dtype::kFp16;
  DeploymentInfo deployment;
  double tokens_per_s = 0, tokens_per_s_per_gpu = 0;
  double ttft_p99_s = 0, tpot_p99_s = 0;
  bool priced = false;
  double usd_per_million_tokens = 0;
};

struct PlanInferReport {
  int64_t evaluated = 0, infeasible = 0;
  std::vector<PlanInferResult> results;  // best first, at most top_k
  std::vector<PlanInferResult> scored;   // every feasible pair, best first (results' superset)
  std::vector<std::string> notes;        // sizes skipped and why; warnings of the runs, by pair
  std::vector<std::string> unpriced;     // objective cost: sizes left out for want of a price
};

// kInvalidInput on a bad request (no GPUs or VMs, top_k < 1, base.requests beyond 100,000);
// kInfeasible, with the commonest reason and a fix, when no pair can serve the model.
StatusOr<PlanInferReport> PlanInference(const ServeData& data, const PlanInferRequest& req,
                                        const PlanProgress& progress = {});

}  // namespace ndt

#endif  // NDTWIN_PLAN_PLAN_INFER_H_
