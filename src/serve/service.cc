#include "serve/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "serve/cost.h"
#include "serve/scenario.h"

namespace ndt {
namespace {

// Offline deployments re-run in full after the quick screen (each run about 0.1-0.5 s).
constexpr size_t kRescoredCandidates = 3;
// Objectives within 0.5% are a tie: the smaller deployment, found first, keeps it.
constexpr double kTie = 1.005;
// The SLO search skips a candidate whose offline rate x this cannot beat the best found.
constexpr double kSloBoundSlack = 1.05;
// A server run completing under this fraction of the offered rate is overloaded.
constexpr double kOverloadFrac = 0.9;

constexpr int kDefaultMaxNumTokens = 8192;  // TensorRT-LLM's default max_num_tokens

struct Knobs {
  int tp = 1, pp = 1, max_batch = 256, max_num_tokens = kDefaultMaxNumTokens;
};

int MaxSeqTokens(const InferOptions& o) {
  int m = 1;
  for (const RequestLengths& l : o.lengths) m = std::max(m, l.input_tokens + l.output_tokens);
  for (const Request& r : o.trace) m = std::max(m, r.input_tokens + r.output_tokens);
  return m;
}

StatusOr<DeploymentPlan> MakeDeploymentPlan(const InferContext& ctx, const InferOptions& o,
                                            const Knobs& k) {
  DeploymentPlan p;
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
  if (const auto& fit = ctx.calibration->For(ctx.gpu->arch).serving; fit) {
    p.cost.overhead_s = fit->iteration_overhead_s;
    p.cost.overhead_per_seq_s = fit->overhead_per_seq_s;
  }
  p.cost.host_overlap = o.host_overlap;
  p.cost.overhead_reference_layers = ctx.params.host_overhead_reference_layers;
  const double launch_s = ctx.calibration->For(ctx.gpu->arch).kernel_overhead_s;
  if (o.cuda_graphs) {
    p.cost.cuda_graph_max_batch = ctx.params.cuda_graph_max_batch;
    p.cost.graph_launch_s = launch_s;
  }
  if (k.tp > 1 && ctx.comm.tp_allreduce_s) {
    auto fn = ctx.comm.tp_allreduce_s;
    int tp = k.tp;
    NvlinkPath path = ctx.comm.tp_path;
    path.launch_s = launch_s;
    const TpAllReduceImpl impl = path.bw_Bps > 0 ? o.tp_allreduce : TpAllReduceImpl::kNccl;
    const CustomAllReduceParams ar = ctx.params.custom_allreduce;
    p.cost.tp_allreduce_s = [fn, tp, path, impl, ar](double bytes, int tokens) {
      const TpAllReduceAlgo a = ChooseTpAllReduce(impl, tp, bytes, tokens, ar);
      return a == TpAllReduceAlgo::kNccl ? fn(tp, bytes) : CustomAllReduceTime(a, tp, bytes, path);
    };
  }
  if (k.pp > 1 && ctx.comm.pp_sends_s) {
    auto fn = ctx.comm.pp_sends_s;
    int tp = k.tp, pp = k.pp;
    p.cost.pp_sends_s = [fn, tp, pp](double bytes) { return fn(tp, pp, bytes); };
  }
  return p;
}

RunTotals RunTrace(const DeploymentPlan& plan, const InferOptions& o, bool record) {
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
  RunTotals t;
  t.engines = decode_engines;
  for (int e = 0; e < decode_engines; ++e) {
    std::vector<Request> mine;
    std::vector<size_t> index;
    for (size_t i = e; i < reqs.size(); i += decode_engines) {
      if (reqs[i].output_tokens < 2) continue;
      double move =
          ctx.comm.kv_transfer_s ? ctx.comm.kv_transfer_s(reqs[i].input_tokens * kv_token) : 0.0;
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

double Objective(const InferResult& r) { return r.output_tokens_per_s; }

// One deployment of the knob search.
struct Candidate {
  DeploymentPlan plan;
  InferResult quick;          // the quick offline run: no scenario runs faster on the plan
  double obj = -1;            // the scenario's objective; -1: misses the SLO, or pruned
  Status slo = Status::Ok();  // why it misses the SLO
  double slo_rps = 0;         // the quick search's highest rate within the SLO
};

// The chosen deployment and what the search already ran on it.
struct Choice {
  DeploymentPlan plan;
  double capacity_rps = 0;          // its quick offline request rate; 0: not run
  double slo_rps = 0;               // the quick search's highest rate within the SLO; 0: none
  std::optional<InferResult> full;  // offline: the full run that decided
};

// The first candidate (enumeration order puts the smaller deployment first) whose objective is
// within kTie of the best, so near-ties do not depend on the order of evaluation; -1 if none.
int PickBest(const std::vector<Candidate>& cands) {
  double best = -1;
  for (const Candidate& c : cands) best = std::max(best, c.obj);
  if (best < 0) return -1;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].obj >= 0 && cands[i].obj * kTie >= best) return static_cast<int>(i);
  }
  return -1;
}

// Server/interactive without a rate: each candidate's objective becomes its throughput at the
// highest rate within the p99 limits (a quick bisection). Candidates go best offline rate first,
// and one whose offline rate (times kSloBoundSlack, for the two runs' different request samples)
// cannot beat the best found is not searched: a Poisson stream never fills an engine more than
// offline does (serve/scenario.h; over the catalog's Llama models on H100 the SLO rate came to
// 0.26-1.017x the quick offline one). This keeps the search to a few of the 20 candidates.
void ScoreAtSlo(const InferOptions& o, double ttft, double tpot, std::vector<Candidate>* level) {
  std::vector<size_t> order(level->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (*level)[a].obj > (*level)[b].obj; });
  double best = -1;
  for (size_t i : order) {
    Candidate& c = (*level)[i];
    const double bound = c.obj * kSloBoundSlack;
    c.obj = -1;
    if (best > 0 && bound * kTie < best) continue;
    StatusOr<InferResult> r = SearchRate(c.plan, o, ttft, tpot, true, c.quick.requests_per_s, 0);
    if (!r.ok()) {
      c.slo = r.status();
      continue;
    }
    c.obj = Objective(*r);
    c.slo_rps = r->qps;
    best = std::max(best, c.obj);
  }
}

// Chooses TP, PP, the batch and the token budget not given in `o` (a search over powers of two;
// PP only when nothing fits with fewer stages).
StatusOr<Choice> Choose(const InferContext& ctx, const InferOptions& o, double ttft, double tpot) {
  const bool latency = o.scenario != Scenario::kOffline;
  std::vector<int> tps, pps, batches;
  const int domain = std::min(ctx.sku->nvlink_domain_gpus, ctx.sku->gpus * o.vms);
  if (o.tp > 0)
    tps = {o.tp};
  else
    for (int t = 1; t <= std::min(domain, 8); t *= 2) tps.push_back(t);
  if (o.pp > 0)
    pps = {o.pp};
  else
    pps = {1, 2, 4, 8};
  if (o.max_batch > 0)
    batches = {o.max_batch};
  else
    batches = {128, 256, 512, 1024, 2048};
  const int mnt = o.max_num_tokens > 0 ? o.max_num_tokens : kDefaultMaxNumTokens;
  const bool search = tps.size() * batches.size() > 1 || o.pp == 0;

  Status fit_error = Status::Ok(), slo_error = Status::Ok();
  const int total_gpus = ctx.sku->gpus * o.vms;
  for (int pp : pps) {
    std::vector<Candidate> level;  // PP fixed; TP, then batch, ascending
    for (int tp : tps) {
      // A searched (not given) shape larger than the cluster is no candidate; its error would
      // hide the real one (weights that do not fit).
      if ((o.tp == 0 || o.pp == 0) && tp * pp > total_gpus && !fit_error.ok()) continue;
      for (int b : batches) {
        StatusOr<DeploymentPlan> plan = MakeDeploymentPlan(ctx, o, {tp, pp, b, mnt});
        if (!plan.ok()) {
          fit_error = plan.status();
          break;  // a larger batch does not change feasibility of (tp, pp)
        }
        level.push_back({*plan, {}, -1, Status::Ok(), 0});
      }
    }
    if (level.empty()) continue;
    if (!search) return Choice{level[0].plan, 0, 0, std::nullopt};
    if (o.progress) {
      o.progress("infer: scoring " + std::to_string(level.size()) + " deployments with pp " +
                 std::to_string(pp));
    }
    for (Candidate& c : level) {
      c.quick = Offline(c.plan, o, true);
      c.obj = Objective(c.quick);
    }
    if (latency && o.qps <= 0 && o.trace.empty()) {
      ScoreAtSlo(o, ttft, tpot, &level);
      for (const Candidate& c : level) {
        if (slo_error.ok() && !c.slo.ok()) slo_error = c.slo;
      }
    }
    const int best = PickBest(level);
    if (best < 0) continue;  // all miss the SLO: PP may help
    Choice choice{level[best].plan, level[best].quick.requests_per_s, level[best].slo_rps,
                  std::nullopt};
    if (latency || !o.trace.empty() || level.size() < 2 || o.disaggregate_prefill > 0) {
      return choice;
    }
    // The quick runs rank candidates on a few batches' worth of requests, which under-rates
    // large batches (they barely reach steady state); the best few are re-run in full and the
    // full throughput decides (llama2-70b on one H100 VM: TP2 batch 256 ranked first, TP4 batch
    // 1024 is 21% faster in full).
    std::vector<size_t> order(level.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return level[a].obj > level[b].obj; });
    if (o.progress) {
      o.progress("infer: running the best " +
                 std::to_string(std::min(order.size(), kRescoredCandidates)) + " in full");
    }
    for (size_t k = 0; k < order.size() && k < kRescoredCandidates; ++k) {
      const Candidate& c = level[order[k]];
      InferResult r = Offline(c.plan, o, false);
      if (!choice.full || Objective(r) > Objective(*choice.full) * kTie) {
        choice = {c.plan, c.quick.requests_per_s, 0, r};
      }
    }
    return choice;
  }
  if (slo_error.ok() && o.tp == 0 && o.pp == 0 && !fit_error.ok()) {
    // Every TP x PP the cluster offers was tried: more parallelism is not the fix.
    return fit_error.WithMessage(fit_error.Reason() + "; no TP x PP on " +
                                 std::to_string(total_gpus) +
                                 " GPUs holds it: add --vms, or use lower --weights (fp8, fp4)");
  }
  return slo_error.ok() ? fit_error : slo_error;
}

}  // namespace

