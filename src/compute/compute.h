// File: compute/compute.h
// Time of one operator (model/ops.h) on one GPU (hw/spec.h): a roofline
//   t = max(flop / (peak(precision) * eff(op class, shape)), bytes / (memory_Bps * mem_eff))
//       + launch overhead
// GEMM efficiency models tile and wave quantization: tiles = ceil(m/Tm) * ceil(n/Tn) * batch,
// waves = ceil(tiles / SMs), utilization = tiles / (waves * SMs) and padding m*n / (tiles*Tm*Tn),
// times a sustained fraction of peak per architecture and a small-K/small-problem ramp.
// Attention: a FlashAttention fraction of peak per architecture. Element-wise and norms:
// achievable HBM bandwidth (STREAM fraction). All fitted numbers come from
// data/calibration/compute.yaml, fitted on ../shared/validation/calibration/microbench.csv
// only; an architecture without microbench rows (blackwell_ultra, volta, ...) uses the
// calibration of the architecture named by its `fallback:` with its own hardware facts (peak,
// SMs, bandwidth). Times in seconds.
#ifndef NDTWIN_COMPUTE_COMPUTE_H_
#define NDTWIN_COMPUTE_COMPUTE_H_

#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "hw/spec.h"
#include "model/ops.h"

namespace ndt {

// Fitted per-architecture parameters.
struct ArchCalibration {
  std::string arch;               // "ampere", "hopper", "blackwell", ...
  std::string fallback;           // for an arch without its own fit: the arch whose fit it uses
  int tile_m = 128, tile_n = 128; // CTA output tile of the GEMM kernels
  double gemm_fraction = 0.8;     // sustained fraction of dense peak on large GEMMs
  double gemm_ramp_flop = 0;      // per-wave fixed cost expressed in FLOP-equivalents of peak:
                                  // eff *= work / (work + ramp) with work = flop per wave
  double attention_fraction = 0.5;  // FlashAttention forward fraction of dense fp16/bf16 peak
  double hbm_fraction = 0.9;      // achievable fraction of memory_Bps (STREAM)
  double launch_s = 4e-6;         // per-kernel launch + tail overhead
};

struct ComputeCalibration {
  std::map<std::string, ArchCalibration> archs;  // by arch name
  std::string source;  // file it was loaded from
  // Calibration for a GPU's arch, following `fallback`; NDT_CHECKs that one exists (the
  // loader guarantees a "default" entry).
  const ArchCalibration& For(const std::string& arch) const;
};

// Loads data/calibration/compute.yaml strictly ("" data_dir = NDT_DATA_DIR).
StatusOr<ComputeCalibration> LoadComputeCalibration(const std::string& data_dir);
StatusOr<ComputeCalibration> LoadComputeCalibrationFile(const std::string& path);
StatusOr<ComputeCalibration> ParseComputeCalibration(const std::string& text,
                                                     const std::string& name);

// hw precision of a model dtype.
Precision ToPrecision(Dtype d);
// The precision the GPU actually computes `d` in: `d` if it has a tensor path for it, else the
// next wider one it has (fp4 -> fp8 -> bf16 -> fp16 -> fp32): e.g. fp8 math on A100 runs at bf16.
Precision EffectivePrecision(const GpuSpec& gpu, Dtype d);

struct OpTiming {
  double time_s = 0;       // total, including launch
  double compute_s = 0;    // flop / (peak * efficiency)
  double memory_s = 0;     // bytes / (memory_Bps * hbm_fraction)
  double launch_s = 0;
  double efficiency = 0;   // fraction of peak assumed for the compute term
  bool memory_bound = false;
};

OpTiming OpTimeDetail(const GpuSpec& gpu, const Op& op, const ComputeCalibration& cal);
double OpTime(const GpuSpec& gpu, const Op& op, const ComputeCalibration& cal);
// Sum over ops (kernels run back to back on one stream).
double OpsTime(const GpuSpec& gpu, const std::vector<Op>& ops, const ComputeCalibration& cal);

// GEMM efficiency (fraction of dense peak) for C[m x n] = A[m x k] B[k x n] x batch.
double GemmEfficiency(const GpuSpec& gpu, int64_t m, int64_t n, int64_t k, int64_t batch,
                      Precision p, const ComputeCalibration& cal);
// Achieved FLOP/s of that GEMM (2 m n k batch / time, time including the memory roofline and
// launch), as microbenchmarks report it.
double GemmFlops(const GpuSpec& gpu, int64_t m, int64_t n, int64_t k, Precision p,
                 const ComputeCalibration& cal);

}  // namespace ndt

#endif  // NDTWIN_COMPUTE_COMPUTE_H_
