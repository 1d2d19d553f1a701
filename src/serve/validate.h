// File: serve/validate.h
// The inference validation suite: each row of shared/validation/inference/mlperf_llama2_70b.csv
// (published MLPerf Inference Llama-2-70B results) is re-run with the row's deployment: VM size
// (vm_size_equivalent), VMs = gpus / GPUs per VM, TP, PP, max batch per instance, max tokens,
// weight and KV precision, the dataset, and mean_generated_tokens as --output-tokens-mean; the
// predicted output tokens/s (Offline throughput, or Server's highest rate meeting the row's p99
// TTFT/TPOT limits) is compared with the measured one. Validation only: nothing is fitted here.
// Each row runs with the serving stack of its year (MLPerf v4.x: August 2024 -> tensorrt-llm-2024;
// v5.x: 2025 -> tensorrt-llm-2025): the stack's traits (host overlap, TP all-reduce, CUDA
// graphs), looked up by name in `traits` (stack name -> traits; a missing name keeps
// InferOptions' defaults). The row's own
// engine settings (batch, tokens) are its deployment, so the stack's knobs are not applied.
#ifndef NDTWIN_SERVE_VALIDATE_H_
#define NDTWIN_SERVE_VALIDATE_H_

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/validation.h"
#include "hw/catalog.h"
#include "serve/run.h"

namespace ndt {

// shared_dir "" = NDT_SHARED_DIR. Fails on a malformed CSV (file:line); a row whose deployment
// cannot run is an error too (it names the row).
StatusOr<std::vector<ValidationRow>> ValidateInference(
    const ServeData& data, const std::string& shared_dir,
    const std::map<std::string, ServingTraits>& traits = {});

// The serving stack of an MLPerf round ("inference v4.1" -> "tensorrt-llm-2024").
std::string ServingStackOfRound(const std::string& round);

}  // namespace ndt

#endif  // NDTWIN_SERVE_VALIDATE_H_
