#include "serve/service.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/strings.h"
#include "serve/cost.h"

namespace ndt {
namespace {

constexpr int kOfflineBatchesPerEngine = 8;   // offline requests per engine >= 8 x max_batch
constexpr int64_t kSimRequestBudget = 32768;  // requests simulated per evaluation (all engines)
constexpr int kServerMinPerEngine = 2000;     // server requests per simulated engine, at least
constexpr int kServerBatchesPerEngine = 8;    // ... and 8 x max_batch, so overload shows
constexpr int kSearchSteps = 14;              // bisection steps over the rate (hi / 2^14)
constexpr int kDefaultMaxNumTokens = 8192;    // TensorRT-LLM's default max_num_tokens

uint64_t Mix(uint64_t seed, uint64_t i) {  // splitmix64 of seed + i
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string Fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

struct Plan {
  DeploymentInfo dep;
  EngineConfig engine;
  int engines = 0;  // replicas x pipeline groups
  CostSpec cost;
};

struct Knobs {
  int tp = 1, pp = 1, max_batch = 256, max_num_tokens = kDefaultMaxNumTokens;
};

int MaxSeqTokens(const InferOptions& o) {
  int m = 1;
  for (const RequestLengths& l : o.lengths) m = std::max(m, l.input_tokens + l.output_tokens);
  for (const Request& r : o.trace) m = std::max(m, r.input_tokens + r.output_tokens);
  return m;
}

StatusOr<Plan> MakePlan(const InferContext& ctx, const InferOptions& o, const Knobs& k) {
  Plan p;
  DeploymentRequest dr;
  dr.tp = k.tp;
  dr.pp = k.pp;
  dr.ep = o.ep;
  dr.weights = o.weights;
  dr.kv = o.kv;
  dr.max_seq_tokens = MaxSeqTokens(o);
  NDT_ASSIGN_OR_RETURN(int replicas, CountReplicas(*ctx.sku, o.vms, k.tp, k.pp, o.ep));
  NDT_ASSIGN_OR_RETURN(MemoryPlan mem, PlanMemory(*ctx.model, *ctx.gpu, dr, ctx.params));
  p.dep.tp = k.tp;
  p.dep.pp = k.pp;
  p.dep.ep = o.ep;
  p.dep.replicas = replicas;
  p.dep.gpus_used = replicas * k.tp * k.pp;
  p.dep.gpus_total = ctx.sku->gpus * o.vms;
  p.dep.max_batch = k.max_batch;
  p.dep.max_num_tokens = k.max_num_tokens;
  p.dep.weights = o.weights;
  p.dep.kv = o.kv;
  p.dep.memory = mem;
  p.engines = replicas * k.pp;
  p.engine.max_batch = k.max_batch;
  p.engine.max_num_tokens = k.max_num_tokens;
  p.engine.block_tokens = ctx.params.block_tokens;
  p.engine.kv_blocks = mem.kv_blocks_per_replica / k.pp;  // the groups share the cache evenly
  p.cost.model = ctx.model;
  p.cost.gpu = ctx.gpu;
  p.cost.calibration = ctx.calibration;
  p.cost.tp = k.tp;
  p.cost.pp = k.pp;
  p.cost.ep = o.ep;
  p.cost.weights = o.weights;
  p.cost.kv = o.kv;
  p.cost.activations = Dtype::kFp16;
  p.cost.overhead_s = ctx.params.iteration_overhead_s;
  if (k.tp > 1 && ctx.comm.tp_allreduce_s) {
    auto fn = ctx.comm.tp_allreduce_s;
    int tp = k.tp;
    p.cost.tp_allreduce_s = [fn, tp](double bytes) { return fn(tp, bytes); };
  }
  if (k.pp > 1 && ctx.comm.pp_sends_s) {
    auto fn = ctx.comm.pp_sends_s;
    int tp = k.tp, pp = k.pp;
    p.cost.pp_sends_s = [fn, tp, pp](double bytes) { return fn(tp, pp, bytes); };
  }
  return p;
}

// Totals over the simulated engines.
struct RunTotals {
  std::vector<EngineResult> results;
  int engines = 0;
};

void FillResult(const Plan& plan, const RunTotals& t, InferResult* r) {
  double tokens = 0, reqs = 0, busy = 0, batch_w = 0, kv_w = 0, makespan = 0;
  int64_t peak = 0, preempt = 0, sim_reqs = 0;
  std::vector<const RequestRecord*> recs;
  for (const EngineResult& e : t.results) {
    tokens += static_cast<double>(e.output_tokens);
    reqs += static_cast<double>(e.requests.size());
    busy += e.busy_s;
    batch_w += e.batch_token_weighted;
    kv_w += e.kv_used_time_weighted;
    makespan = std::max(makespan, e.makespan_s);
    peak = std::max(peak, e.kv_peak_blocks);
    preempt += e.preemptions;
    sim_reqs += static_cast<int64_t>(e.requests.size());
    for (const RequestRecord& q : e.requests) recs.push_back(&q);
  }
  double k = static_cast<double>(t.results.size());
  double scale = static_cast<double>(plan.engines) / k;
  r->deployment = plan.dep;
  r->engines = plan.engines;
  r->engines_simulated = static_cast<int>(t.results.size());
  r->requests_simulated = sim_reqs;
  r->duration_s = makespan;
  r->output_tokens_per_s = makespan > 0 ? tokens * scale / makespan : 0;
  r->requests_per_s = makespan > 0 ? reqs * scale / makespan : 0;
  r->per_gpu_output_tokens_per_s = r->output_tokens_per_s / plan.dep.gpus_total;
  r->mean_batch = busy > 0 ? batch_w / busy : 0;
  double blocks = static_cast<double>(plan.engine.kv_blocks);
  r->kv_mean_use_frac = busy > 0 && blocks > 0 ? kv_w / busy / blocks : 0;
  r->kv_peak_use_frac = blocks > 0 ? static_cast<double>(peak) / blocks : 0;
  r->preemptions = static_cast<int64_t>(std::llround(static_cast<double>(preempt) * scale));
  r->stats = SummarizeRequests(recs);
}

// Offline: engine e serves dataset rows e, e + E, e + 2E, ... (round-robin), wrapping.
RunTotals RunOffline(const Plan& plan, const InferOptions& o, int per_engine, int simulate,
                     bool record) {
  RunTotals t;
  t.engines = plan.engines;
  IterationCostModel cost(plan.cost);
  IterationCostFn fn = cost.AsFn();
  const size_t n = o.lengths.size();
  for (int e = 0; e < simulate; ++e) {
    std::vector<Request> reqs(per_engine);
    for (int j = 0; j < per_engine; ++j) {
      const RequestLengths& l = o.lengths[(static_cast<size_t>(e) +
                                           static_cast<size_t>(j) * plan.engines) % n];
      reqs[j] = {j, 0.0, l.input_tokens, l.output_tokens};
    }
    EngineConfig cfg = plan.engine;
    cfg.record_iterations = record && e == 0;
    t.results.push_back(RunEngine(reqs, cfg, fn));
  }
  return t;
}

RunTotals RunPoisson(const Plan& plan, const InferOptions& o, double qps, int per_engine,
                     int simulate, bool record) {
  RunTotals t;
  t.engines = plan.engines;
  IterationCostModel cost(plan.cost);
  IterationCostFn fn = cost.AsFn();
  for (int e = 0; e < simulate; ++e) {
    std::vector<Request> reqs =
        PoissonRequests(o.lengths, per_engine, qps / plan.engines, Mix(o.seed, e));
    EngineConfig cfg = plan.engine;
    cfg.record_iterations = record && e == 0;
    t.results.push_back(RunEngine(reqs, cfg, fn));
  }
  return t;
}

RunTotals RunTrace(const Plan& plan, const InferOptions& o, bool record) {
  RunTotals t;
  t.engines = plan.engines;
  IterationCostModel cost(plan.cost);
  IterationCostFn fn = cost.AsFn();
  int engines = std::min<int>(plan.engines, static_cast<int>(o.trace.size()));
  for (int e = 0; e < engines; ++e) {
    std::vector<Request> reqs;
    for (size_t i = e; i < o.trace.size(); i += plan.engines) reqs.push_back(o.trace[i]);
    EngineConfig cfg = plan.engine;
    cfg.record_iterations = record && e == 0;
    t.results.push_back(RunEngine(reqs, cfg, fn));
  }
  return t;
}

// Disaggregated: `reqs` (all engines' arrivals) go round-robin to the prefill replicas, which
// compute each prompt and its first token; the K/V then move to a decode replica (each GPU sends
// its shard: input x K/V bytes per token per GPU, over coll's send/recv), which generates the
// rest. Every engine is simulated. Returns one result per decode engine, with the request
// records merged (TTFT from the prefill pool) and the first tokens counted.
RunTotals RunDisaggregated(const Plan& plan, const InferContext& ctx,
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
  RunTotals t;
  t.engines = decode_engines;
  for (int e = 0; e < decode_engines; ++e) {
    std::vector<Request> mine;
    std::vector<size_t> index;
    for (size_t i = e; i < reqs.size(); i += decode_engines) {
      if (reqs[i].output_tokens < 2) continue;
      double move = ctx.comm.kv_transfer_s ? ctx.comm.kv_transfer_s(reqs[i].input_tokens * kv_token)
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

int OfflinePerEngine(const Plan& plan, const InferOptions& o, bool quick) {
  int share = static_cast<int>((o.lengths.size() + plan.engines - 1) / plan.engines);
  int want = std::max(share, kOfflineBatchesPerEngine * plan.engine.max_batch);
  if (quick) want = std::max(512, 4 * plan.engine.max_batch);
  if (o.requests > 0) want = std::max(1, (o.requests + plan.engines - 1) / plan.engines);
  return want;
}

int SimulatedEngines(const Plan& plan, int per_engine, bool quick) {
  if (quick) return 1;
  int64_t k = std::max<int64_t>(1, kSimRequestBudget / std::max(1, per_engine));
  return static_cast<int>(std::min<int64_t>(plan.engines, k));
}

InferResult Offline(const Plan& plan, const InferOptions& o, bool quick) {
  int per = OfflinePerEngine(plan, o, quick);
  RunTotals t = RunOffline(plan, o, per, SimulatedEngines(plan, per, quick),
                           o.record_trace && !quick);
  InferResult r;
  FillResult(plan, t, &r);
  r.qps = r.requests_per_s;
  if (o.record_trace && !quick && !t.results.empty()) {
    r.trace_iterations = t.results[0].iterations;
    r.trace_requests = t.results[0].requests;
  }
  return r;
}

InferResult AtRate(const Plan& plan, const InferOptions& o, double qps, bool quick, bool record) {
  int per = quick ? std::max(1000, 4 * plan.engine.max_batch)
                  : std::max(kServerMinPerEngine, kServerBatchesPerEngine * plan.engine.max_batch);
  if (o.requests > 0) per = std::max(1, (o.requests + plan.engines - 1) / plan.engines);
  int sim = quick ? 1 : SimulatedEngines(plan, per, false);
  RunTotals t = RunPoisson(plan, o, qps, per, sim, record);
  InferResult r;
  FillResult(plan, t, &r);
  r.qps = qps;
  // A long run's completed tokens/s (MLPerf Server runs >= 600 s) tends to the offered rate
  // times the mean output; our shorter run's drain at the end would understate it.
  double tokens = 0, reqs = 0;
  for (const EngineResult& e : t.results) {
    tokens += static_cast<double>(e.output_tokens);
    reqs += static_cast<double>(e.requests.size());
  }
  r.requests_per_s = qps;
  r.output_tokens_per_s = reqs > 0 ? qps * tokens / reqs : 0;
  r.per_gpu_output_tokens_per_s = r.output_tokens_per_s / plan.dep.gpus_total;
  if (record && !t.results.empty()) {
    r.trace_iterations = t.results[0].iterations;
    r.trace_requests = t.results[0].requests;
  }
  return r;
}

bool Meets(const InferResult& r, double ttft, double tpot) {
  return r.stats.ttft_s.p99 <= ttft && r.stats.tpot_s.p99 <= tpot;
}

// The highest rate meeting the limits; kInfeasible if even a light load misses them.
StatusOr<InferResult> SearchRate(const Plan& plan, const InferOptions& o, double ttft,
                                 double tpot, bool quick) {
  double hi = Offline(plan, o, true).requests_per_s;
  double lo = hi / 100;
  InferResult best = AtRate(plan, o, lo, quick, false);
  if (!Meets(best, ttft, tpot)) {
    return Status::Infeasible(
        "no request rate meets p99 TTFT <= " + Fmt("%g", ttft) + " s and p99 TPOT <= " +
        Fmt("%g", tpot) + " s with TP" + std::to_string(plan.dep.tp) + " PP" +
        std::to_string(plan.dep.pp) + " batch " + std::to_string(plan.dep.max_batch) + ": at " +
        Fmt("%.3g", lo) + " req/s p99 TTFT is " + Fmt("%.3g", best.stats.ttft_s.p99) +
        " s and p99 TPOT " + Fmt("%.3g", best.stats.tpot_s.p99) +
        " s; relax --ttft-p99/--tpot-p99, raise --tp, lower --max-batch or the precision");
  }
  int steps = quick ? 8 : kSearchSteps;
  for (int i = 0; i < steps; ++i) {
    double mid = 0.5 * (lo + hi);
    InferResult r = AtRate(plan, o, mid, quick, false);
    if (Meets(r, ttft, tpot)) {
      lo = mid;
      best = std::move(r);
    } else {
      hi = mid;
    }
  }
  return best;
}

double Objective(const InferResult& r) { return r.output_tokens_per_s; }

}  // namespace

const char* ScenarioName(Scenario s) {
  switch (s) {
    case Scenario::kOffline:
      return "offline";
    case Scenario::kServer:
      return "server";
    case Scenario::kInteractive:
      return "interactive";
  }
  return "?";
}

bool ParseScenario(const std::string& s, Scenario* out) {
  for (Scenario x : {Scenario::kOffline, Scenario::kServer, Scenario::kInteractive}) {
    if (EqualsIgnoreCase(s, ScenarioName(x))) {
      *out = x;
      return true;
    }
  }
  return false;
}

StatusOr<InferResult> RunInference(const InferContext& ctx, const InferOptions& o) {
  NDT_CHECK(ctx.sku && ctx.gpu && ctx.model && ctx.calibration, "RunInference: null context");
  NDT_CHECK(!o.lengths.empty() || !o.trace.empty(), "RunInference: no requests");
  const bool latency = o.scenario != Scenario::kOffline;
  double ttft = o.ttft_p99_s, tpot = o.tpot_p99_s;
  if (ttft <= 0) ttft = o.scenario == Scenario::kInteractive ? 0.45 : 2.0;
  if (tpot <= 0) tpot = o.scenario == Scenario::kInteractive ? 0.040 : 0.200;

  // Candidate knobs: the given ones, or a search over powers of two.
  std::vector<int> tps, pps, batches;
  const int domain = std::min(ctx.sku->nvlink_domain_gpus, ctx.sku->gpus * o.vms);
  if (o.tp > 0) tps = {o.tp};
  else for (int t = 1; t <= std::min(domain, 8); t *= 2) tps.push_back(t);
  if (o.pp > 0) pps = {o.pp};
  else pps = {1, 2, 4, 8};
  if (o.max_batch > 0) batches = {o.max_batch};
  else batches = {128, 256, 512, 1024, 2048};
  const int mnt = o.max_num_tokens > 0 ? o.max_num_tokens : kDefaultMaxNumTokens;
  const bool search = tps.size() * batches.size() > 1 || o.pp == 0;

  std::optional<Plan> best_plan;
  double best_obj = -1;
  Status fit_error = Status::Ok(), slo_error = Status::Ok();
  for (int pp : pps) {
    for (int tp : tps) {
      for (int b : batches) {
        StatusOr<Plan> plan = MakePlan(ctx, o, {tp, pp, b, mnt});
        if (!plan.ok()) {
          fit_error = plan.status();
          break;  // a larger batch does not change feasibility of (tp, pp)
        }
        if (!search) {
          best_plan = *plan;
          break;
        }
        double obj = -1;
        if (!o.trace.empty() || (latency && o.qps > 0) || !latency) {
          obj = Objective(Offline(*plan, o, true));
        } else {
          StatusOr<InferResult> r = SearchRate(*plan, o, ttft, tpot, true);
          if (!r.ok()) {
            if (slo_error.ok()) slo_error = r.status();
            continue;
          }
          obj = Objective(*r);
        }
        if (obj > best_obj * 1.005) {  // ties keep the smaller deployment found first
          best_obj = obj;
          best_plan = *plan;
        }
      }
    }
    if (best_plan && o.pp == 0) break;  // PP only when nothing fits with fewer stages
  }
  if (!best_plan) return slo_error.ok() ? fit_error : slo_error;
  Plan plan = *best_plan;
  if (o.tp == 0) plan.dep.chosen.push_back("tp");
  if (o.pp == 0) plan.dep.chosen.push_back("pp");
  if (o.max_batch == 0) plan.dep.chosen.push_back("max_batch");
  if (o.max_num_tokens == 0) plan.dep.chosen.push_back("max_num_tokens");

  InferResult r;
  if (o.disaggregate_prefill > 0) {
    const int R = plan.dep.replicas;
    if (R < 2) {
      return Status::Infeasible("--disaggregate needs at least 2 replicas, TP" +
                                std::to_string(plan.dep.tp) + " x PP" +
                                std::to_string(plan.dep.pp) + " gives " + std::to_string(R) +
                                "; add --vms or lower --tp/--pp");
    }
    if (latency && o.qps <= 0 && o.trace.empty()) {
      return Status::InvalidInput(
          "--disaggregate runs offline, --qps or --trace-file; give --qps for server/interactive");
    }
    const int P = o.disaggregate_prefill, D = o.disaggregate_decode;
    int pr = static_cast<int>(std::lround(static_cast<double>(R) * P / (P + D)));
    pr = std::clamp(pr, 1, R - 1);
    plan.dep.prefill_replicas = pr;
    plan.dep.decode_replicas = R - pr;
    const int pe = pr * plan.dep.pp, de = (R - pr) * plan.dep.pp;
    std::vector<Request> reqs = o.trace;
    if (reqs.empty()) {
      int n = o.requests > 0 ? o.requests
                             : static_cast<int>(std::min<int64_t>(
                                   kSimRequestBudget * 2,
                                   std::max<int64_t>(static_cast<int64_t>(o.lengths.size()),
                                                     int64_t{de} * kOfflineBatchesPerEngine *
                                                         plan.engine.max_batch)));
      reqs = latency ? PoissonRequests(o.lengths, n, o.qps, o.seed) : OfflineRequests(o.lengths, n);
    }
    RunTotals t = RunDisaggregated(plan, ctx, reqs, pe, de);
    Plan decode_plan = plan;
    decode_plan.engines = de;
    FillResult(decode_plan, t, &r);
    r.engines = pe + de;
    r.engines_simulated = pe + de;
    r.qps = latency ? o.qps : r.requests_per_s;
  } else if (!o.trace.empty()) {
    RunTotals t = RunTrace(plan, o, o.record_trace);
    FillResult(plan, t, &r);
    r.qps = r.requests_per_s;
    if (o.record_trace && !t.results.empty()) {
      r.trace_iterations = t.results[0].iterations;
      r.trace_requests = t.results[0].requests;
    }
  } else if (!latency) {
    r = Offline(plan, o, false);
  } else if (o.qps > 0) {
    r = AtRate(plan, o, o.qps, false, o.record_trace);
  } else {
    NDT_ASSIGN_OR_RETURN(r, SearchRate(plan, o, ttft, tpot, false));
    if (o.record_trace) r = AtRate(plan, o, r.qps, false, true);
  }
  r.scenario = o.scenario;
  r.ttft_limit_s = latency ? ttft : 0;
  r.tpot_limit_s = latency ? tpot : 0;
  if (ctx.sku->price && ctx.sku->price->usd_per_hour > 0) {
    r.usd_per_hour = ctx.sku->price->usd_per_hour * o.vms;
    if (r.output_tokens_per_s > 0) {
      r.usd_per_million_tokens = r.usd_per_hour / 3600.0 / r.output_tokens_per_s * 1e6;
    }
  }
  double in = 0, out = 0;
  for (const RequestLengths& l : o.lengths) {
    in += l.input_tokens;
    out += l.output_tokens;
  }
  if (!o.lengths.empty()) {
    r.mean_input_tokens = in / o.lengths.size();
    r.mean_output_tokens = out / o.lengths.size();
  }
  return r;
}

}  // namespace ndt
