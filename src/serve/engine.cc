#include "serve/engine.h"

#include <algorithm>
#include <deque>
#include <tuple>

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
  int output = 0;      // output tokens to produce (the request's, kept here beside the rest)
};

// One scheduler with its own requests and KV cache: the engine, or one attention-DP rank.
struct Pool {
  std::deque<int> waiting;   // assigned, not admitted (FIFO; preempted ones in front)
  std::vector<int> running;  // admission order
  int64_t free_blocks = 0;
  int prefilling = 0;  // running requests in Phase::kPrefill
  int active() const { return static_cast<int>(waiting.size() + running.size()); }
};

int64_t BlocksFor(int64_t tokens, int block_tokens) {
  return (tokens + block_tokens - 1) / block_tokens;
}

}  // namespace

std::vector<int> AssignAttentionDpRanks(const std::vector<int>& input_tokens,
                                        const std::vector<int>& active) {
  const int ranks = static_cast<int>(active.size());
  const int n = static_cast<int>(input_tokens.size());
  std::vector<int> out(n, -1);
  if (n == 0 || ranks == 0) return out;
  int64_t total = 0;
  int busiest = 0;
  for (int a : active) {
    total += a;
    busiest = std::max(busiest, a);
  }
  const int expected = std::max(static_cast<int>((total + n + ranks - 1) / ranks), busiest);
  // Heap entries (context tokens added, requests still to add, rank), smallest first.
  std::vector<std::tuple<int64_t, int, int>> open;
  for (int r = 0; r < ranks; ++r) {
    if (expected - active[r] > 0) open.emplace_back(0, expected - active[r], r);
  }
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return input_tokens[a] > input_tokens[b]; });
  for (int i : order) {
    if (open.empty()) break;
    auto it = std::min_element(open.begin(), open.end());
    auto& [tokens, left, rank] = *it;
    out[i] = rank;
    tokens += input_tokens[i];
    if (--left == 0) open.erase(it);
  }
  return out;
}

