#include "report/infer_render.h"

#include <string>
#include <vector>

#include "report/interval_render.h"
#include "report/text.h"

namespace ndt {
namespace {

nlohmann::ordered_json Stats(const LatencyStats& s) {
  return {{"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"mean", s.mean}, {"max", s.max}};
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

Json InferJson(const InferView& v) {
  const TransformerSpec& m = v.model;
  const InferResult& r = v.result;
  const IntervalClass& iv = v.interval;
  const DeploymentInfo& d = r.deployment;
  nlohmann::ordered_json j;
  j["schema"] = "ndtwin.infer/1";
  j["ndtwin_version"] = NDT_VERSION;
  j["sku"] = v.sku;
  j["vms"] = v.vms;
  j["model"] = m.name;
  j["scenario"] = ScenarioName(r.scenario);
  j["seed"] = v.seed;
  j["output_tokens_per_s"] = r.output_tokens_per_s;
  j["output_tokens_per_s_interval"] = IntervalJson(iv, iv.OfRate(r.output_tokens_per_s));
  j["per_gpu_output_tokens_per_s"] = r.per_gpu_output_tokens_per_s;
  j["requests_per_s"] = r.requests_per_s;
  j["qps"] = r.qps;
  j["ttft_s"] = Stats(r.stats.ttft_s);
  // TTFT and TPOT were not measured in the validation data: their interval is the class's
  // tokens/s residuals applied to a time (1 / rate), and its basis says so.
  IntervalClass lat = iv;
  lat.basis += "; TTFT/TPOT not measured: the tokens/s residuals applied to a time (1/rate)";
  j["ttft_s"]["p99_interval"] = IntervalJson(lat, iv.OfTime(r.stats.ttft_s.p99));
  j["tpot_s"] = Stats(r.stats.tpot_s);
  j["tpot_s"]["p99_interval"] = IntervalJson(lat, iv.OfTime(r.stats.tpot_s.p99));
  j["e2e_s"] = Stats(r.stats.e2e_s);
  if (r.scenario != Scenario::kOffline) {
    j["slo"] = {{"ttft_p99_s", r.ttft_limit_s}, {"tpot_p99_s", r.tpot_limit_s}, {"met", r.slo_met}};
  }
  j["deployment"] = {
      {"tp", d.tp},
      {"pp", d.pp},
      {"ep", d.ep},
      {"replicas", d.replicas},
      {"gpus_used", d.gpus_used},
      {"gpus_total", d.gpus_total},
      {"max_batch", d.max_batch},
      {"max_num_tokens", d.max_num_tokens},
      {"weights", DtypeName(d.weights)},
      {"kv", DtypeName(d.kv)},
      {"chosen", d.chosen},
      {"stack", v.stack.empty() ? Json(nullptr) : Json(v.stack)},
      {"host_overlap", r.host_overlap},
      // TensorRT-LLM's capacity scheduler policy (serve/engine.h).
      {"scheduler", r.guaranteed_no_evict ? "guaranteed-no-evict" : "max-utilization"}};
  if (d.attention_dp) j["deployment"]["attention_dp"] = true;  // max_batch etc. per rank
  if (d.prefill_replicas > 0) {
    j["deployment"]["prefill_replicas"] = d.prefill_replicas;
    j["deployment"]["decode_replicas"] = d.decode_replicas;
  }
  j["kv_cache"] = {{"bytes_per_gpu", d.memory.kv_bytes_per_gpu},
                   {"weight_bytes_per_gpu", d.memory.weight_bytes_per_gpu},
                   {"tokens_per_replica", d.memory.kv_tokens_per_replica},
                   {"blocks_per_replica", d.memory.kv_blocks_per_replica},
                   {"mean_use", r.kv_mean_use_frac},
                   {"peak_use", r.kv_peak_use_frac},
                   {"preemptions", r.preemptions}};
  j["mean_batch"] = r.mean_batch;
  j["requests_simulated"] = r.requests_simulated;
  j["engines"] = r.engines;
  j["engines_simulated"] = r.engines_simulated;
  if (v.dataset.empty()) {
    j["dataset"] = nullptr;
  } else {
    j["dataset"] = v.dataset;
  }
  j["mean_input_tokens"] = r.mean_input_tokens;
  j["mean_output_tokens"] = r.mean_output_tokens;
  if (r.usd_per_million_tokens) {
    j["usd_per_million_tokens"] = *r.usd_per_million_tokens;
  } else {
    j["usd_per_million_tokens"] = nullptr;
  }
  if (r.caveat.empty()) {
    j["accuracy_caveat"] = nullptr;
  } else {
    j["accuracy_caveat"] = r.caveat;
  }
  return j;
}

std::string InferText(const InferView& v) {
  const TransformerSpec& m = v.model;
  const InferResult& r = v.result;
  const IntervalClass& iv = v.interval;
  TextOut p;
  const DeploymentInfo& d = r.deployment;
  auto ms = [](double s) { return s * 1e3; };
  p("Model:          %s (weights %s, KV %s)\n", m.name.c_str(), DtypeName(d.weights),
    DtypeName(d.kv));
  p("Cluster:        %d x %s = %d GPUs\n", v.vms, v.sku.c_str(), d.gpus_total);
  const std::string ep = d.attention_dp ? " (attention-DP: " + std::to_string(d.tp) +
                                              " ranks, experts EP" + std::to_string(d.ep) + ")"
                         : d.ep > 1 ? " (EP" + std::to_string(d.ep) + " inside TP)"
                                    : "";
  p("Deployment:     %d %s of TP%d x PP%d%s (%d GPUs used), max batch %d, max tokens "
    "%d%s%s%s%s\n",
    d.replicas, d.replicas == 1 ? "replica" : "replicas", d.tp, d.pp, ep.c_str(), d.gpus_used,
    d.max_batch, d.max_num_tokens, d.attention_dp ? " per rank" : "",
    r.guaranteed_no_evict ? ", guaranteed-no-evict scheduler" : "",
    d.chosen.empty() ? "" : "; chosen: ", Join(d.chosen).c_str());
  if (d.prefill_replicas > 0) {
    p("Disaggregated:  %d prefill replicas, %d decode replicas\n", d.prefill_replicas,
      d.decode_replicas);
  }
  p("Scenario:       %s", ScenarioName(r.scenario));
  if (r.scenario != Scenario::kOffline) {
    p(" at %.2f req/s (p99 limits: TTFT %.0f ms, TPOT %.0f ms%s)", r.qps, ms(r.ttft_limit_s),
      ms(r.tpot_limit_s), r.slo_met ? "" : "; not met");
  }
  p("\nRequests:       %s%smean input %.1f, mean output %.1f tokens; %lld simulated on %d of %d "
    "engines\n",
    v.dataset.c_str(), v.dataset.empty() ? "" : ", ", r.mean_input_tokens, r.mean_output_tokens,
    static_cast<long long>(r.requests_simulated), r.engines_simulated, r.engines);
  p("Throughput:     %.1f output tokens/s (%.1f per GPU), %.2f requests/s%s\n",
    r.output_tokens_per_s, r.per_gpu_output_tokens_per_s, r.requests_per_s,
    IntervalText(iv, iv.OfRate(r.output_tokens_per_s), "%.1f", "tokens/s").c_str());
  p("TTFT:           p50 %.1f ms, p90 %.1f ms, p99 %.1f ms%s\n", ms(r.stats.ttft_s.p50),
    ms(r.stats.ttft_s.p90), ms(r.stats.ttft_s.p99),
    IntervalText(iv, iv.OfTime(ms(r.stats.ttft_s.p99)), "%.1f", "ms p99").c_str());
  p("TPOT:           p50 %.2f ms, p90 %.2f ms, p99 %.2f ms%s\n", ms(r.stats.tpot_s.p50),
    ms(r.stats.tpot_s.p90), ms(r.stats.tpot_s.p99),
    IntervalText(iv, iv.OfTime(ms(r.stats.tpot_s.p99)), "%.2f", "ms p99").c_str());
  p("End to end:     p50 %.2f s, p90 %.2f s, p99 %.2f s\n", r.stats.e2e_s.p50, r.stats.e2e_s.p90,
    r.stats.e2e_s.p99);
  p("Batch:          mean %.1f sequences per iteration\n", r.mean_batch);
  p("KV cache:       %.1f GB per GPU (%lld tokens per replica), mean use %.0f%%, peak %.0f%%, "
    "%lld preemptions\n",
    d.memory.kv_bytes_per_gpu / 1e9, static_cast<long long>(d.memory.kv_tokens_per_replica),
    r.kv_mean_use_frac * 100, r.kv_peak_use_frac * 100, static_cast<long long>(r.preemptions));
  if (r.usd_per_million_tokens) {
    p("Cost:           $%.3f per million output tokens ($%.2f/h)\n", *r.usd_per_million_tokens,
      r.usd_per_hour);
  } else {
    p("Cost:           n/a (no price for this size)\n");
  }
  return p.take();
}

Trace InferTrace(const InferResult& r) {
  Trace t;
  t.title = "ndtwin infer: engine 0";
  t.tracks.push_back({0, 0, "engine 0", "iterations"});
  for (const IterationRecord& it : r.trace_iterations) {
    t.spans.push_back({0,
                       "iter b" + std::to_string(it.batch) + " p" +
                           std::to_string(it.prefill_tokens) + " d" +
                           std::to_string(it.decode_tokens),
                       "compute", it.start_s, it.dur_s});
  }
  // Requests on lanes: each goes to the lowest lane free at its arrival (deterministic).
  std::vector<double> lane_free;
  for (const RequestRecord& q : r.trace_requests) {
    size_t lane = 0;
    while (lane < lane_free.size() && lane_free[lane] > q.arrival_s) ++lane;
    if (lane == lane_free.size()) {
      if (lane_free.size() >= 256) continue;  // keep the file small
      lane_free.push_back(0);
      t.tracks.push_back({1, static_cast<int>(lane), "requests", "lane " + std::to_string(lane)});
    }
    lane_free[lane] = q.finish_s;
    int track = static_cast<int>(lane) + 1;
    std::string id = "req " + std::to_string(q.id);
    t.spans.push_back({track, id + " ttft", "prefill", q.arrival_s, q.ttft_s()});
    t.spans.push_back(
        {track, id + " decode", "decode", q.first_token_s, q.finish_s - q.first_token_s});
  }
  return t;
}

}  // namespace ndt