Status CheckServedContext(const TransformerSpec& m, const InferOptions& o) {
  const int64_t ctx = m.served_context();
  if (ctx <= 0) return Status::Ok();
  int64_t over = 0, all = 0, longest = 0;
  auto count = [&](int64_t tokens) {
    ++all;
    if (tokens > ctx) ++over;
    longest = std::max(longest, tokens);
  };
  if (o.trace.empty()) {
    for (const RequestLengths& l : o.lengths) count(int64_t{l.input_tokens} + l.output_tokens);
  } else {
    for (const Request& r : o.trace) count(int64_t{r.input_tokens} + r.output_tokens);
  }
  if (over == 0) return Status::Ok();
  const std::string what =
      all == 1 ? "a request of " + std::to_string(longest) + " tokens (input + output) is"
               : std::to_string(over) + " of " + std::to_string(all) +
                     " requests (the longest: " + std::to_string(longest) +
                     " tokens, input + output) are";
  return Status::InvalidInput(what + " longer than the " + std::to_string(ctx) + "-token context " +
                              m.name +
                              " serves; shorten them (--input-len/--output-len, "
                              "--output-tokens-mean, or filter the dataset) or use a model with "
                              "a longer context");
}

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

namespace {

// --ep applies to a mixture-of-experts model and must divide its experts.
Status CheckExpertParallel(const TransformerSpec& m, const InferOptions& o) {
  if (o.ep <= 1) return Status::Ok();
  if (!m.is_moe()) {
    return Status::InvalidInput("--ep " + std::to_string(o.ep) +
                                " applies to mixture-of-experts models; " + m.name +
                                " is dense: drop --ep");
  }
  if (m.moe.experts % o.ep != 0) {
    return Status::InvalidInput("--ep " + std::to_string(o.ep) + " does not divide the " +
                                std::to_string(m.moe.experts) + " experts of " + m.name +
                                "; use a divisor of " + std::to_string(m.moe.experts));
  }
  return Status::Ok();
}

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

// The cost per hour and per million output tokens (sizes with a price), and the requests' mean
// lengths.
void FillCostAndLengths(const InferContext& ctx, const InferOptions& o, InferResult* result) {
  InferResult& r = *result;
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
}

}  // namespace

