// File: compute/compute.h
// Time of one operator (model/ops.h) on one GPU (hw/spec.h): a roofline
//   t = max(flop / (peak(precision) * eff(op class, shape)), bytes / (memory_Bps * mem_eff))
//       + launch overhead
// GEMM efficiency models tile and wave quantization: tiles = ceil(m/Tm) * ceil(n/Tn) * batch
// (the fastest of the arch's CTA tiles, small-M tiles for a side shorter than Tm),
// split-K when tiles < SMs (splits = min(SMs / tiles, k / 256)), waves = ceil(tiles * splits /
// SMs), each wave costing one tile's k/splits work at a sustained fraction of peak plus a
// per-wave overhead; plus a per-kernel launch (fitted per architecture and precision).
// Attention: a FlashAttention fraction of peak per architecture; the unfused attention core's
// GEMMs and score passes (model/ops.h) at the roofline above divided by an efficiency (measured
// standard-attention speed / that roofline's). Element-wise and norms: achievable HBM bandwidth
// (STREAM fraction). All fitted numbers come from
// data/calibration/compute.yaml, fitted on ../shared/validation/calibration/microbench.csv
// only; an architecture without microbench rows (blackwell_ultra, volta, ...) uses the
// calibration of the architecture named by its `fallback:` with its own hardware facts (peak,
// SMs, bandwidth). Times in seconds.
#ifndef NDTWIN_COMPUTE_COMPUTE_H_
#define NDTWIN_COMPUTE_COMPUTE_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "hw/spec.h"
#include "model/ops.h"