EngineResult RunEngine(const std::vector<Request>& requests, const EngineConfig& config,
                       const IterationCostFn& cost) {
  NDT_CHECK(config.max_batch >= 1 && config.max_num_tokens >= 1 && config.block_tokens >= 1,
            "RunEngine: bad config");
  const int ranks = std::max(1, config.attention_dp_ranks);
  NDT_CHECK(config.max_batch % ranks == 0 && config.max_num_tokens % ranks == 0 &&
                config.kv_blocks % ranks == 0,
            "RunEngine: attention-DP totals not divisible by the ranks");
  const int rank_batch = config.max_batch / ranks;
  const int rank_tokens = config.max_num_tokens / ranks;
  const int64_t rank_blocks = config.kv_blocks / ranks;
  const int n = static_cast<int>(requests.size());
  const int bt = config.block_tokens;
  EngineResult res;
  res.requests.resize(n);
  std::vector<State> st(n);
  for (int i = 0; i < n; ++i) {
    const Request& r = requests[i];
    NDT_CHECK(BlocksFor(r.input_tokens + r.output_tokens, bt) <= rank_blocks,
              "RunEngine: a request does not fit in the KV cache");
    res.requests[i] = {r.id, r.arrival_s, 0, 0, r.input_tokens, r.output_tokens, 0};
    st[i].prompt = r.input_tokens;
    st[i].output = r.output_tokens;
  }
  std::vector<Pool> pools(ranks);
  for (Pool& p : pools) {
    p.running.reserve(rank_batch);
    p.free_blocks = rank_blocks;
  }
  std::deque<int> arrived;  // attention-DP: arrived, not yet assigned to a rank
  std::vector<int> decoders, prefillers, rank_of;
  std::vector<int> fetch, fetch_tokens, active(ranks);
  if (ranks > 1) rank_of.assign(n, 0);
  int next_arrival = 0, done = 0;
  const int max_chunk =
      config.max_chunk_tokens > 0 ? config.max_chunk_tokens : config.max_num_tokens;
  double now = 0;
  BatchShape shape;

  auto preempt_last = [&](Pool& pool) {
    int v = pool.running.back();
    pool.running.pop_back();
    State& s = st[v];
    pool.free_blocks += s.blocks;
    if (s.phase == Phase::kPrefill) --pool.prefilling;
    s.blocks = 0;
    s.computed = 0;
    s.prompt = requests[v].input_tokens + s.generated;
    s.phase = Phase::kWaiting;
    s.chunk = 0;
    ++res.requests[v].preemptions;
    ++res.preemptions;
    pool.waiting.push_front(v);
  };

  while (done < n) {
    while (next_arrival < n && requests[next_arrival].arrival_s <= now) {
      st[next_arrival].phase = Phase::kWaiting;
      if (ranks == 1) {
        pools[0].waiting.push_back(next_arrival++);
      } else {
        arrived.push_back(next_arrival++);
      }
    }
    // Attention-DP: fetch up to the group's free request slots and assign each to a rank for
    // its lifetime (serve/engine.h, AssignAttentionDpRanks).
    if (ranks > 1 && !arrived.empty()) {
      int total = 0;
      for (int r = 0; r < ranks; ++r) total += active[r] = pools[r].active();
      // With no request active the executor blocks on its empty queue and returns the first
      // that arrives alone (_get_from_request_queue); the rest wait for the next iteration.
      const int take =
          std::min(static_cast<int>(arrived.size()), total == 0 ? 1 : ranks * rank_batch - total);
      fetch.assign(arrived.begin(), arrived.begin() + std::max(0, take));
      fetch_tokens.clear();
      for (int i : fetch) fetch_tokens.push_back(requests[i].input_tokens);
      std::vector<int> to = AssignAttentionDpRanks(fetch_tokens, active);
      for (size_t k = 0; k < fetch.size(); ++k) {
        NDT_CHECK(to[k] >= 0, "RunEngine: attention-DP assignment left a request out");
        rank_of[fetch[k]] = to[k];
        pools[to[k]].waiting.push_back(fetch[k]);
        arrived.pop_front();
      }
    }
    bool idle = arrived.empty();
    for (const Pool& p : pools) idle = idle && p.running.empty() && p.waiting.empty();
    if (idle) {
      now = requests[next_arrival].arrival_s;
      continue;
    }
    shape.prefill_tokens = 0;
    shape.decode_seqs = 0;
    shape.decode_context_tokens = 0;
    shape.chunks.clear();
    shape.ranks.clear();
    decoders.clear();
    prefillers.clear();
    bool saturated = !arrived.empty();
    for (int r = 0; r < ranks; ++r) {
      Pool& pool = pools[r];
      const size_t first_prefiller = prefillers.size();
      RankLoad load;
      int64_t context_tokens = 0;  // exact in an integer; the double sum of the same is too
      int budget = rank_tokens;
      // 1. Decode steps of running sequences, oldest first; grow the cache, preempting the
      // newest.
      for (size_t k = 0; k < pool.running.size() && budget > 0; ++k) {
        int i = pool.running[k];
        State& s = st[i];
        if (s.phase != Phase::kDecode) continue;
        // The cache grows only when the next token crosses a block boundary.
        const int64_t need =
            s.computed + 1 > s.blocks * bt ? BlocksFor(s.computed + 1, bt) - s.blocks : 0;
        while (need > pool.free_blocks && pool.running.back() != i) preempt_last(pool);
        if (need > pool.free_blocks) {  // only i itself is left to give back
          preempt_last(pool);
          break;
        }
        pool.free_blocks -= need;
        s.blocks += need;
        --budget;
        decoders.push_back(i);
        ++load.decode_seqs;
        context_tokens += s.computed + 1;
      }
      load.decode_context_tokens = static_cast<double>(context_tokens);
      // 2. Prompt chunks of sequences already admitted (their blocks are reserved).
      for (size_t k = 0, seen = 0;
           k < pool.running.size() && seen < static_cast<size_t>(pool.prefilling) && budget > 0;
           ++k) {
        State& s = st[pool.running[k]];
        if (s.phase != Phase::kPrefill) continue;
        ++seen;
        s.chunk = std::min({budget, s.prompt - s.computed, max_chunk});
        budget -= s.chunk;
        prefillers.push_back(pool.running[k]);
      }
      // 3. Admit waiting requests: a batch slot, token budget, and blocks for the whole prompt.
      while (!pool.waiting.empty() && budget > 0 &&
             static_cast<int>(pool.running.size()) < rank_batch) {
        int i = pool.waiting.front();
        State& s = st[i];
        const int whole = requests[i].input_tokens + requests[i].output_tokens;
        int64_t need = BlocksFor(config.guaranteed_no_evict ? whole : s.prompt, bt);
        if (need > pool.free_blocks) break;
        pool.waiting.pop_front();
        pool.free_blocks -= need;
        s.blocks = need;
        pool.running.push_back(i);
        if (requests[i].prefilled && res.requests[i].preemptions == 0) {
          s.computed = s.prompt;  // K/V transferred; the first token came with them
          s.generated = 1;
          s.phase = Phase::kDecode;
          res.requests[i].first_token_s = requests[i].arrival_s;
          continue;
        }
        s.phase = Phase::kPrefill;
        ++pool.prefilling;
        s.chunk = std::min({budget, s.prompt, max_chunk});
        budget -= s.chunk;
        prefillers.push_back(i);
      }
      saturated = saturated || !pool.waiting.empty();
      shape.decode_seqs += load.decode_seqs;
      shape.decode_context_tokens += load.decode_context_tokens;
      for (size_t k = first_prefiller; k < prefillers.size(); ++k) {
        const State& s = st[prefillers[k]];
        shape.prefill_tokens += s.chunk;
        shape.chunks.push_back({s.chunk, s.computed + s.chunk});
      }
      load.chunks = static_cast<int>(prefillers.size() - first_prefiller);
      if (ranks > 1) shape.ranks.push_back(load);
    }
    if (shape.tokens() == 0) {
      bool running = false;
      for (const Pool& p : pools) running = running || !p.running.empty();
      if (running) continue;  // prefilled requests just admitted decode next iteration
      NDT_CHECK(next_arrival < n, "RunEngine: no progress possible (KV cache too small)");
      now = std::max(now, requests[next_arrival].arrival_s);
      continue;
    }
    double dur = cost(shape);
    int batch = static_cast<int>(decoders.size() + prefillers.size());
    int64_t used = config.kv_blocks;
    for (const Pool& p : pools) used -= p.free_blocks;
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
    bool finished = false;
    auto emit = [&](int i) {
      State& s = st[i];
      ++s.generated;
      ++res.output_tokens;
      if (now > config.window_start_s && now <= config.window_end_s) ++res.window_tokens;
      if (s.generated == 1) res.requests[i].first_token_s = now;
      if (s.generated >= s.output) {
        s.phase = Phase::kDone;
        res.requests[i].finish_s = now;
        pools[ranks > 1 ? rank_of[i] : 0].free_blocks += s.blocks;
        s.blocks = 0;
        ++done;
        finished = true;
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
        --pools[ranks > 1 ? rank_of[i] : 0].prefilling;
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
    for (Pool& p : pools) {
      if (!finished) break;
      p.running.erase(std::remove_if(p.running.begin(), p.running.end(),
                                     [&](int i) { return st[i].phase == Phase::kDone; }),
                      p.running.end());
    }
  }
  res.makespan_s = now;
  return res;
}

}  // namespace ndt
