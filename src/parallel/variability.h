// File: parallel/variability.h
// GPU-to-GPU speed variability and the straggler it makes (issue 15, "what breaks at scale").
// GPUs of one model differ in sustained speed (silicon, power and thermal limits: Sinha et al.,
// SC22). Synchronous training waits at every step for its slowest GPU, so a job of N GPUs runs at
// the expected slowest of N draws, where the compute model prices the median GPU.
//
// Model (data/variability.yaml says where each piece comes from): a GPU's duration offset from the
// median is sigma Z, Z standard normal truncated at the Tukey fences +-c (c = 2.698, the GPUs
// beyond them drained by health checks); Sinha's "variability" V is the fence range over the
// median, so sigma = V / (2c). The offset is static (a property of the GPU). All of a job's GPUs
// synchronise each step, so the kernels on the step's critical path take 1 + sigma E[max of N Z]
// longer; E[max] is a numeric integral (deterministic, no sampling).
#ifndef NDTWIN_PARALLEL_VARIABILITY_H_
#define NDTWIN_PARALLEL_VARIABILITY_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "parallel/train_sim.h"

namespace ndt {

// Tukey's upper fence Q3 + 1.5 IQR of a standard normal, in sigma: 0.6745 + 1.5 x 1.3490.
inline constexpr double kTukeyFenceSigmas = 2.697959;

// One architecture's spread. variability 0: none (the flag off, or no entry).
struct GpuVariability {
  double variability = 0;  // Sinha's fence range over the median (fraction of the median)
  std::string basis;       // "measured (...)" or "assumed from ..."
  // sigma of the per-GPU duration offset, as a fraction of the median's.
  double sigma() const { return variability / (2.0 * kTukeyFenceSigmas); }
};

struct GpuVariabilityTable {
  struct Entry {
    std::string arch;
    GpuVariability v;
  };
  std::vector<Entry> archs;
  // The entry for `arch`, or none (variability 0) when the file has no entry for it.
  GpuVariability For(const std::string& arch) const;
};

// data_dir/variability.yaml (strict). Errors carry file:line.
StatusOr<GpuVariabilityTable> LoadGpuVariability(const std::string& data_dir);
StatusOr<GpuVariabilityTable> ParseGpuVariability(const std::string& text, const std::string& name);

// E[max of n iid standard normals truncated to [-c, c]]; c <= 0: not truncated. n >= 1.
// = hi - integral_lo^hi F(z)^n dz over the support (Simpson, fixed grid): deterministic.
double ExpectedMaxNormal(int n, double c);

// Expected slowdown of the slowest of n GPUs over the median GPU, as a fraction: sigma E[max].
double StragglerFraction(const GpuVariability& v, int n);

// The straggler's seconds on a finished step: `fraction` times the kernel time on the step's
// critical path, stage 0's kernels plus the kernel share of its bubble (the bubble waits on the
// other stages' passes, which are kernels and communication in stage 0's proportions):
// compute_s (1 + bubble / (compute + TP + CP + EP)).
double StragglerSeconds(const TimeBreakdown& bd, double fraction);

// The hook where a training step is finished (parallel/train.cc RunTraining): adds the straggler
// of `gpus` GPUs to the step time and to breakdown.straggler_s. No-op when v.variability is 0.
void ApplyStraggler(const GpuVariability& v, int gpus, TrainSimResult* r);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_VARIABILITY_H_