StatusOr<InferResult> RunInference(const InferContext& given, const InferOptions& o) {
  NDT_CHECK(given.sku && given.gpu && given.model && given.calibration,
            "RunInference: null context");
  // Serving kernels run at the serving fit of the arch (compute.h ServingCalibration).
  const ComputeCalibration serving = ServingCalibration(*given.calibration);
  InferContext ctx = given;
  ctx.calibration = &serving;
  NDT_CHECK(!o.lengths.empty() || !o.trace.empty(), "RunInference: no requests");
  NDT_RETURN_IF_ERROR(CheckServedContext(*ctx.model, o));
  NDT_RETURN_IF_ERROR(CheckExpertParallel(*ctx.model, o));
  const bool latency = o.scenario != Scenario::kOffline;
  double ttft = o.ttft_p99_s, tpot = o.tpot_p99_s;
  if (ttft <= 0) ttft = o.scenario == Scenario::kInteractive ? 0.45 : 2.0;
  if (tpot <= 0) tpot = o.scenario == Scenario::kInteractive ? 0.040 : 0.200;

  NDT_ASSIGN_OR_RETURN(Choice choice, Choose(ctx, o, ttft, tpot));
  DeploymentPlan& plan = choice.plan;
  if (o.tp == 0) plan.dep.chosen.push_back("tp");
  if (o.pp == 0) plan.dep.chosen.push_back("pp");
  if (o.max_batch == 0) plan.dep.chosen.push_back("max_batch");
  if (o.max_num_tokens == 0) plan.dep.chosen.push_back("max_num_tokens");
  auto capacity_rps = [&] {
    return choice.capacity_rps > 0 ? choice.capacity_rps : Offline(plan, o, true).requests_per_s;
  };

  InferResult r;
  if (o.disaggregate_prefill > 0) {
    NDT_ASSIGN_OR_RETURN(r, RunDisaggregatedScenario(plan, ctx, o, latency));
  } else if (!o.trace.empty()) {
    RunTotals t = RunTrace(plan, o, o.record_trace);
    FillResult(plan, t, Measure::kMakespan, &r);
    r.qps = r.requests_per_s;
    if (o.record_trace && !t.results.empty()) {
      r.trace_iterations = t.results[0].iterations;
      r.trace_requests = t.results[0].requests;
    }
  } else if (!latency) {
    if (choice.full) {
      r = *choice.full;
      r.deployment = plan.dep;  // with the chosen knobs marked
    } else {
      r = Offline(plan, o, false);
    }
  } else if (o.qps > 0) {
    // Beyond capacity the queue only grows: measure the engines' saturated rate, as offline.
    const bool over = o.qps > capacity_rps();
    r = AtRate(plan, o, o.qps, false, o.record_trace,
               over ? Measure::kSaturated : Measure::kWindow);
    if (r.requests_per_s < kOverloadFrac * o.qps) {
      r.warnings.push_back("--qps " + fmt::format("{:.10g}", o.qps) +
                           " is more than the deployment completes (" +
                           fmt::format("{:.2f}", r.requests_per_s) +
                           " requests/s): its queue grows all run, so latencies depend on the "
                           "run's length; omit --qps to find the highest rate within the p99 "
                           "limits");
    }
  } else {
    NDT_ASSIGN_OR_RETURN(r, SearchRate(plan, o, ttft, tpot, false, capacity_rps(), choice.slo_rps));
    if (o.record_trace) r = AtRate(plan, o, r.qps, false, true, Measure::kWindow);
  }
  r.scenario = o.scenario;
  r.caveat = ctx.calibration->For(ctx.gpu->arch).serving_caveat;
  r.host_overlap = o.host_overlap;
  r.ttft_limit_s = latency ? ttft : 0;
  r.tpot_limit_s = latency ? tpot : 0;
  FillCostAndLengths(ctx, o, &r);
  return r;
}

}  // namespace ndt
