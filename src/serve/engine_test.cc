#include "serve/engine.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "serve/request.h"

namespace ndt {
namespace {

// A cost that depends only on the token count: a + b * tokens.
IterationCostFn Linear(double a, double b) {
  return [a, b](const BatchShape& s) { return a + b * s.tokens(); };
}

EngineConfig Config(int max_batch, int max_tokens, int64_t blocks, int block_tokens = 32) {
  EngineConfig c;
  c.max_batch = max_batch;
  c.max_num_tokens = max_tokens;
  c.kv_blocks = blocks;
  c.block_tokens = block_tokens;
  return c;
}

TEST(ServingEngine, OneRequestTpotEqualsOneDecodeIteration) {
  // One request, 100 prompt tokens, 10 outputs. Iteration 1 computes the prompt (100 tokens):
  // 5 ms + 100 x 10 us = 6 ms, and yields the first token (TTFT = 6 ms). Each of the 9 decode
  // iterations has 1 token: 5 ms + 10 us = 5.01 ms; TPOT = 9 x 5.01 / 9 = 5.01 ms.
  std::vector<Request> reqs = {{0, 0.0, 100, 10}};
  EngineResult r = RunEngine(reqs, Config(8, 4096, 1000), Linear(5e-3, 1e-5));
  ASSERT_EQ(r.requests.size(), 1u);
  EXPECT_NEAR(r.requests[0].ttft_s(), 6e-3, 1e-12);
  EXPECT_NEAR(r.requests[0].tpot_s(), 5.01e-3, 1e-12);
  EXPECT_EQ(r.num_iterations, 10);
  EXPECT_EQ(r.output_tokens, 10);
}

TEST(ServingEngine, WindowWarmUpAndSaturationCountTheRightTokens) {
  // Iterations cost 1 s each (Linear(1, 0)). Max batch 1, three requests at t = 0 of 10 prompt
  // and 4 output tokens: request k emits at t = 4k+1 .. 4k+4 (prefill yields the first token,
  // then 3 decodes). Window (1.5, 6]: tokens at t = 2, 3, 4, 5, 6 -> 5. Warm-up (max_batch = 1
  // request finished) ends at t = 4 with 4 tokens. Request 2 waits until it is admitted at
  // t = 8, so the last iteration with a request waiting ends at t = 8, after 8 tokens.
  std::vector<Request> reqs = {{0, 0.0, 10, 4}, {1, 0.0, 10, 4}, {2, 0.0, 10, 4}};
  EngineConfig c = Config(1, 4096, 1000);
  c.window_start_s = 1.5;
  c.window_end_s = 6;
  EngineResult r = RunEngine(reqs, c, Linear(1, 0));
  EXPECT_EQ(r.output_tokens, 12);
  EXPECT_EQ(r.window_tokens, 5);
  EXPECT_DOUBLE_EQ(r.warm_s, 4);
  EXPECT_EQ(r.warm_tokens, 4);
  EXPECT_DOUBLE_EQ(r.saturated_until_s, 8);
  EXPECT_EQ(r.saturated_tokens, 8);
}

TEST(ServingEngine, ChunkedPrefillSplitsThePromptByTheTokenBudget) {
  // 1000 prompt tokens with 256 tokens per iteration: chunks 256, 256, 256, 232 -> 4 iterations
  // of 1 ms each before the first token.
  std::vector<Request> reqs = {{0, 0.0, 1000, 2}};
  EngineResult r = RunEngine(reqs, Config(8, 256, 1000), Linear(1e-3, 0));
  EXPECT_NEAR(r.requests[0].ttft_s(), 4e-3, 1e-12);
  EXPECT_NEAR(r.requests[0].e2e_s(), 5e-3, 1e-12);
}

TEST(ServingEngine, ArrivalAfterIdleStartsAtArrivalTime) {
  std::vector<Request> reqs = {{0, 0.0, 10, 1}, {1, 5.0, 10, 1}};
  EngineResult r = RunEngine(reqs, Config(8, 64, 100), Linear(1e-3, 0));
  EXPECT_NEAR(r.requests[1].first_token_s, 5.001, 1e-12);
  EXPECT_NEAR(r.requests[1].ttft_s(), 1e-3, 1e-12);
}

TEST(ServingEngine, BatchNeverExceedsMaxBatchAndAllTokensAreProduced) {
  std::vector<RequestLengths> lens = {{50, 20}, {120, 7}, {30, 64}, {300, 1}};
  std::vector<Request> reqs = OfflineRequests(lens, 200);
  EngineConfig cfg = Config(16, 512, 100000);
  cfg.record_iterations = true;
  EngineResult r = RunEngine(reqs, cfg, Linear(1e-3, 1e-6));
  int64_t want = 0;
  for (const Request& q : reqs) want += q.output_tokens;
  EXPECT_EQ(r.output_tokens, want);
  for (const IterationRecord& it : r.iterations) {
    EXPECT_LE(it.batch, 16);
    EXPECT_LE(it.prefill_tokens + it.decode_tokens, 512);
  }
  for (const RequestRecord& q : r.requests) EXPECT_GE(q.finish_s, q.first_token_s);
}

TEST(ServingEngine, FullCachePreemptsAndStillFinishesEveryRequest) {
  // 20 blocks of 16 tokens = 320 tokens; 10 requests of 100 + 100 tokens (13 blocks each at the
  // end) cannot all grow at once, so some are preempted and recomputed, yet all finish.
  std::vector<Request> reqs;
  for (int i = 0; i < 10; ++i) reqs.push_back({i, 0.0, 100, 100});
  EngineConfig cfg = Config(10, 4096, 20, 16);
  cfg.record_iterations = true;
  EngineResult r = RunEngine(reqs, cfg, Linear(1e-3, 0));
  EXPECT_GT(r.preemptions, 0);
  EXPECT_EQ(r.output_tokens, 10 * 100);
  for (const IterationRecord& it : r.iterations) EXPECT_LE(it.kv_blocks_used, 20);
  for (const RequestRecord& q : r.requests) EXPECT_GT(q.finish_s, 0);
}

TEST(ServingEngine, GuaranteedNoEvictReservesWholeRequestsAndNeverPreempts) {
  // The cache above under GUARANTEED_NO_EVICT: a request is admitted with the blocks of all of
  // it, ceil((100 + 100) / 16) = 13 of the 20, so a second (13 more) never fits while one runs:
  // the 10 run one at a time, each 1 prefill iteration (its first token) + 99 decode iterations,
  // 1,000 iterations of 1 ms: the last finishes at 1.0 s, with 13 blocks held and no preemption.
  std::vector<Request> reqs;
  for (int i = 0; i < 10; ++i) reqs.push_back({i, 0.0, 100, 100});
  EngineConfig cfg = Config(10, 4096, 20, 16);
  cfg.guaranteed_no_evict = true;
  cfg.record_iterations = true;
  EngineResult r = RunEngine(reqs, cfg, Linear(1e-3, 0));
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(r.output_tokens, 10 * 100);
  EXPECT_EQ(r.num_iterations, 1000);
  for (const IterationRecord& it : r.iterations) {
    EXPECT_EQ(it.batch, 1);
    EXPECT_EQ(it.kv_blocks_used, 13);
  }
  EXPECT_NEAR(r.requests[9].finish_s, 1.0, 1e-9);
}

TEST(ServingEngine, LittlesLawHoldsInSteadyState) {
  // Light Poisson load (no queueing): the time-average number of sequences in the batch, L,
  // equals arrival rate x mean time in system, W (Little's law, L = lambda W), measured from two
  // independent records: the engine's per-iteration batch sizes and the requests' latencies.
  // The two differ only by the wait from arrival to the next iteration start (<= 1 iteration)
  // and the ends of the run, so they agree within 5%.
  std::vector<RequestLengths> lens = {{200, 100}, {100, 300}, {400, 50}};
  const double qps = 20;
  std::vector<Request> reqs = PoissonRequests(lens, 4000, qps, 7);
  EngineConfig cfg = Config(512, 8192, 1 << 20);
  cfg.record_iterations = true;
  EngineResult r = RunEngine(reqs, cfg, Linear(10e-3, 2e-6));
  double area = 0;
  for (const IterationRecord& it : r.iterations) area += it.batch * it.dur_s;
  double L = area / r.makespan_s;
  double w = 0;
  for (const RequestRecord& q : r.requests) w += q.e2e_s();
  w /= r.requests.size();
  double lambda = r.requests.size() / r.makespan_s;
  EXPECT_NEAR(L, lambda * w, 0.05 * L);
}

TEST(ServingEngine, PrefilledRequestGoesStraightToDecode) {
  // Disaggregated decode: the prompt's K/V and the first token arrive at t = 1 s; the engine
  // runs the remaining 4 tokens as 4 decode iterations of 2 ms (1 token each), no prefill.
  Request q{0, 1.0, 500, 5};
  q.prefilled = true;
  EngineConfig cfg = Config(8, 4096, 100);
  cfg.record_iterations = true;
  EngineResult r = RunEngine({q}, cfg, Linear(2e-3, 0));
  EXPECT_EQ(r.num_iterations, 4);
  EXPECT_EQ(r.output_tokens, 4);
  for (const IterationRecord& it : r.iterations) EXPECT_EQ(it.prefill_tokens, 0);
  EXPECT_NEAR(r.requests[0].finish_s, 1.008, 1e-12);
  EXPECT_NEAR(r.requests[0].tpot_s(), 2e-3, 1e-12);
}

TEST(ServingEngine, SameSeedGivesIdenticalRecords) {
  std::vector<RequestLengths> lens = {{200, 100}, {100, 300}, {400, 50}, {30, 5}};
  auto run = [&](uint64_t seed) {
    return RunEngine(PoissonRequests(lens, 500, 50, seed), Config(64, 1024, 4000),
                     Linear(5e-3, 3e-6));
  };
  EngineResult a = run(3), b = run(3), c = run(4);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].first_token_s, b.requests[i].first_token_s);
    EXPECT_EQ(a.requests[i].finish_s, b.requests[i].finish_s);
  }
  EXPECT_NE(a.makespan_s, c.makespan_s);
}

