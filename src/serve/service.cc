#include "serve/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "serve/cost.h"
#include "serve/disaggregate.h"
#include "serve/knob_search.h"
#include "serve/scenario.h"

namespace ndt {
namespace {

// A server run completing under this fraction of the offered rate is overloaded.
constexpr double kOverloadFrac = 0.9;

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

// --attention-dp: an MoE model (its experts are what the ranks share), a group of >= 2 GPUs
// whose size divides the experts and equals --ep if given; one stage, colocated.
Status CheckAttentionDp(const TransformerSpec& m, const InferOptions& o) {
  if (!o.attention_dp) return Status::Ok();
  const std::string flag = "--attention-dp";
  if (!m.is_moe()) {
    return Status::InvalidInput(flag +
                                " splits a mixture-of-experts model's experts over GPUs "
                                "that run attention on their own requests; " +
                                m.name +
                                " is dense, and replicas (--tp 1) already run it data-parallel: "
                                "drop " +
                                flag);
  }
  if (o.tp == 1) {
    return Status::InvalidInput(flag +
                                " needs a group of ranks: use --tp 2 or more (the ranks; "
                                "TensorRT-LLM's tp_size with enable_attention_dp), or omit --tp");
  }
  if (o.ep > 1 && o.tp > 0 && o.ep != o.tp) {
    return Status::InvalidInput(flag + " splits the experts over the whole group (EP = TP): --ep " +
                                std::to_string(o.ep) + " differs from --tp " +
                                std::to_string(o.tp) + "; drop --ep or set it to " +
                                std::to_string(o.tp));
  }
  if (o.tp > 0 && m.moe.experts % o.tp != 0) {
    return Status::InvalidInput(flag + " at --tp " + std::to_string(o.tp) + " splits the " +
                                std::to_string(m.moe.experts) + " experts of " + m.name +
                                " unevenly; use a --tp that divides them");
  }
  if (o.pp > 1) {
    return Status::InvalidInput(flag + " with --pp > 1 is not modelled; use --pp 1");
  }
  if (o.disaggregate_prefill > 0) {
    return Status::InvalidInput(flag + " with --disaggregate is not modelled; drop one of them");
  }
  return Status::Ok();
}

// --ep applies to a mixture-of-experts model and must divide its experts.
Status CheckExpertParallel(const TransformerSpec& m, const InferOptions& o) {
  NDT_RETURN_IF_ERROR(CheckAttentionDp(m, o));
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

// A server run at a rate within the deployment's capacity that completed less than
// kOverloadFrac of it: its requests all arrived before the engines reached steady state (a
// request's decode outlasts the arrivals of a small --requests: Llama 2 70B on 8 H200s, 64
// requests at 10 req/s arrive within ~6 s and each takes ~4 s), so the window's throughput is a
// filling engine's, and not an overload (its queue does not grow).
std::string ShortRunWarning(const InferOptions& o, const InferResult& r, double capacity_rps) {
  return fmt::format(
      "{} requests at {:.4g} req/s end before the engines reach steady state: {:.2f} requests/s "
      "completed while they filled, below the rate run and the deployment's capacity (~{:.4g} "
      "req/s offline); raise --requests (or omit it) for steady-state throughput and latencies",
      r.requests_simulated, r.qps > 0 ? r.qps : o.qps, r.requests_per_s, capacity_rps);
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
  if (plan.dep.attention_dp && !o.attention_dp) plan.dep.chosen.push_back("attention_dp");
  if (o.pp == 0) plan.dep.chosen.push_back("pp");
  if (o.max_batch == 0) plan.dep.chosen.push_back("max_batch");
  if (o.max_num_tokens == 0) plan.dep.chosen.push_back("max_num_tokens");
  auto capacity_rps = [&] {
    return choice.capacity_rps > 0 ? choice.capacity_rps : Offline(plan, o, true).requests_per_s;
  };

  InferResult r;
  bool overloaded = false;  // a given --qps beyond what the deployment completes
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
    if (!over && o.requests > 0 && r.requests_per_s < kOverloadFrac * o.qps) {
      // A rate within capacity, completed at less: a short run, not an overload (see below).
      r.warnings.push_back(ShortRunWarning(o, r, capacity_rps()));
    } else if (r.requests_per_s < kOverloadFrac * o.qps) {
      overloaded = true;
      r.warnings.push_back("--qps " + fmt::format("{:.10g}", o.qps) +
                           " is more than the deployment completes (" +
                           fmt::format("{:.2f}", r.requests_per_s) +
                           " requests/s): its queue grows all run, so latencies depend on the "
                           "run's length; omit --qps to find the highest rate within the p99 "
                           "limits");
    }
  } else if (choice.full) {  // the knob search's own full rate search (a small --requests)
    r = *choice.full;
    r.deployment = plan.dep;  // with the chosen knobs marked
    if (o.record_trace) r = AtRate(plan, o, r.qps, false, true, Measure::kWindow);
  } else {
    NDT_ASSIGN_OR_RETURN(r, SearchRate(plan, o, ttft, tpot, false, capacity_rps(), choice.slo_rps));
    if (o.record_trace) r = AtRate(plan, o, r.qps, false, true, Measure::kWindow);
  }
  if (latency && o.qps <= 0 && o.trace.empty() && o.disaggregate_prefill == 0 &&
      r.requests_per_s < kOverloadFrac * r.qps) {
    // The searched rate meets the limits, so its engines keep up: completing less means the run
    // ended while they were still filling (a small --requests).
    r.warnings.push_back(ShortRunWarning(o, r, capacity_rps()));
  }
  r.scenario = o.scenario;
  r.caveat = ctx.calibration->For(ctx.gpu->arch).serving_caveat;
  r.host_overlap = o.host_overlap;
  r.guaranteed_no_evict = o.guaranteed_no_evict;
  r.ttft_limit_s = latency ? ttft : 0;
  r.tpot_limit_s = latency ? tpot : 0;
  if (latency) {
    // A given rate (or trace, or disaggregated run) is not searched: its p99s may exceed the
    // limits the report prints beside them, which the user should not read as met.
    std::string missed;
    auto as_time = [](double s) {
      return s >= 1 ? fmt::format("{:.4g} s", s) : fmt::format("{:.4g} ms", s * 1e3);
    };
    auto check = [&](const char* flag, const char* what, double p99, double limit) {
      if (p99 <= limit) return;
      missed += fmt::format("{}p99 {} {} is above the {} limit of {}", missed.empty() ? "" : ", ",
                            what, as_time(p99), flag, as_time(limit));
    };
    check("--ttft-p99", "TTFT", r.stats.ttft_s.p99, ttft);
    check("--tpot-p99", "TPOT", r.stats.tpot_s.p99, tpot);
    r.slo_met = missed.empty();
    // An overloaded --qps has said so already (its latencies grow with the run).
    if (!r.slo_met && !overloaded) {
      r.warnings.push_back(missed + " at " + fmt::format("{:.4g}", r.qps) +
                           " req/s: the limits are searched for only without --qps, "
                           "--trace-file and --disaggregate; omit --qps to find the highest "
                           "rate within them");
    }
  }
  FillCostAndLengths(ctx, o, &r);
  return r;
}

}  // namespace ndt
