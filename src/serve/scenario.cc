#include "serve/scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

#include "serve/request.h"

namespace ndt {
namespace {

constexpr int kServerMinPerEngine = 2000;    // server requests per simulated engine, at least
constexpr int kServerBatchesPerEngine = 8;   // ... and 8 x max_batch, so overload shows
constexpr double kServerMinDurationS = 600;  // mlperf.conf *.Server.min_duration = 600000 ms
constexpr double kServerWarmupFrac = 0.2;    // arrivals before the window: the engine filling
constexpr int kSearchSteps = 14;             // bisection steps over the rate (hi / 2^14)
constexpr int kRefineSteps = 7;              // ... over [kHintLow, kHintHigh] x hint: 0.3%
constexpr double kHintLow = 0.75, kHintHigh = 1.1;
// Seed of the offline permutations past an engine's round-robin share (fixed: --seed is the
// Poisson arrivals', and offline results do not depend on it).
constexpr uint64_t kOfflineSeed = 0x6f66666c696e65ULL;  // "offline"

// Engine e's steady-state output tokens/s under measure m.
double EngineRate(const RunTotals& t, size_t e, Measure m) {
  const EngineResult& r = t.results[e];
  if (m == Measure::kWindow) {
    double len = t.window_end_s[e] - t.window_start_s[e];
    if (len > 0) return static_cast<double>(r.window_tokens) / len;
  } else if (m == Measure::kSaturated && r.warm_s > 0 && r.saturated_until_s > r.warm_s) {
    // Only once a full batch has completed (warm_s): runs too short to warm up are measured
    // over their whole makespan below.
    return static_cast<double>(r.saturated_tokens - r.warm_tokens) /
           (r.saturated_until_s - r.warm_s);
  }
  return r.makespan_s > 0 ? static_cast<double>(r.output_tokens) / r.makespan_s : 0;
}

// Offline: engine e serves its OfflineRows.
RunTotals RunOffline(const DeploymentPlan& plan, const InferOptions& o, int per_engine,
                     int simulate, bool record) {
  RunTotals t;
  t.engines = plan.engines;
  IterationCostModel cost(plan.cost);
  IterationCostFn fn = cost.AsFn();
  for (int e = 0; e < simulate; ++e) {
    const std::vector<size_t> rows =
        OfflineRows(o.lengths.size(), plan.engines, e, per_engine, kOfflineSeed);
    std::vector<Request> reqs(per_engine);
    for (int j = 0; j < per_engine; ++j) {
      const RequestLengths& l = o.lengths[rows[j]];
      reqs[j] = {j, 0.0, l.input_tokens, l.output_tokens};
    }
    EngineConfig cfg = plan.engine;
    cfg.record_iterations = record && e == 0;
    t.results.push_back(RunEngine(reqs, cfg, fn));
  }
  return t;
}

// Server: engine e gets its own Poisson stream of qps / engines; its window runs from the
// arrival that ends warm-up to the last arrival.
RunTotals RunPoisson(const DeploymentPlan& plan, const InferOptions& o, double qps, int per_engine,
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
    const size_t warm = static_cast<size_t>(kServerWarmupFrac * static_cast<double>(reqs.size()));
    cfg.window_start_s = reqs[std::min(warm, reqs.size() - 1)].arrival_s;
    cfg.window_end_s = reqs.back().arrival_s;
    t.window_start_s.push_back(cfg.window_start_s);
    t.window_end_s.push_back(cfg.window_end_s);
    t.results.push_back(RunEngine(reqs, cfg, fn));
  }
  return t;
}

int64_t RequestedPerEngine(const DeploymentPlan& plan, const InferOptions& o) {
  return std::max<int64_t>(1, (int64_t{o.requests} + plan.engines - 1) / plan.engines);
}

// Requests per engine the offline rules ask for, before RunRequestCap.
int64_t OfflinePerEngine(const DeploymentPlan& plan, const InferOptions& o, bool quick) {
  const int64_t share = (static_cast<int64_t>(o.lengths.size()) + plan.engines - 1) / plan.engines;
  // Quick (deployment search): long enough that KV-cache pressure and preemption reach their
  // steady state; 4 batches were not (a KV-starved TP1 looked 40% better than it runs).
  if (quick) return std::max(2048, 8 * plan.engine.max_batch);
  if (o.requests > 0) return RequestedPerEngine(plan, o);
  return std::max<int64_t>(share, kOfflineBatchesPerEngine * plan.engine.max_batch);
}

// Requests per engine of a run: `want`, within the run's cap `cap`; a full (not quick) run that
// gets fewer says so in `warnings`, since its numbers rest on fewer requests than asked.
int CapRequests(const InferOptions& o, bool quick, int64_t want, int64_t cap,
                std::vector<std::string>* warnings) {
  const int64_t per = std::min(want, cap);
  if (!quick && per < want) {
    warnings->push_back(
        "simulated " + std::to_string(per) + " requests per engine instead of " +
        std::to_string(want) +
        (o.requests > 0 ? " (--requests " + std::to_string(o.requests) + ")" : std::string()) +
        ": at a mean output of " + fmt::format("{:.0f}", MeanOutputTokens(o.lengths)) +
        " tokens, more would take minutes to simulate");
  }
  return static_cast<int>(per);
}

// Engines simulated in a run of `per_engine` requests each: as many as kSimRequestBudget and
// the run's cap allow, at least one.
int SimulatedEngines(const DeploymentPlan& plan, int per_engine, bool quick, int64_t cap) {
  if (quick) return 1;
  int64_t k = std::max<int64_t>(1, std::min(kSimRequestBudget, cap) / std::max(1, per_engine));
  return static_cast<int>(std::min<int64_t>(plan.engines, k));
}

bool Meets(const InferResult& r, double ttft, double tpot) {
  return r.stats.ttft_s.p99 <= ttft && r.stats.tpot_s.p99 <= tpot;
}

}  // namespace

