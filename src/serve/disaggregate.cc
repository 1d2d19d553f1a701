#include "serve/disaggregate.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "serve/cost.h"

namespace ndt {

int StageFirstGpu(int r, int s, int tp, int pp, int vm_gpus, int domain_gpus) {
  tp = std::max(tp, 1);
  pp = std::max(pp, 1);
  const int group = tp * pp;
  if (group <= vm_gpus) {
    const int per_vm = vm_gpus / group;
    return (r / per_vm) * vm_gpus + (r % per_vm) * group + s * tp;
  }
  const int per_domain = std::max(1, domain_gpus / tp);  // TP groups a domain holds
  const int g = r * pp + s;                              // the stage's TP group
  return (g / per_domain) * domain_gpus + (g % per_domain) * tp;
}

int ReplicaFirstGpu(int r, int tp, int pp, int vm_gpus, int domain_gpus) {
  return StageFirstGpu(r, 0, tp, pp, vm_gpus, domain_gpus);
}

namespace {

// Disaggregated: `reqs` (all engines' arrivals) go round-robin to the prefill replicas, which
// compute each prompt and its first token; the K/V then move to a decode replica (each GPU sends
// its shard: input x K/V bytes per token per GPU, over coll's send/recv), which generates the
// rest. Every engine is simulated. Returns one result per decode engine, with the request
// records merged (TTFT from the prefill pool) and the first tokens counted.
RunTotals RunDisaggregated(const DeploymentPlan& plan, const InferContext& ctx,
                           const std::vector<Request>& reqs, int prefill_engines,
                           int decode_engines) {
  IterationCostModel cost(plan.cost);
  IterationCostFn fn = cost.AsFn();
  std::vector<RequestRecord> first(reqs.size());
  for (int e = 0; e < prefill_engines; ++e) {
    std::vector<Request> mine;
    std::vector<size_t> index;
    for (size_t i = e; i < reqs.size(); i += prefill_engines) {
      Request q = reqs[i];
      q.output_tokens = 1;
      mine.push_back(q);
      index.push_back(i);
    }
    EngineResult r = RunEngine(mine, plan.engine, fn);
    for (size_t j = 0; j < index.size(); ++j) first[index[j]] = r.requests[j];
  }
  const double kv_token = plan.dep.memory.kv_bytes_per_token_per_gpu;
  // Engine e is PP group e % pp of replica e / pp; the prefill pool's replicas come first, the
  // decode pool's after them. Each GPU hands its shard to its peer; priced on the replicas'
  // first GPUs (the same hop kind: NVLink inside a VM or rack, else InfiniBand).
  const int pp = std::max(1, plan.dep.pp);
  const int prefill_replicas = prefill_engines / pp;
  const int domain_gpus = std::max(1, ctx.sku->vms_per_nvlink_domain) * ctx.sku->gpus;
  auto first_gpu = [&](int replica) {
    return ReplicaFirstGpu(replica, plan.dep.tp, pp, ctx.sku->gpus, domain_gpus);
  };
  RunTotals t;
  t.engines = decode_engines;
  for (int e = 0; e < decode_engines; ++e) {
    std::vector<Request> mine;
    std::vector<size_t> index;
    for (size_t i = e; i < reqs.size(); i += decode_engines) {
      if (reqs[i].output_tokens < 2) continue;
      double move = ctx.comm.kv_transfer_s
                        ? ctx.comm.kv_transfer_s(
                              first_gpu(static_cast<int>(i % prefill_engines) / pp),
                              first_gpu(prefill_replicas + e / pp), reqs[i].input_tokens * kv_token)
                        : 0.0;
      Request q = reqs[i];
      q.arrival_s = first[i].first_token_s + move;
      q.prefilled = true;
      mine.push_back(q);
      index.push_back(i);
    }
    std::vector<size_t> order(mine.size());
    for (size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return mine[a].arrival_s < mine[b].arrival_s; });
    std::vector<Request> sorted;
    for (size_t j : order) sorted.push_back(mine[j]);
    EngineResult r = RunEngine(sorted, plan.engine, fn);
    for (size_t j = 0; j < order.size(); ++j) {
      RequestRecord& rec = r.requests[j];
      const RequestRecord& f = first[index[order[j]]];
      rec.arrival_s = f.arrival_s;
      rec.first_token_s = f.first_token_s;
    }
    t.results.push_back(std::move(r));
  }
  // Requests of a single token finish in the prefill pool: count them (and every first token)
  // on decode engine (i mod D), as a load balancer would have.
  for (size_t i = 0; i < reqs.size(); ++i) {
    EngineResult& r = t.results[i % decode_engines];
    ++r.output_tokens;
    if (reqs[i].output_tokens < 2) {
      r.requests.push_back(first[i]);
      r.makespan_s = std::max(r.makespan_s, first[i].finish_s);
    }
  }
  return t;
}

}  // namespace

