// File: serve/engine.h
// One LLM serving engine (a model replica, or one micro-batch group of a pipeline-parallel
// replica) simulated iteration by iteration, as TensorRT-LLM's executor and vLLM run it:
// in-flight (continuous) batching up to `max_batch` sequences and `max_num_tokens` tokens per
// iteration; decode tokens are scheduled first, then prompt tokens fill the remaining token
// budget (chunked prefill); a paged KV cache of `kv_blocks` blocks of `block_tokens` tokens; a
// waiting request is admitted when blocks for its whole prompt are free; when a running request
// needs a block and none is free, the most recently admitted request is preempted (its blocks
// freed, its prompt plus generated tokens recomputed later, as vLLM's recompute preemption).
// The last prompt chunk of a request yields its first output token (TTFT); each decode step
// yields one more. The iteration's duration comes from an IterationCostFn (serve/cost.h).
// Attention data parallelism (attention_dp_ranks > 1; TensorRT-LLM enable_attention_dp): the
// ranks step together (one iteration, priced on its busiest rank: serve/cost.h), but each is a
// scheduler of its own, as in TensorRT-LLM's PyExecutor: a request is assigned to a rank when the
// executor fetches it and stays there (its KV cache lives there); each rank schedules its
// requests with its own batch slots, token budget and KV blocks. Fetching (PyExecutor
// _fetch_new_requests, TensorRT-LLM 0.20-1.0 with attention_dp_config's enable_balance off, its
// default): each iteration takes up to ranks x max_batch minus the requests active on all ranks
// from the queue (one alone when none is active: the executor was blocked on an empty queue,
// _get_from_request_queue) and assigns them by AssignAttentionDpRanks. So a rank whose requests
// finish refills alone and runs prompt tokens while the others decode, and the iteration waits for
// it. Times in seconds, sizes in tokens and blocks. Deterministic: FIFO order, ties by request id.
#ifndef NDTWIN_SERVE_ENGINE_H_
#define NDTWIN_SERVE_ENGINE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "serve/request.h"

