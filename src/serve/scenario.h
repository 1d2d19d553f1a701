// File: serve/scenario.h
// The MLPerf scenarios on a chosen deployment (serve/service.h builds the DeploymentPlan and
// calls these).
// Internal to serve/. MLPerf runs last >= 600 s (NVIDIA: 2400 s), so their tokens/s are the
// engines' steady state; our shorter runs measure that steady state directly instead of
// diluting it with a warm-up and a drain that a long run would not have:
//   offline  output tokens emitted from the end of warm-up (max_batch requests finished: the
//            engine, filled at once at t = 0, has turned over one batch) until the last
//            iteration with requests still waiting (the engine full), over that time: the
//            batch-full rate, without the start-up and the drain of the last batch.
//   server   Poisson arrivals for >= min_duration (600 s, mlperf.conf); output tokens emitted
//            between the end of warm-up (the first kServerWarmupFrac of the arrivals) and the
//            last arrival, over that window. A stable engine completes what arrives (rate x
//            mean output); an overloaded one only what it can, so an offered rate above capacity
//            cannot raise it. The p99 TTFT and TPOT are over the requests arriving in the window.
// Engines are identical and independent, so only as many are simulated as the request budget
// needs; totals scale by engines / simulated.
#ifndef NDTWIN_SERVE_SCENARIO_H_
#define NDTWIN_SERVE_SCENARIO_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "serve/cost.h"
#include "serve/engine.h"
#include "serve/service.h"

namespace ndt {

constexpr int kOfflineBatchesPerEngine = 8;   // offline requests per engine >= 8 x max_batch
constexpr int64_t kSimRequestBudget = 32768;  // requests simulated per evaluation (all engines)
// Server arrivals per engine, at most. MLPerf's 600 s reach it only above 218 requests/s per
// engine (small models; Llama 3 8B fp8 on an H100 runs ~120); past it a run takes seconds more
// without moving its p99, and an offered rate far beyond capacity (--qps up to 1e6) would
// otherwise ask for hundreds of millions of arrivals.
constexpr int kServerMaxPerEngine = 1 << 17;

// One deployment ready to run: its shape, one engine's configuration, how many engines and what
// an iteration costs (named apart from plan/, the planners).
struct DeploymentPlan {
  DeploymentInfo dep;
  EngineConfig engine;
  int engines = 0;  // replicas x pipeline groups
  CostSpec cost;
};

// How a run's throughput is measured (see the file comment).
enum class Measure {
  kMakespan,   // output tokens / the time the last request finishes (traces, disaggregation)
  kSaturated,  // offline steady state
  kWindow,     // server steady state: each engine's EngineConfig window
};

// The simulated engines of one run.
struct RunTotals {
  std::vector<EngineResult> results;
  std::vector<double> window_start_s, window_end_s;  // kWindow: per simulated engine
  int engines = 0;
};

// Work one run may do over all its simulated engines, so that no input makes a run take more
// than a few seconds: output tokens and engine iterations (RunEngine does roughly 100M of the
// one and 7M of the other per second). Quick runs get 1/kQuickBudgetDivisor. A run's iterations
// are its output tokens over the sequences in flight: offline runs fill the engine; a server run
// at rate q holds at least q x output x a lone decode step (Little's law), and that step is
// >= 1 ms (the engine overhead), so 2^24 iterations never cut 600 s of arrivals short. They cap
// outputs of ~20k tokens and more, and at a light load the 8 x max_batch floor of a server run
// of outputs beyond ~1k tokens (DeepSeek-R1's 4k: 4,149 requests, not 16,384 at batch 2048).
constexpr double kSimTokenBudget = 1 << 28;
constexpr double kSimIterationBudget = 1 << 24;
constexpr double kQuickBudgetDivisor = 4;

// The most requests one run on `plan` simulates (all engines together) within the budgets
// above, at the mean lengths of `o`. `engine_qps`: each engine's Poisson arrival rate; nullopt
// for offline (every request at t = 0). At least 1.
int64_t RunRequestCap(const DeploymentPlan& plan, const InferOptions& o, bool quick,
                      std::optional<double> engine_qps);

uint64_t Mix(uint64_t seed, uint64_t i);  // splitmix64 of seed + i

// Fills throughput, latency statistics, batch and KV use of `r` from `t`.
void FillResult(const DeploymentPlan& plan, const RunTotals& t, Measure m, InferResult* r);

// The dataset rows engine `e` of `engines` serves offline, `count` of them, from a dataset of
// `n` rows. When the run fits in one pass of the dataset (count x engines <= n), the round robin
// e, e + engines, e + 2 x engines, ...: the engines together serve distinct rows (--requests N
// serves the first N rows). Otherwise successive permutations of all n rows drawn from `seed` and
// e alone (every row once in each n draws): a round robin wrapping over the dataset kept engine e
// on the rows congruent to e modulo gcd(engines, n) (72 engines over 24,576 rows: 1,024 rows
// each), a sample that changed with the VM count; the permutations do not depend on it.
std::vector<size_t> OfflineRows(size_t n, int engines, int e, int count, uint64_t seed);

// MLPerf Offline: every engine gets its OfflineRows at t = 0 (at least
// kOfflineBatchesPerEngine x max_batch requests). `quick`: one shorter engine (knob search).
InferResult Offline(const DeploymentPlan& plan, const InferOptions& o, bool quick);
// MLPerf Server at `qps` (all engines together), each engine's arrivals spanning 600 s or
// kServerMaxPerEngine requests, whichever is fewer. `m`: kWindow for a rate the engines keep up
// with; kSaturated for one beyond their capacity, where the queue only grows and the window of a
// short burst of arrivals would end before the engines reach their steady state.
InferResult AtRate(const DeploymentPlan& plan, const InferOptions& o, double qps, bool quick,
                   bool record, Measure m);
// The highest rate whose p99 TTFT and TPOT meet the limits (bisection up to `capacity_rps`, the
// quick offline request rate of the plan: no higher rate can be sustained); kInfeasible if even
// a light load misses them. `hint_rps` (0: none), the quick search's answer, narrows a full
// search to the rates around it.
StatusOr<InferResult> SearchRate(const DeploymentPlan& plan, const InferOptions& o, double ttft,
                                 double tpot, bool quick, double capacity_rps, double hint_rps);

}  // namespace ndt

#endif  // NDTWIN_SERVE_SCENARIO_H_
