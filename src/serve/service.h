// File: serve/service.h
// An LLM inference service on N VMs of one size: choose the deployment (TP, PP, batch, token
// budget; omitted knobs are searched), build the per-iteration cost model, generate requests
// and run the MLPerf scenarios (serve/scenario.h says how each is measured):
//   offline      all requests at t = 0; throughput = the engines' batch-full output tokens/s.
//   server       the highest Poisson rate whose p99 TTFT and p99 TPOT meet the limits
//                (default: the dataset's MLPerf limits, else Llama-2-70B's 2 s, 200 ms), by
//                bisection over the rate; throughput = output tokens emitted between warm-up and
//                the last arrival, so it never exceeds what the engines complete (nor offline on
//                the same deployment).
//   interactive  the same with 450 ms and 40 ms.
// Engines (replicas x pipeline groups) are identical and independent (offline: round-robin
// share of the requests; server: each gets a Poisson stream of qps / engines), so only as many
// are simulated as the request budget needs (DESIGN.md "symmetry first"); totals scale by
// engines / simulated. Offline issues at least 8 x max_batch requests per engine, server at
// least MLPerf's 600 s of arrivals per engine. Traces and disaggregated runs report output
// tokens / the time the last request finishes. Disaggregation P:D splits the replicas
// in that ratio into a prefill pool (prompt + first token) and a decode pool, the K/V moved
// between them by coll's send/recv over NVLink or InfiniBand; every engine is simulated, and it
// runs offline, at a given --qps or from a trace (no SLO search).
#ifndef NDTWIN_SERVE_SERVICE_H_
#define NDTWIN_SERVE_SERVICE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compute/compute.h"
#include "core/status.h"
#include "hw/spec.h"
#include "model/transformer.h"
#include "serve/allreduce.h"
#include "serve/deployment.h"
#include "serve/engine.h"
#include "serve/metrics.h"
#include "serve/request.h"