namespace ndt {

// The work of one iteration, what its cost depends on.
struct PrefillChunk {
  int q_tokens = 0;   // new prompt tokens computed in this iteration
  int kv_tokens = 0;  // keys they attend to (prior context + the chunk)
};
// Attention-DP: one rank's share of the iteration (its chunks are the next `chunks` of
// BatchShape::chunks, the ranks' in rank order).
struct RankLoad {
  int decode_seqs = 0;
  double decode_context_tokens = 0;
  int chunks = 0;
};
struct BatchShape {
  int prefill_tokens = 0;            // sum of chunk q_tokens
  int decode_seqs = 0;               // sequences generating one token each
  double decode_context_tokens = 0;  // sum over decode sequences of keys attended
  std::vector<PrefillChunk> chunks;  // one per sequence in prefill this iteration
  std::vector<RankLoad> ranks;       // attention-DP engines: each rank's share; else empty
  int tokens() const { return prefill_tokens + decode_seqs; }
};
// Seconds one iteration of this shape takes.
using IterationCostFn = std::function<double(const BatchShape&)>;

struct EngineConfig {
  int max_batch = 256;        // sequences in flight (TensorRT-LLM max_batch_size)
  int max_num_tokens = 8192;  // tokens per iteration (prefill chunks + decode)
  // Largest prompt chunk of one sequence per iteration; 0: max_num_tokens. Attention-DP runs its
  // ranks as one engine of ranks x the per-rank budget, and a chunk is one rank's.
  int max_chunk_tokens = 0;
  // Attention-DP ranks (TensorRT-LLM enable_attention_dp; 1: off). Each rank schedules its own
  // requests with max_batch, max_num_tokens and kv_blocks / ranks (which must divide), see above.
  int attention_dp_ranks = 1;
  int64_t kv_blocks = 0;  // KV cache capacity in blocks
  int block_tokens = 32;  // tokens per KV block
  // Capacity scheduling. false: max-utilization (admit on the prompt's blocks, grow the cache as
  // sequences decode, preempt the newest when it is full). true: TensorRT-LLM's
  // GUARANTEED_NO_EVICT (trtllm-bench's --scheduler_policy default, the LLM API's
  // SchedulerConfig default): admit a request only when the cache can hold all of it, input and
  // output, so nothing is ever preempted.
  bool guaranteed_no_evict = false;
  bool record_iterations = false;  // fill EngineResult::iterations (for traces)
  // Measurement window: output tokens of iterations ending in (start, end] are counted in
  // EngineResult::window_tokens (MLPerf Server's steady state between warm-up and drain).
  double window_start_s = 0;
  double window_end_s = std::numeric_limits<double>::infinity();
};

// What happened to one request.
struct RequestRecord {
  int id = 0;
  double arrival_s = 0;
  double first_token_s = 0;  // end of the iteration that produced the first output token
  double finish_s = 0;       // end of the iteration that produced the last one
  int input_tokens = 0;
  int output_tokens = 0;
  int preemptions = 0;
  double ttft_s() const { return first_token_s - arrival_s; }
  double e2e_s() const { return finish_s - arrival_s; }
  // MLPerf: (latency - TTFT) / (output tokens - 1); 0 for single-token outputs.
  double tpot_s() const {
    return output_tokens > 1 ? (finish_s - first_token_s) / (output_tokens - 1) : 0.0;
  }
};

struct IterationRecord {
  double start_s = 0;
  double dur_s = 0;
  int batch = 0;  // sequences in the iteration
  int prefill_tokens = 0;
  int decode_tokens = 0;
  int64_t kv_blocks_used = 0;
};

struct EngineResult {
  std::vector<RequestRecord> requests;      // in input order
  std::vector<IterationRecord> iterations;  // only if record_iterations
  int64_t num_iterations = 0;
  double busy_s = 0;                 // sum of iteration durations
  double makespan_s = 0;             // end of the last iteration
  double batch_token_weighted = 0;   // sum over iterations of batch * dur (for the mean batch)
  double kv_used_time_weighted = 0;  // sum over iterations of blocks used * dur
  int64_t kv_peak_blocks = 0;
  int64_t preemptions = 0;
  int64_t output_tokens = 0;
  int64_t window_tokens = 0;  // output tokens inside the configured window
  // Saturation: the end of the last iteration after whose admission step requests were still
  // waiting (the engine full: batch, token budget or KV cache), and the output tokens emitted by
  // then. After it the batch only drains. 0 if nothing ever waited.
  double saturated_until_s = 0;
  int64_t saturated_tokens = 0;
  // Warm-up: the end of the iteration by which max_batch requests had finished (one batch
  // turned over, so the start-up of an engine filled at once no longer shows) and the output
  // tokens emitted by then. 0 if fewer finished.
  double warm_s = 0;
  int64_t warm_tokens = 0;
};

// TensorRT-LLM's assignment of newly fetched requests to attention-DP ranks (PyExecutor
// _fetch_new_requests / _balance_requests_across_ranks, balance off): with `active[r]` requests
// on rank r and n new ones, each rank may take up to expected - active[r], expected =
// max(ceil((sum active + n) / ranks), max active); the new requests, longest prompt first (stable),
// go one by one to the open rank with the fewest prompt tokens added in this call, ties to the
// one with fewer slots left, then the lowest rank (a heap of (tokens, slots left, rank)).
// Returns each request's rank, in input order.
std::vector<int> AssignAttentionDpRanks(const std::vector<int>& input_tokens,
                                        const std::vector<int>& active);

// Runs `requests` (sorted by arrival_s) through one engine until all finish.
// REQUIRES: every request's prompt fits in the cache (a rank's, under attention-DP):
// ceil((input+output)/block) <= kv_blocks / attention_dp_ranks
// (the caller checks and reports); max_batch, max_num_tokens >= 1.
EngineResult RunEngine(const std::vector<Request>& requests, const EngineConfig& config,
                       const IterationCostFn& cost);

}  // namespace ndt

#endif  // NDTWIN_SERVE_ENGINE_H_
