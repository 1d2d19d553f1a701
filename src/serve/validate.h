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
#include <utility>
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

// The VM sizes the serving calibration runs need and data/ does not hold: "Calibration_DGX_B200",
// ND H100 v5's layout (8 GPUs, NVSwitch, the same NICs) with 8 B200 of 180 GB, as
// src/serve/fit_serving.py's b200_vm writes it (B200 has no Azure VM). The returned catalog is
// `catalog` plus that size; kNotFound if `catalog` lacks ND H100 v5 or the B200.
StatusOr<Catalog> WithServingStandIns(const Catalog& catalog);

// trtllm-bench's max-throughput (max batch, max num tokens) when the command line gives neither
// (TensorRT-LLM tensorrt_llm/bench/build/tuning.py, 0.17-1.0; fit_serving.trtllm_bench_knobs):
// requests = (GPU memory x tp x pp - weights) x 0.95 / (KV bytes per token x (isl + osl)), with
// GiB of GPU memory, weights = parameters x bytes per weight, KV per token = 2 x layers x
// max(tp, kv_heads) x head_dim x bytes per element; batch = min(requests, 4096) / pp rounded up
// to 32 (below 256; at least 64), 128 (below 1024) or 256; tokens = min(batch x (1 + isl/osl),
// 32768) rounded up to 256 (below 4096; at least 2048), 512 (below 8192) or 1024, and (chunked
// prefill off, bench/benchmark/utils/general.py get_settings) at least isl + batch.
std::pair<int, int> TrtllmBenchKnobs(const TransformerSpec& model, double gpu_memory_bytes,
                                     Dtype weights, Dtype kv, int tp, int pp, int isl, int osl);

// The throughput rows of shared/validation/calibration/serving.csv that src/serve/fit_serving.py
// fits (output tokens/s per GPU, weight 1 there), each re-run with the deployment and stack
// traits fit_serving.py gives it: MLPerf v5.0 B200 Offline; TensorRT-LLM v1.0 / v0.20 Llama-3.3-70B
// (trtllm-bench knobs, padded CUDA graphs, --seq 131072) and v0.14 Llama-3-70B (the H100 TP1 row,
// memory-capacity bound and not fitted, is left out); Azure's ND GB200 v6 Llama-3-70B TP4 and
// Llama-3.1-8B TP1 (1,000 requests). The TPOT and TTFT rows (a time at a given load, not a
// throughput) and the rows fit_serving.py cannot express are not run. Every row is
// calibration = true, metric output_tokens_per_s (per GPU); a case the model refuses is a row
// with `refused` set. data.catalog must come from WithServingStandIns. No serving.csv: no rows.
StatusOr<std::vector<ValidationRow>> ValidateServingCalibration(
    const ServeData& data, const std::string& shared_dir,
    const std::map<std::string, ServingTraits>& traits = {});

// The serving stack of an MLPerf round ("inference v4.1" -> "tensorrt-llm-2024").
std::string ServingStackOfRound(const std::string& round);

}  // namespace ndt

#endif  // NDTWIN_SERVE_VALIDATE_H_
