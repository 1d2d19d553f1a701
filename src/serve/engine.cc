#include "serve/engine.h"

#include <algorithm>
#include <deque>

#include "core/check.h"

namespace ndt {
namespace {

enum class Phase { kPending, kWaiting, kPrefill, kDecode, kDone };

struct State {
  Phase phase = Phase::kPending;
  int computed = 0;    // tokens whose K/V are in the cache
  int prompt = 0;      // tokens to compute before the next output token (input + recomputed)
  int generated = 0;   // output tokens produced so far
  int64_t blocks = 0;  // KV blocks held
  int chunk = 0;       // prompt tokens scheduled in the current iteration
};

int64_t BlocksFor(int64_t tokens, int block_tokens) {
  return (tokens + block_tokens - 1) / block_tokens;
}

}  // namespace

EngineResult RunEngine(const std::vector<Request>& requests, const EngineConfig& config,
                       const IterationCostFn& cost) {
  NDT_CHECK(config.max_batch >= 1 && config.max_num_tokens >= 1 && config.block_tokens >= 1,
            "RunEngine: bad config");
  const int n = static_cast<int>(requests.size());
  const int bt = config.block_tokens;
  EngineResult res;
  res.requests.resize(n);
  std::vector<State> st(n);
  for (int i = 0; i < n; ++i) {
    const Request& r = requests[i];
    NDT_CHECK(BlocksFor(r.input_tokens + r.output_tokens, bt) <= config.kv_blocks,
              "RunEngine: a request does not fit in the KV cache");
    res.requests[i] = {r.id, r.arrival_s, 0, 0, r.input_tokens, r.output_tokens, 0};
    st[i].prompt = r.input_tokens;
  }
  std::deque<int> waiting;
  std::vector<int> running;  // admission order
  std::vector<int> decoders, prefillers;
  running.reserve(config.max_batch);
  int64_t free_blocks = config.kv_blocks;
  int next_arrival = 0, done = 0;
  const int max_chunk =
      config.max_chunk_tokens > 0 ? config.max_chunk_tokens : config.max_num_tokens;
  double now = 0;
  BatchShape shape;

  auto preempt_last = [&]() {
    int v = running.back();
    running.pop_back();
    State& s = st[v];
    free_blocks += s.blocks;
    s.blocks = 0;
    s.computed = 0;
    s.prompt = requests[v].input_tokens + s.generated;
    s.phase = Phase::kWaiting;
    s.chunk = 0;
    ++res.requests[v].preemptions;
    ++res.preemptions;
    waiting.push_front(v);
  };

  while (done < n) {
    while (next_arrival < n && requests[next_arrival].arrival_s <= now) {
      st[next_arrival].phase = Phase::kWaiting;
      waiting.push_back(next_arrival++);
    }
    if (running.empty() && waiting.empty()) {
      now = requests[next_arrival].arrival_s;
      continue;
    }
    int budget = config.max_num_tokens;
    shape.prefill_tokens = 0;
    shape.decode_seqs = 0;
    shape.decode_context_tokens = 0;
    shape.chunks.clear();
    decoders.clear();
    prefillers.clear();
    // 1. Decode steps of running sequences, oldest first; grow the cache, preempting the newest.
    for (size_t k = 0; k < running.size() && budget > 0; ++k) {
      int i = running[k];
      State& s = st[i];
      if (s.phase != Phase::kDecode) continue;
      int64_t need = std::max<int64_t>(0, BlocksFor(s.computed + 1, bt) - s.blocks);
      while (need > free_blocks && running.back() != i) preempt_last();
      if (need > free_blocks) {  // only i itself is left to give back
        preempt_last();
        break;
      }
      free_blocks -= need;
      s.blocks += need;
      --budget;
      decoders.push_back(i);
      ++shape.decode_seqs;
      shape.decode_context_tokens += s.computed + 1;
    }
    // 2. Prompt chunks of sequences already admitted (their blocks are reserved).
    for (int i : running) {
      State& s = st[i];
      if (s.phase != Phase::kPrefill || budget == 0) continue;
      s.chunk = std::min({budget, s.prompt - s.computed, max_chunk});
      budget -= s.chunk;
      prefillers.push_back(i);
    }
    // 3. Admit waiting requests: a batch slot, token budget, and blocks for the whole prompt.
    while (!waiting.empty() && budget > 0 && static_cast<int>(running.size()) < config.max_batch) {
      int i = waiting.front();
      State& s = st[i];
      const int whole = requests[i].input_tokens + requests[i].output_tokens;
      int64_t need = BlocksFor(config.guaranteed_no_evict ? whole : s.prompt, bt);
      if (need > free_blocks) break;
      waiting.pop_front();
      free_blocks -= need;
      s.blocks = need;
      running.push_back(i);
      if (requests[i].prefilled && res.requests[i].preemptions == 0) {
        s.computed = s.prompt;  // K/V transferred; the first token came with them
        s.generated = 1;
        s.phase = Phase::kDecode;
        res.requests[i].first_token_s = requests[i].arrival_s;
        continue;
      }
      s.phase = Phase::kPrefill;
      s.chunk = std::min({budget, s.prompt, max_chunk});
      budget -= s.chunk;
      prefillers.push_back(i);
    }
    for (int i : prefillers) {
      shape.prefill_tokens += st[i].chunk;
      shape.chunks.push_back({st[i].chunk, st[i].computed + st[i].chunk});
    }
    if (shape.tokens() == 0) {
      bool admitted = !running.empty();
      if (admitted) continue;  // prefilled requests just admitted decode next iteration
      NDT_CHECK(next_arrival < n, "RunEngine: no progress possible (KV cache too small)");
      now = std::max(now, requests[next_arrival].arrival_s);
      continue;
    }
    const bool saturated = !waiting.empty();
    double dur = cost(shape);
    int batch = static_cast<int>(decoders.size() + prefillers.size());
    int64_t used = config.kv_blocks - free_blocks;
    if (config.record_iterations) {
      res.iterations.push_back({now, dur, batch, shape.prefill_tokens, shape.decode_seqs, used});
    }
    now += dur;
    ++res.num_iterations;
    res.busy_s += dur;
    res.batch_token_weighted += batch * dur;
    res.kv_used_time_weighted += static_cast<double>(used) * dur;
    res.kv_peak_blocks = std::max(res.kv_peak_blocks, used);
    // 4. Results of the iteration.
    auto emit = [&](int i) {
      State& s = st[i];
      ++s.generated;
      ++res.output_tokens;
      if (now > config.window_start_s && now <= config.window_end_s) ++res.window_tokens;
      if (s.generated == 1) res.requests[i].first_token_s = now;
      if (s.generated >= requests[i].output_tokens) {
        s.phase = Phase::kDone;
        res.requests[i].finish_s = now;
        free_blocks += s.blocks;
        s.blocks = 0;
        ++done;
      }
    };
    for (int i : decoders) {
      ++st[i].computed;
      emit(i);
    }
    for (int i : prefillers) {
      State& s = st[i];
      s.computed += s.chunk;
      s.chunk = 0;
      if (s.computed == s.prompt) {
        s.phase = Phase::kDecode;
        emit(i);
      }
    }
    if (res.warm_s == 0 && done >= config.max_batch) {
      res.warm_s = now;
      res.warm_tokens = res.output_tokens;
    }
    if (saturated) {
      res.saturated_until_s = now;
      res.saturated_tokens = res.output_tokens;
    }
    running.erase(std::remove_if(running.begin(), running.end(),
                                 [&](int i) { return st[i].phase == Phase::kDone; }),
                  running.end());
  }
  res.makespan_s = now;
  return res;
}

}  // namespace ndt