TEST(ServingEngine, MaxChunkTokensCapsOneSequencesPromptChunk) {
  // Attention-DP's ranks run as one engine of ranks x the per-rank budget, and one prompt chunk
  // is one rank's: a 1000-token prompt, budget 4096, chunks of at most 256 tokens: 256, 256, 256
  // and 232 (the first token with the last), then 1 decode. Each iteration is recorded.
  std::vector<Request> reqs = {{0, 0.0, 1000, 2}};
  EngineConfig c = Config(8, 4096, 1000);
  c.max_chunk_tokens = 256;
  c.record_iterations = true;
  EngineResult r = RunEngine(reqs, c, Linear(1e-3, 0));
  ASSERT_EQ(r.iterations.size(), 5u);
  EXPECT_EQ(r.iterations[0].prefill_tokens, 256);
  EXPECT_EQ(r.iterations[2].prefill_tokens, 256);
  EXPECT_EQ(r.iterations[3].prefill_tokens, 232);
  EXPECT_EQ(r.iterations[4].decode_tokens, 1);
  EXPECT_NEAR(r.requests[0].ttft_s(), 4e-3, 1e-12);
}

TEST(ServingEngine, AttentionDpAssignsLongestPromptsToTheRankWithFewestNewTokens) {
  // TensorRT-LLM's heap (serve/engine.h). 3 ranks with 1, 0, 0 active requests, 4 new ones of
  // 100, 300, 200, 300 prompt tokens: expected = max(ceil((1 + 4) / 3), 1) = 2, so the ranks
  // may take 1, 2, 2. Longest first (stable): #1 (300), #3 (300), #2 (200), #0 (100). Heap
  // (tokens, slots left, rank): (0,1,0) (0,2,1) (0,2,2). #1 -> rank 0 (full, leaves the heap);
  // #3 -> rank 1 (300,1,1); #2 -> rank 2 (200,1,2); #0 -> rank 2, the fewest tokens (300,0,2).
  EXPECT_EQ(AssignAttentionDpRanks({100, 300, 200, 300}, {1, 0, 0}),
            (std::vector<int>{2, 0, 2, 1}));
  // Equal loads: round robin from rank 0 (ties on tokens and slots go to the lowest rank).
  EXPECT_EQ(AssignAttentionDpRanks({50, 50, 50, 50}, {0, 0}), (std::vector<int>{0, 1, 0, 1}));
}