// Prefill and decode on separate replicas (--disaggregate P:D): splits the replicas, simulates
// the hand-off and measures by makespan.
StatusOr<InferResult> RunDisaggregatedScenario(DeploymentPlan& plan, const InferContext& ctx,
                                               const InferOptions& o, bool latency) {
  InferResult r;
  const int R = plan.dep.replicas;
  if (R < 2) {
    return Status::Infeasible(
        "--disaggregate needs at least 2 replicas, TP" + std::to_string(plan.dep.tp) + " x PP" +
        std::to_string(plan.dep.pp) + " gives " + std::to_string(R) +
        (o.tp > 0 || o.pp > 0 ? "; add --vms or lower --tp/--pp" : "; add --vms"));
  }
  if (plan.dep.gpus_total > ctx.sku->gpus && !ctx.sku->infiniband) {
    return Status::Infeasible(
        "--disaggregate hands each request's KV cache from a prefill to a decode replica across "
        "VMs, and " +
        ctx.sku->name + " has no InfiniBand; use --vms 1 or a size with InfiniBand");
  }
  if (latency && o.qps <= 0 && o.trace.empty()) {
    return Status::InvalidInput(
        "--disaggregate runs offline, --qps or --trace-file; give --qps for server/interactive");
  }
  const int P = o.disaggregate_prefill, D = o.disaggregate_decode;
  int pr = static_cast<int>(std::lround(static_cast<double>(R) * P / (P + D)));
  pr = std::clamp(pr, 1, R - 1);
  if (static_cast<int64_t>(pr) * D != static_cast<int64_t>(R - pr) * P) {
    return Status::InvalidInput(
        "--disaggregate " + std::to_string(P) + ":" + std::to_string(D) + " does not split " +
        std::to_string(R) + " replicas of TP" + std::to_string(plan.dep.tp) + " x PP" +
        std::to_string(plan.dep.pp) + "; the nearest is " + std::to_string(pr) + ":" +
        std::to_string(R - pr) + " (use it, or --vms for a multiple of " + std::to_string(P + D) +
        " replicas)");
  }
  plan.dep.prefill_replicas = pr;
  plan.dep.decode_replicas = R - pr;
  const int pe = pr * plan.dep.pp, de = (R - pr) * plan.dep.pp;
  std::vector<Request> reqs = o.trace;
  if (reqs.empty()) {
    int n =
        o.requests > 0
            ? o.requests
            : static_cast<int>(std::min<int64_t>(
                  kSimRequestBudget * 2, std::max<int64_t>(static_cast<int64_t>(o.lengths.size()),
                                                           int64_t{de} * kOfflineBatchesPerEngine *
                                                               plan.engine.max_batch)));
    reqs = latency ? PoissonRequests(o.lengths, n, o.qps, o.seed) : OfflineRequests(o.lengths, n);
  }
  RunTotals t = RunDisaggregated(plan, ctx, reqs, pe, de);
  DeploymentPlan decode_plan = plan;
  decode_plan.engines = de;
  FillResult(decode_plan, t, Measure::kMakespan, &r);
  r.engines = pe + de;
  r.engines_simulated = pe + de;
  r.qps = latency ? o.qps : r.requests_per_s;
  return r;
}

}  // namespace ndt