namespace ndt {

// GEMM fit for one precision: sustained fraction of the dense peak, a fixed per-kernel cost and
// a per-wave cost (prologue/epilogue of each wave of CTAs).
struct GemmFit {
  double fraction = 0.8;
  double launch_s = 0;
  double wave_overhead_s = 0;
  // FP8 GEMMs run with the split accumulator (cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0: the
  // tensor cores' partial sums are promoted to FP32 on the CUDA cores every few K steps) sustain
  // this fraction instead of `fraction` (a fast-accumulation kernel's); training's backward FP8
  // GEMMs run it (SplitAccumulate in compute.cc). 0: no such kernel is modelled (`fraction`).
  double split_accumulate_fraction = 0;
};

// What a serving engine's kernels and host loop reach on one architecture, fitted on serving
// measurements (data/calibration/compute.yaml `serving:`, by src/serve/fit_serving.py on
// validation/calibration/serving.csv). ServingCalibration() applies it; without one, serving
// uses the microbenchmark fit and data/serve/engine.yaml's iteration overhead.
struct ServingFit {
  // Sustained fraction of the dense peak of the engine's GEMMs, by precision; replaces
  // GemmFit::fraction (launch and per-wave costs stay the microbenchmark's).
  std::map<Precision, double> gemm_fraction;
  double attention_fraction = 0;      // fused attention (FMHA/XQA) compute, of 16-bit dense peak
  double attention_hbm_fraction = 0;  // attention's K/V and Q/O traffic, of memory_Bps
  double iteration_overhead_s = 0;    // host cost of one engine iteration
  double overhead_per_seq_s = 0;      // host cost per sequence the iteration carries
};

// A fused attention kernel's rate in one direction, of the 16-bit dense peak, by how many K/V
// blocks each query block walks: rate = fraction * B / (B + overhead_blocks), B = the mean keys a
// query attends to / kv_block. Each CTA (one query block of one head) pays a fixed prologue and
// epilogue (load Q, write O and the softmax statistics; backward: load Q, dO, write dQ and the
// dK/dV partials) worth overhead_blocks K/V-block iterations, so short or causal sequences (few
// blocks per CTA) run further from the kernel's asymptotic rate.
struct AttentionRateFit {
  double fraction = 0;
  double overhead_blocks = 0;
  double Rate(double blocks) const {
    return blocks > 0 ? fraction * blocks / (blocks + overhead_blocks) : fraction;
  }
};

// An arch-native fused attention kernel's speed on a GPU of one arch over a GPU of its fallback
// arch, measured with the same software on both (compute.yaml `fused_attention_ratio`; GB300 over
// GB200 at cuDNN 9.17): each GPU's rows fitted in AttentionRateFit's form, each of its own 16-bit
// peak, so At(B) = gpu.Rate(B) / fallback.Rate(B) multiplies the fallback arch's fitted rate.
struct AttentionRateRatio {
  AttentionRateFit gpu, fallback;
  double At(double blocks) const {
    const double f = fallback.Rate(blocks);
    return f > 0 ? gpu.Rate(blocks) / f : 1.0;
  }
};

// Fitted per-architecture parameters (data/calibration/compute.yaml).
struct ArchCalibration {
  std::string arch;                // "ampere", "hopper", "blackwell", ... or "default"
  std::string fallback;            // non-empty: this arch uses that arch's fit (resolved on load)
  int tile_m = 128, tile_n = 128;  // CTA output tile of the GEMM kernels
  // Other CTA tiles the GEMM library picks from (each in both orientations, with the same
  // sustained fraction); the model takes the fastest tile per shape, as cuBLAS's heuristic picks
  // the tile with the least wave quantization; 16-bit (bf16/fp16) GEMMs only, where our measured
  // rows show it (fp8 and the others keep the one tile). Empty: (tile_m, tile_n) only.
  std::vector<std::pair<int, int>> more_tiles;
  // Small-M kernels (compute.yaml `small_m_gemm`): CTA tiles of small_m_tiles rows x tile_n
  // columns the GEMM library runs when a GEMM has fewer rows than tile_m on one side (decode's
  // few tokens: CUTLASS's 16/32/64-row tensor-op tiles, cuBLAS's GEMV for one row). Tried for
  // that short side only, every precision, beside the tiles above (the fastest wins): a one-row
  // GEMM pays 16 rows of tensor work, not tile_m, and streams its weights at the memory
  // roofline. A GEMM with both sides >= tile_m never sees them. Empty: no small-M kernels.
  std::vector<int> small_m_tiles;
  int sms_if_unknown = 0;             // SM count when the catalog has none (0: no wave model)
  std::map<Precision, GemmFit> gemm;  // by precision; others use GemmFor's preference order
  double attention_fraction = 0.5;    // FlashAttention forward fraction of the 16-bit dense peak
  // FlashAttention-2's backward rate (its FLOPs counted as 2.5x the forward's) / its forward rate;
  // the backward's fraction is attention_fraction x this.
  double attention_backward_ratio = 1.0;
  // cuDNN's arch-native fused attention (Hopper: FlashAttention-3 class, fitted on our own
  // H100/H200 rows; Blackwell: FlashAttention-4 class, fitted on NVIDIA's published B200 rows),
  // forward and backward; absent: kernels asking for it run FlashAttention-2's fractions.
  std::optional<AttentionRateFit> fused_attention_forward, fused_attention_backward;
  int fused_attention_kv_block = 128;  // keys per K/V block of those kernels
  // A fallback arch's own measured speed of the arch-native fused attention kernels over its
  // fallback's (compute.yaml `fused_attention_ratio`; blackwell_ultra: GB300 / GB200), by
  // direction; the fused rate (training's cudnn_fused curve, serving's attention fraction) is
  // multiplied by At(B). Absent: the fallback's rates stand (FlashAttention-2 always does).
  std::optional<AttentionRateRatio> fused_attention_ratio_forward, fused_attention_ratio_backward;
  // Set by ServingCalibration: every attention op is the serving engine's arch-native fused
  // kernel (FMHA/XQA), priced at `attention_fraction` x fused_attention_ratio_*.
  bool serving_kernels = false;
  double hbm_fraction = 0.85;  // achievable fraction of memory_Bps (STREAM)
  // Achievable fraction of memory_Bps for attention ops; 0: hbm_fraction.
  double attention_hbm_fraction = 0;
  // HBM bytes per second of memory-bound kernels that write their output transposed
  // (Op::transposes: Transformer Engine's FP8 cast-transpose family), from a timing of that
  // kernel on the arch (compute.yaml `transpose_kernels`). An absolute rate, not a fraction of
  // memory_Bps: such kernels are bound by staging tiles through shared memory, and run about as
  // fast on an H200 as on an H100. Never above the STREAM rate; 0: the STREAM rate.
  double transpose_Bps = 0;
  // Unfused attention core (model/ops.h): measured speed / the roofline's (standard attention).
  double unfused_attention_efficiency = 1.0;
  double kernel_overhead_s = 3e-6;  // fixed cost of a non-GEMM kernel
  // Grouped (MoE) GEMM kernels: their time over the dense GEMM model's at the same per-group shape
  // (m x n x k, batch groups), by rows per group: (rows, factor) points, rows ascending, read from
  // grouped-GEMM measurements (compute.yaml `grouped_gemm`); empty: factor 1. The points hold for
  // GEMMs in `grouped_gemm_precision` only (others: 1); `grouped_gemm_slowdown_by_gpu` replaces
  // the list for a GPU measured on its own (GpuSpec::name).
  std::optional<Precision> grouped_gemm_precision;
  std::vector<std::pair<double, double>> grouped_gemm_slowdown;
  std::map<std::string, std::vector<std::pair<double, double>>> grouped_gemm_slowdown_by_gpu;
  // The factor at `rows` per group on `gpu` (its name; "" or unlisted: the arch's list): linear in
  // log2(rows) between the points, the end point's value outside them (no extrapolation); 1
  // without points.
  double GroupedGemmSlowdown(double rows, const std::string& gpu = "") const;
  // Grouped kernels of other precisions, measured apart (compute.yaml `grouped_gemm`
  // `by_precision`): their own list and per-GPU lists, read the same way. fp16 reads bf16's
  // entry (the same 16-bit tensor-core kernels).
  struct GroupedGemmPoints {
    std::vector<std::pair<double, double>> slowdown;
    std::map<std::string, std::vector<std::pair<double, double>>> by_gpu;
  };
  std::map<Precision, GroupedGemmPoints> grouped_gemm_by_precision;
  // The factor for a grouped GEMM computing in `p`: the lists above where p is
  // grouped_gemm_precision (or that is unset), else p's by_precision entry, else 1.
  double GroupedGemmSlowdownIn(Precision p, double rows, const std::string& gpu) const;
  // Weight-only quantized GEMMs (weights stored narrower than the precision the GPU multiplies
  // in: fp8/fp4 weights on Ampere, TensorRT-LLM's fpA_intB kernels, Marlin): the kernel reads
  // the narrow weights from HBM and converts them to the math precision in registers, so the
  // bytes term counts the stored width (model/op_builder.h) and the compute term runs at the
  // math precision's rate over the kernel's own CTA tiles, each wave costing the larger of its
  // tensor-core work and its dequantization (the CTA's k x tile_n weights converted once per
  // M tile, dequant_ops_{8,4}bit lane instructions per weight element at the fp32 lane rate, issued
  // beside the tensor-core MMAs). compute.yaml `weight_only_gemm`; absent: such GEMMs run as the
  // dense GEMM model of the math precision.
  struct WeightOnlyGemm {
    std::vector<int> tiles_m;     // CTA tile rows the kernel picks from (the fastest per shape)
    int tile_n = 128;             // CTA tile columns (weights' output features)
    double dequant_ops_8bit = 0;  // lane instructions per 8-bit weight element converted
    double dequant_ops_4bit = 0;  // lane instructions per 4-bit weight element converted
  };
  std::optional<WeightOnlyGemm> weight_only_gemm;
  std::string how;  // how it was fitted
  // What public checks (never fitted) say about serving predictions on this architecture, for
  // the user to see beside them; empty when none is known. A fallback entry inherits its
  // target's unless it states its own.
  std::string serving_caveat;
  // The serving fit, if this arch (or its fallback target) has one.
  std::optional<ServingFit> serving;