std::vector<size_t> OfflineRows(size_t n, int engines, int e, int count, uint64_t seed) {
  NDT_CHECK(n > 0 && engines > 0 && e >= 0 && e < engines && count >= 0,
            "OfflineRows: bad arguments");
  std::vector<size_t> rows;
  rows.reserve(count);
  if (static_cast<uint64_t>(count) * static_cast<uint64_t>(engines) <= n) {
    // One pass: the engines' round-robin shares, every row at most once.
    for (int j = 0; j < count; ++j)
      rows.push_back(static_cast<size_t>(e) +
                     static_cast<size_t>(j) * static_cast<size_t>(engines));
    return rows;
  }
  Rng rng(Mix(seed, static_cast<uint64_t>(e)));
  while (rows.size() < static_cast<size_t>(count)) {  // a fresh Fisher-Yates permutation
    const size_t take = std::min(n, static_cast<size_t>(count) - rows.size());
    // Its first `take` places, run from the front: place j gets a uniform pick of the rows not
    // yet placed. Only the displaced places are stored (O(take), not O(n): a large dataset
    // over many simulated engines of a few requests each).
    std::unordered_map<size_t, size_t> moved;
    auto at = [&](size_t i) {
      auto it = moved.find(i);
      return it == moved.end() ? i : it->second;
    };
    for (size_t j = 0; j < take; ++j) {
      const size_t k = j + rng.Below(n - j);
      const size_t pick = at(k);
      moved[k] = at(j);
      rows.push_back(pick);
    }
  }
  return rows;
}

int64_t RunRequestCap(const DeploymentPlan& plan, const InferOptions& o, bool quick,
                      std::optional<double> engine_qps) {
  double in = 0, out = 0, n = 0;
  auto add = [&](int input, int output) {
    in += input;
    out += output;
    ++n;
  };
  for (const RequestLengths& l : o.lengths) add(l.input_tokens, l.output_tokens);
  for (const Request& r : o.trace) add(r.input_tokens, r.output_tokens);
  if (n == 0) return 1;
  in /= n;
  out /= n;
  // Sequences in flight in a full engine: as many as the batch and the KV cache hold.
  const double kv_tokens =
      static_cast<double>(plan.engine.kv_blocks) * static_cast<double>(plan.engine.block_tokens);
  const double full =
      std::clamp(kv_tokens / (in + out), 1.0, static_cast<double>(plan.engine.max_batch));
  double in_flight = full;
  if (engine_qps) {
    // Little's law: a request stays at least its output's decode steps, each at least a lone
    // sequence's, so at least rate x output x that step are in flight; a light load, one.
    IterationCostModel cost(plan.cost);
    BatchShape lone;
    lone.decode_seqs = 1;
    lone.decode_context_tokens = in;
    in_flight = std::clamp(*engine_qps * out * cost.Time(lone), 1.0, full);
  }
  double cap = std::min(kSimTokenBudget / out, kSimIterationBudget * in_flight / out);
  if (quick) cap /= kQuickBudgetDivisor;
  return std::max<int64_t>(1, static_cast<int64_t>(std::min(cap, 1e9)));
}