namespace ndt {

enum class Scenario { kOffline, kServer, kInteractive };
const char* ScenarioName(Scenario s);
bool ParseScenario(const std::string& s, Scenario* out);

// Communication times a replica needs (built from coll/ by serve/comm.h).
struct CommFns {
  std::function<double(int tp, double bytes)> tp_allreduce_s;  // NCCL, one replica's TP group
  // All pp-1 stage sends, one after another: `hops[s]` holds boundary s's GPU pairs (src, dst)
  // as the replicas lay them out, one of each hop kind; each boundary costs its slowest.
  std::function<double(const std::vector<std::vector<std::pair<int, int>>>& hops, double bytes)>
      pp_sends_s;
  // Prefill replica's GPU `src` -> decode replica's GPU `dst` (cluster GPU indices).
  std::function<double(int src, int dst, double bytes)> kv_transfer_s;
  // Attention-DP's MoE dispatch and combine over the first n GPUs, one replica's group
  // (serve/cost.h): bytes are the gathered output (dispatch) and the reduced input (combine),
  // summed over the ranks. TensorRT-LLM runs them as NCCL groups of one broadcast and one reduce
  // per rank (serve/comm.cc).
  std::function<double(int n, double bytes)> moe_dispatch_s, moe_combine_s;
  // The NVLink path between two GPUs of a TP group, for the engine's own all-reduce kernels
  // (serve/allreduce.h; launch_s unset here). bw_Bps 0: none (one GPU).
  NvlinkPath tp_path;
};

// What a serving stack's engine does that the model follows (data/stacks/, its traits).
struct ServingTraits {
  bool host_overlap = true;
  TpAllReduceImpl tp_allreduce = TpAllReduceImpl::kTrtllm2025;
  bool cuda_graphs = true;
};

// The KV-cache precision a deployment uses unless told: fp8 with 8- or 4-bit weights, else fp16.
inline Dtype DefaultKv(Dtype weights) {
  return DtypeBytes(weights) <= 1 ? Dtype::kFp8 : Dtype::kFp16;
}

struct InferOptions {
  int vms = 1;
  int tp = 0, pp = 0, ep = 1;  // 0 = choose
  // Attention data parallelism over the tp GPUs of a replica, experts split over them (EP = tp;
  // serve/deployment.h DeploymentRequest). max_batch and max_num_tokens are then per rank.
  bool attention_dp = false;
  int max_batch = 0;       // 0 = choose
  int max_num_tokens = 0;  // 0 = choose
  Dtype weights = Dtype::kFp16;
  Dtype kv = Dtype::kFp16;
  Scenario scenario = Scenario::kOffline;
  double qps = 0;                         // server/interactive: > 0 runs this rate, no search
  double ttft_p99_s = 0, tpot_p99_s = 0;  // 0 = the scenario's MLPerf limits
  std::vector<RequestLengths> lengths;    // the dataset (or one fixed length)
  std::vector<Request> trace;             // non-empty: replay these arrivals instead
  int requests = 0;                       // 0 = automatic (see the file comment)
  uint64_t seed = 1;
  int disaggregate_prefill = 0, disaggregate_decode = 0;  // P:D replicas ratio; 0 = off
  bool record_trace = false;                              // keep engine 0's iterations and requests
  // Host work overlapped with the GPU's (serve/cost.h): the serving stack's host_overlap trait;
  // true = today's stack (tensorrt-llm-2025, the PyTorch backend's overlap scheduler).
  bool host_overlap = true;
  // The engine's TP all-reduce selection (serve/allreduce.h): the stack's tp_allreduce trait;
  // default today's (tensorrt-llm-2025).
  TpAllReduceImpl tp_allreduce = TpAllReduceImpl::kTrtllm2025;
  // CUDA graphs for decode-only iterations (serve/cost.h): the stack's cuda_graphs trait.
  bool cuda_graphs = true;
  // Padded CUDA graphs up to data/serve/engine.yaml's largest captured size (serve/cost.h), as
  // TensorRT-LLM's perf-overview runs configure them; needs cuda_graphs.
  bool cuda_graph_padding = false;
  // TensorRT-LLM's GUARANTEED_NO_EVICT capacity scheduler (serve/engine.h), as trtllm-bench runs
  // by default; false: max-utilization with preemption.
  bool guaranteed_no_evict = false;
  // Called with a line as the deployment search proceeds (for a progress display); may be empty.
  std::function<void(const std::string&)> progress;
};

struct InferContext {
  const SkuSpec* sku = nullptr;
  const GpuSpec* gpu = nullptr;
  const TransformerSpec* model = nullptr;
  const ComputeCalibration* calibration = nullptr;
  EngineParams params;
  CommFns comm;
};

struct DeploymentInfo {
  int tp = 1, pp = 1, ep = 1;
  bool attention_dp = false;  // max_batch, max_num_tokens per rank
  int replicas = 0;
  int gpus_used = 0, gpus_total = 0;
  int max_batch = 0, max_num_tokens = 0;
  Dtype weights = Dtype::kFp16, kv = Dtype::kFp16;
  int prefill_replicas = 0, decode_replicas = 0;  // disaggregated pools (0 = colocated)
  std::vector<std::string> chosen;  // knobs ndtwin chose ("tp", "pp", "max_batch", ...)
  MemoryPlan memory;
};

struct InferResult {
  Scenario scenario = Scenario::kOffline;
  DeploymentInfo deployment;
  double qps = 0;  // offered rate (offline: completed requests / s)
  double output_tokens_per_s = 0;
  double per_gpu_output_tokens_per_s = 0;
  double requests_per_s = 0;
  RequestStats stats;
  double ttft_limit_s = 0, tpot_limit_s = 0;  // server/interactive
  // Server/interactive: whether the p99 TTFT and TPOT are within those limits. The rate search
  // meets them by construction; a given --qps, a trace or a disaggregated run may not (a
  // warning then says by how much).
  bool slo_met = true;
  double mean_batch = 0;
  double kv_mean_use_frac = 0, kv_peak_use_frac = 0;
  int64_t preemptions = 0;
  int64_t requests_simulated = 0;
  int engines = 0, engines_simulated = 0;
  double duration_s = 0;  // simulated time of the longest engine
  std::optional<double> usd_per_million_tokens;
  double usd_per_hour = 0;
  double mean_input_tokens = 0, mean_output_tokens = 0;
  std::vector<IterationRecord> trace_iterations;  // engine 0, if record_trace
  std::vector<RequestRecord> trace_requests;
  // What the user should know about a result that is not an error (the CLI prints each on
  // stderr): an offered rate beyond capacity, a run cut short by its simulation budget.
  std::vector<std::string> warnings;
  // How far to trust the numbers on this GPU (ArchCalibration::serving_caveat); empty: no
  // known caveat.
  std::string caveat;
  bool host_overlap = true;          // the run's InferOptions::host_overlap
  bool guaranteed_no_evict = false;  // the run's InferOptions::guaranteed_no_evict
};

// kInvalidInput if a request of `o` (lengths or trace) is longer, input + output, than the
// context `m` serves (TransformerSpec::served_context), as serving engines refuse them
// (TensorRT-LLM's max_seq_len, vLLM's max_model_len): the model has no positions for them.
Status CheckServedContext(const TransformerSpec& m, const InferOptions& o);

// REQUIRES: ctx pointers set; opts.lengths non-empty unless opts.trace is.
StatusOr<InferResult> RunInference(const InferContext& ctx, const InferOptions& opts);

}  // namespace ndt

#endif  // NDTWIN_SERVE_SERVICE_H_