  // The fit for p; else the 16-bit fit, else fp8, else fp4 (NDT_CHECK: at least one exists).
  const GemmFit& GemmFor(Precision p) const;
};

struct ComputeCalibration {
  std::map<std::string, ArchCalibration> archs;  // by arch name; fallbacks already resolved
  std::string source;                            // file it was loaded from
  // Calibration for a GPU's arch, or the "default" entry (the loader requires one).
  const ArchCalibration& For(const std::string& arch) const;
};

// The calibration a serving engine runs at: every arch with a `serving` fit gets its GEMM
// fractions, attention fraction and attention memory fraction (the microbenchmark fit stays for
// the rest: launch and wave costs, element-wise bandwidth), and the GEMM tile model it was fitted
// with (more_tiles and small_m_tiles cleared: the serving fractions were fitted on one tile
// shape); its attention ops are the engine's fused kernels (serving_kernels). Idempotent.
ComputeCalibration ServingCalibration(const ComputeCalibration& cal);

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
// A one-line note when the GPU has no tensor path for `d` (EffectivePrecision differs), e.g.
// "A100-SXM4-80GB has no fp8 tensor cores: the GEMMs run in bf16 (weight-only quantization: fp8
// storage)"; empty when it has one.
std::string PrecisionNote(const GpuSpec& gpu, Dtype d);

struct OpTiming {
  double time_s = 0;     // total, including launch
  double compute_s = 0;  // flop / (peak * efficiency)
  double memory_s = 0;   // bytes / (memory_Bps * hbm_fraction)
  double launch_s = 0;
  double efficiency = 0;  // fraction of peak assumed for the compute term
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