uint64_t Mix(uint64_t seed, uint64_t i) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void FillResult(const DeploymentPlan& plan, const RunTotals& t, Measure m, InferResult* r) {
  double tokens = 0, reqs = 0, busy = 0, batch_w = 0, kv_w = 0, makespan = 0, rate = 0;
  int64_t peak = 0, preempt = 0, sim_reqs = 0;
  std::vector<const RequestRecord*> recs;
  for (size_t e = 0; e < t.results.size(); ++e) {
    const EngineResult& x = t.results[e];
    tokens += static_cast<double>(x.output_tokens);
    reqs += static_cast<double>(x.requests.size());
    busy += x.busy_s;
    batch_w += x.batch_token_weighted;
    kv_w += x.kv_used_time_weighted;
    makespan = std::max(makespan, x.makespan_s);
    peak = std::max(peak, x.kv_peak_blocks);
    preempt += x.preemptions;
    sim_reqs += static_cast<int64_t>(x.requests.size());
    rate += EngineRate(t, e, m);
    const double from = m == Measure::kWindow ? t.window_start_s[e] : -1.0;
    for (const RequestRecord& q : x.requests) {
      if (q.arrival_s >= from) recs.push_back(&q);
    }
  }
  double k = static_cast<double>(t.results.size());
  double scale = static_cast<double>(plan.engines) / k;
  r->deployment = plan.dep;
  r->engines = plan.engines;
  r->engines_simulated = static_cast<int>(t.results.size());
  r->requests_simulated = sim_reqs;
  r->duration_s = makespan;
  if (m == Measure::kMakespan) {
    r->output_tokens_per_s = makespan > 0 ? tokens * scale / makespan : 0;
    r->requests_per_s = makespan > 0 ? reqs * scale / makespan : 0;
  } else {  // steady state: requests complete at the token rate over the mean output
    r->output_tokens_per_s = rate * scale;
    r->requests_per_s = tokens > 0 ? r->output_tokens_per_s * reqs / tokens : 0;
  }
  r->per_gpu_output_tokens_per_s = r->output_tokens_per_s / plan.dep.gpus_total;
  r->mean_batch = busy > 0 ? batch_w / busy : 0;
  double blocks = static_cast<double>(plan.engine.kv_blocks);
  r->kv_mean_use_frac = busy > 0 && blocks > 0 ? kv_w / busy / blocks : 0;
  r->kv_peak_use_frac = blocks > 0 ? static_cast<double>(peak) / blocks : 0;
  r->preemptions = static_cast<int64_t>(std::llround(static_cast<double>(preempt) * scale));
  r->stats = SummarizeRequests(recs);
}

InferResult Offline(const DeploymentPlan& plan, const InferOptions& o, bool quick) {
  InferResult r;
  const int64_t cap = RunRequestCap(plan, o, quick, std::nullopt);
  const int per = CapRequests(o, quick, OfflinePerEngine(plan, o, quick), cap, &r.warnings);
  const int sim = SimulatedEngines(plan, per, quick, cap);
  RunTotals t = RunOffline(plan, o, per, sim, o.record_trace && !quick);
  FillResult(plan, t, Measure::kSaturated, &r);
  r.qps = r.requests_per_s;
  if (o.record_trace && !quick && !t.results.empty()) {
    r.trace_iterations = t.results[0].iterations;
    r.trace_requests = t.results[0].requests;
  }
  return r;
}