TEST(ServingEngine, AttentionDpRequestsStayOnTheirRankAndRefillIt) {
  // 2 ranks of 1 request and 100 tokens each (engine totals 2 and 200), requests at t = 0: A
  // (100 prompt, 2 out), B (100, 4), C (100, 2). Iteration cost 1 s + 10 ms x the busiest rank's
  // tokens. It 1: nothing active, so the executor fetches A alone -> rank 0, prefill 100 (2 s).
  // It 2: one free slot, on rank 1 (expected max(ceil(2/2), 1) = 1): B -> rank 1, prefill 100;
  // rank 0 decodes A's last token (2 s). It 3: A's slot on rank 0 is free: C -> rank 0, prefill
  // 100 while rank 1 decodes B (2 s). It 4: C's last token and B's third (1.01 s); it 5: B's
  // last (1.01 s). Makespan 8.02 s.
  std::vector<Request> reqs = {{0, 0.0, 100, 2}, {1, 0.0, 100, 4}, {2, 0.0, 100, 2}};
  EngineConfig c = Config(2, 200, 100);
  c.attention_dp_ranks = 2;
  std::vector<BatchShape> seen;
  auto cost = [&seen](const BatchShape& s) {
    seen.push_back(s);
    int busiest = 0;
    size_t chunk = 0;
    for (const RankLoad& r : s.ranks) {
      int tokens = r.decode_seqs;
      for (int k = 0; k < r.chunks; ++k) tokens += s.chunks[chunk++].q_tokens;
      busiest = std::max(busiest, tokens);
    }
    return 1.0 + 0.01 * busiest;
  };
  EngineResult r = RunEngine(reqs, c, cost);
  ASSERT_EQ(seen.size(), 5u);
  for (const BatchShape& s : seen) ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_EQ(seen[0].ranks[0].chunks, 1);
  EXPECT_EQ(seen[0].ranks[1].chunks, 0);
  EXPECT_EQ(seen[1].ranks[0].decode_seqs, 1);
  EXPECT_EQ(seen[1].ranks[1].chunks, 1);
  EXPECT_EQ(seen[2].ranks[0].chunks, 1);  // C refills rank 0
  EXPECT_EQ(seen[2].ranks[1].decode_seqs, 1);
  EXPECT_NEAR(r.makespan_s, 8.02, 1e-12);
  EXPECT_NEAR(r.requests[2].first_token_s, 6.0, 1e-12);
  EXPECT_EQ(r.output_tokens, 8);
}

}  // namespace
}  // namespace ndt
