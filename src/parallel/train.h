// File: parallel/train.h
// The training question end to end, on given costs: resolve the strategy (choosing the
// micro-batch size and VPP when left out: the fastest feasible of a small candidate set, ties to
// the smaller value), check memory, simulate one iteration (train_sim.h) and derive throughput:
// tokens/s, model TFLOP/s per GPU and MFU (model FLOPs without recompute, Korthikanti/PaLM, vs
// the GPU's dense peak for the precision), hardware TFLOP/s (as executed, with recompute), and
// for a token budget the time to train and its cost at the VM's hourly price.
#ifndef NDTWIN_PARALLEL_TRAIN_H_
#define NDTWIN_PARALLEL_TRAIN_H_

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/transformer.h"
#include "parallel/costs.h"
#include "parallel/memory.h"
#include "parallel/strategy.h"
#include "parallel/train_sim.h"
#include "parallel/variability.h"

namespace ndt {

struct TrainJob {
  TransformerSpec model;
  Strategy strategy;  // mbs and vpp are overridden when not given
  bool mbs_given = true;
  bool vpp_given = true;
  int num_gpus = 1;
  int nvlink_domain_gpus = 8;
  double gpu_memory_bytes = 0;
  // What the process holds besides model state and activations on this GPU's architecture
  // (data/memory_reserve.yaml; parallel/memory_reserve.h). RunTraining refuses a job without it.
  MemoryReserve memory_reserve;
  int gpus_per_vm = 8;
  double vm_usd_per_hour = 0;  // 0: no price known
  double tokens = 0;           // 0: no time-to-train
  bool want_trace = false;
  // Choose mbs / vpp and report the step from the closed form (parallel/step_estimate.h), no
  // task graph (the planner's fast pass); a trace still simulates the chosen one.
  bool closed_form_search = false;
  // How the GPUs' speed spreads (parallel/variability.h): the step waits for the slowest of
  // num_gpus. Default none: every GPU at the measured (median) GPU's speed.
  GpuVariability gpu_variability;
  // The ZeRO stages the stack's software runs (SoftwareStack::zero_stages; empty: any): what a
  // "does not fit" error may suggest.
  std::vector<int> zero_stages;
};

struct TrainReport {
  Strategy strategy;                // resolved, with chosen values
  std::vector<std::string> chosen;  // "mbs 2", "vpp 4": what was chosen
  std::vector<std::string> warnings;
  MemoryBreakdown memory;
  ReserveBreakdown reserve;  // of the chosen strategy on job.gpu_memory_bytes
  double usable_bytes = 0;   // job.gpu_memory_bytes less reserve: what memory may reach
  TrainSimResult sim;
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;  // 1e12 FLOP/s
  double hardware_tflops_per_gpu = 0;
  double mfu = 0;  // fraction
  double peak_flops = 0;
  double time_to_train_s = 0;  // for job.tokens
  double cost_usd = 0;         // for job.tokens at job.vm_usd_per_hour
};

StatusOr<TrainReport> RunTraining(const TrainJob& job, const TrainCosts& costs);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_TRAIN_H_