InferResult AtRate(const DeploymentPlan& plan, const InferOptions& o, double qps, bool quick,
                   bool record, Measure m) {
  // MLPerf Server issues Poisson arrivals for at least min_duration: per engine, that many
  // seconds of its share of the rate (and enough requests for the p99 to see overload).
  const double engine_qps = qps / plan.engines;
  const double span =
      std::min<double>(std::ceil(engine_qps * kServerMinDurationS), kServerMaxPerEngine);
  int64_t want =
      quick ? std::max(1000, 4 * plan.engine.max_batch)
            : std::max({kServerMinPerEngine, kServerBatchesPerEngine * plan.engine.max_batch,
                        static_cast<int>(span)});
  if (o.requests > 0 && !quick) want = RequestedPerEngine(plan, o);
  InferResult r;
  const int64_t cap = RunRequestCap(plan, o, quick, engine_qps);
  const int per = CapRequests(o, quick, want, cap, &r.warnings);
  const int sim = SimulatedEngines(plan, per, quick, cap);
  RunTotals t = RunPoisson(plan, o, qps, per, sim, record);
  FillResult(plan, t, m, &r);
  r.qps = qps;
  if (record && !t.results.empty()) {
    r.trace_iterations = t.results[0].iterations;
    r.trace_requests = t.results[0].requests;
  }
  return r;
}

StatusOr<InferResult> SearchRate(const DeploymentPlan& plan, const InferOptions& o, double ttft,
                                 double tpot, bool quick, double capacity_rps, double hint_rps) {
  auto run = [&](double qps) { return AtRate(plan, o, qps, quick, false, Measure::kWindow); };
  const double lightest = capacity_rps / 100;  // the lowest rate searched
  std::optional<InferResult> best;             // the run at the highest rate that met the limits
  std::optional<InferResult> light;            // the run at `lightest`, once needed
  // Halves (*lo, hi) `steps` times. True if some rate missed the limits (the highest rate that
  // meets them lies below hi). A light load runs each request nearly alone, the costliest run
  // of all, so with `from_lightest` the lightest rate is run only once a rate missed and none
  // has met them yet: if it misses too, no rate does, and the search stops there.
  auto bisect = [&](int steps, double* lo, double hi, bool from_lightest) {
    bool missed = false;
    for (int i = 0; i < steps; ++i) {
      const double mid = 0.5 * (*lo + hi);
      InferResult r = run(mid);
      if (Meets(r, ttft, tpot)) {
        *lo = mid;
        best = std::move(r);
        continue;
      }
      hi = mid;
      missed = true;
      if (from_lightest && !best && !light) {
        light = run(lightest);
        if (!Meets(*light, ttft, tpot)) break;
      }
    }
    return missed;
  };
  double hi = capacity_rps;
  if (!quick && hint_rps * kHintLow > lightest) {
    // Coarse to fine: the full runs' highest rate lies near the quick search's (0.84x to 1.004x
    // for the catalog's Llama and Mixtral models on H100, server and interactive), so bisect
    // [0.75, 1.1] x hint first, and above it only if every rate there met the limits.
    double lo = std::min(hi, hint_rps) * kHintLow;
    const double top = std::min(hi, hint_rps * kHintHigh);
    const bool missed = bisect(kRefineSteps, &lo, top, false);
    if (!best) {
      InferResult r = run(lo);
      if (Meets(r, ttft, tpot)) best = std::move(r);
    }
    if (best) {
      if (!missed && top < hi) bisect(kRefineSteps, &lo, hi, false);
      return *std::move(best);
    }
    hi = lo;  // the highest rate is lower still: search below
  }
  double lo = lightest;
  bisect(quick ? 8 : kSearchSteps, &lo, hi, true);
  if (best) return *std::move(best);
  NDT_CHECK(light.has_value(), "SearchRate: no rate run");
  if (Meets(*light, ttft, tpot)) return *std::move(light);
  return Status::SloUnmet(
      "no request rate meets p99 TTFT <= " + fmt::format("{:g}", ttft) +
      " s and p99 TPOT <= " + fmt::format("{:g}", tpot) + " s with TP" +
      std::to_string(plan.dep.tp) + " PP" + std::to_string(plan.dep.pp) + " batch " +
      std::to_string(plan.dep.max_batch) + ": at " + fmt::format("{:.3g}", lightest) +
      " req/s p99 TTFT is " + fmt::format("{:.3g}", light->stats.ttft_s.p99) + " s and p99 TPOT " +
      fmt::format("{:.3g}", light->stats.tpot_s.p99) +
      " s; relax --ttft-p99/--tpot-p99, raise --tp, lower --max-batch or the precision");
}

}  // namespace ndt
