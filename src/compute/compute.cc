// File: compute/compute.cc
// Operator time on one GPU: roofline with GEMM tile/wave quantization, FlashAttention and
// STREAM fractions (see compute.h; the fit is in data/calibration/compute.yaml).
#include "compute/compute.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

namespace ndt {

Precision ToPrecision(Dtype d) {
  switch (d) {
    case Dtype::kFp32:
      return Precision::kFp32;
    case Dtype::kFp16:
      return Precision::kFp16;
    case Dtype::kBf16:
      return Precision::kBf16;
    case Dtype::kFp8:
      return Precision::kFp8;
    case Dtype::kFp4:
      return Precision::kFp4;
  }
  return Precision::kBf16;
}

namespace {

// Smallest K chunk of a split-K GEMM (CUTLASS/cuBLAS split-K and stream-K kernels; not fitted).
constexpr double kSplitKMin = 256;

Precision BestOf(const GpuSpec& gpu, std::initializer_list<Precision> candidates) {
  Precision best = *candidates.begin();
  double best_peak = -1;
  for (Precision p : candidates) {
    const double peak = gpu.PeakFlops(p);
    if (peak > best_peak) {
      best = p;
      best_peak = peak;
    }
  }
  return best;
}

Precision EffectiveOf(const GpuSpec& gpu, Precision p) {
  if (gpu.PeakFlops(p) > 0 && p != Precision::kFp32) {
    // A narrower format never runs slower than a wider one the GPU computes faster.
    switch (p) {
      case Precision::kFp4:
        return BestOf(gpu, {Precision::kFp4, Precision::kFp8, Precision::kBf16, Precision::kFp16,
                            Precision::kFp32});
      case Precision::kFp8:
        return BestOf(gpu, {Precision::kFp8, Precision::kBf16, Precision::kFp16, Precision::kFp32});
      default:
        return BestOf(gpu, {p, Precision::kFp16, Precision::kBf16, Precision::kFp32});
    }
  }
  switch (p) {
    case Precision::kFp4:
      return BestOf(gpu, {Precision::kFp8, Precision::kBf16, Precision::kFp16, Precision::kFp32});
    case Precision::kFp8:
      return BestOf(gpu, {Precision::kBf16, Precision::kFp16, Precision::kFp32});
    case Precision::kBf16:
    case Precision::kFp16:
      return BestOf(gpu, {Precision::kFp16, Precision::kBf16, Precision::kFp32});
    default:
      return Precision::kFp32;
  }
}

// Peak for p; fp32 falls back to tf32 tensor cores when the vector rate is missing.
double Peak(const GpuSpec& gpu, Precision p) {
  double v = gpu.PeakFlops(p);
  if (v <= 0) v = gpu.PeakFlops(Precision::kFp32);
  return v;
}

int Sms(const GpuSpec& gpu, const ArchCalibration& cal) {
  return gpu.sms > 0 ? gpu.sms : cal.sms_if_unknown;
}

double MemoryTime(const GpuSpec& gpu, double fraction, double bytes) {
  if (bytes <= 0) return 0;
  NDT_CHECK(gpu.memory_Bps > 0, "GPU '" + gpu.name + "' has no memory bandwidth");
  return bytes / (gpu.memory_Bps * fraction);
}

// Whether a GEMM runs the split (FP32-promoted) accumulator: the backward (dgrad, wgrad) FP8
// GEMMs of training. Transformer Engine runs them with use_split_accumulator (`_2X_ACC_DGRAD`,
// `_2X_ACC_WGRAD` = True; common/gemm/cublaslt_gemm.cu: FAST_ACCUM = 0), its forward without
// (`_2X_ACC_FPROP` = False); torchao's Float8Linear likewise (gemm_config_output
// use_fast_accum=True, grad_input / grad_weight default False). Serving has no backward.
bool SplitAccumulate(const Op& op, Precision p) {
  return op.kind == OpKind::kGemm && op.pass == Pass::kBackward && p == Precision::kFp8;
}

// Compute time of a GEMM at precision p (waves of tiles), best of both tile orientations;
// split_accumulate: at the fit's split-accumulator fraction where it has one.
double GemmComputeTime(const GpuSpec& gpu, const ArchCalibration& cal, int64_t m, int64_t n,
                       int64_t k, int64_t batch, Precision p, bool split_accumulate = false) {
  const GemmFit& fit = cal.GemmFor(p);
  const double fraction = split_accumulate && fit.split_accumulate_fraction > 0
                              ? fit.split_accumulate_fraction
                              : fit.fraction;
  const double peak = Peak(gpu, p) * fraction;
  NDT_CHECK(peak > 0, "GPU '" + gpu.name + "' has no compute rate");
  const int sms = Sms(gpu, cal);
  const double mm = static_cast<double>(std::max<int64_t>(1, m));
  const double nn = static_cast<double>(std::max<int64_t>(1, n));
  const double kk = static_cast<double>(std::max<int64_t>(1, k));
  const double bb = static_cast<double>(std::max<int64_t>(1, batch));
  if (sms <= 0) return 2.0 * mm * nn * kk * bb / peak + fit.wave_overhead_s;
  double best = -1;
  auto try_tile = [&](double tm, double tn) {
    const double tiles = std::ceil(mm / tm) * std::ceil(nn / tn) * bb;
    // Split-K / stream-K: with fewer tiles than SMs, K is split in chunks of >= kSplitKMin.
    const double splits =
        std::max(1.0, std::min(std::floor(sms / tiles), std::floor(kk / kSplitKMin)));
    const double waves = std::ceil(tiles * splits / sms);
    const double t = waves * (sms * tm * tn * 2.0 * (kk / splits) / peak + fit.wave_overhead_s);
    if (best < 0 || t < best) best = t;
  };
  try_tile(cal.tile_m, cal.tile_n);
  try_tile(cal.tile_n, cal.tile_m);
  // The extra tiles are the 16-bit GEMMs' (ArchCalibration::more_tiles); other precisions keep
  // the one tile.
  if (p == Precision::kBf16 || p == Precision::kFp16) {
    for (const auto& [tm, tn] : cal.more_tiles) {
      try_tile(tm, tn);
      try_tile(tn, tm);
    }
  }
  // Small-M kernels (ArchCalibration::small_m_tiles) on a side shorter than the CTA tile: the
  // library runs a kernel whose rows cover those few rows (m = 1: 16 rows of tensor work, not
  // tile_m). Larger GEMMs never try them, so the microbenchmark fit stays as it was.
  for (int rows : cal.small_m_tiles) {
    if (mm < cal.tile_m) try_tile(rows, cal.tile_n);
    if (nn < cal.tile_m) try_tile(cal.tile_n, rows);
  }
  return best;
}

// Compute time of a weight-only GEMM (ArchCalibration::WeightOnlyGemm): the kernel's CTA tiles
// (tile_m rows of activations x tile_n weight columns; the weights are always the N side), split-K
// as above, each wave the larger of the tensor-core work at the math precision p and the
// dequantization of the wave's weights (tile_n x k/splits elements per CTA, dequant_ops lane
// instructions each at the fp32 lane rate: one FMA lane instruction is 2 FLOP of the fp32 peak),
// plus the per-wave cost; the fastest tile. Without an SM count: the dense model.
double WeightOnlyComputeTime(const GpuSpec& gpu, const ArchCalibration& cal, int64_t m, int64_t n,
                             int64_t k, int64_t batch, Precision p, double weight_bytes) {
  const ArchCalibration::WeightOnlyGemm& wo = *cal.weight_only_gemm;
  // 4-bit weights (half a byte) convert with their own instruction count.
  const double ops = weight_bytes < 0.75 ? wo.dequant_ops_4bit : wo.dequant_ops_8bit;
  const int sms = Sms(gpu, cal);
  if (sms <= 0) return GemmComputeTime(gpu, cal, m, n, k, batch, p);
  const GemmFit& fit = cal.GemmFor(p);
  const double peak = Peak(gpu, p) * fit.fraction;
  const double lanes = gpu.PeakFlops(Precision::kFp32) / 2.0;  // lane instructions per second
  NDT_CHECK(peak > 0 && lanes > 0, "GPU '" + gpu.name + "' has no compute rate");
  const double mm = static_cast<double>(std::max<int64_t>(1, m));
  const double nn = static_cast<double>(std::max<int64_t>(1, n));
  const double kk = static_cast<double>(std::max<int64_t>(1, k));
  const double bb = static_cast<double>(std::max<int64_t>(1, batch));
  const double tn = wo.tile_n;
  double best = -1;
  for (int tile_m : wo.tiles_m) {
    const double tm = tile_m;
    const double tiles = std::ceil(mm / tm) * std::ceil(nn / tn) * bb;
    const double splits =
        std::max(1.0, std::min(std::floor(sms / tiles), std::floor(kk / kSplitKMin)));
    const double waves = std::ceil(tiles * splits / sms);
    const double math = sms * tm * tn * 2.0 * (kk / splits) / peak;
    const double dequant = sms * tn * (kk / splits) * ops / lanes;
    const double t = waves * (std::max(math, dequant) + fit.wave_overhead_s);
    if (best < 0 || t < best) best = t;
  }
  return best;
}

// A GEMM whose weights (Op::weight_bytes over its k x n x batch elements) are stored quantized
// (under 2 bytes: fp8, fp4) and narrower than the precision p it multiplies in, on an arch with a
// weight-only kernel model. 16-bit weights multiplied wider (fp32 math on a GPU without 16-bit
// tensor cores) are converted as they are loaded, as before: not this kernel.
// Returns the bytes per weight element, 0 when not weight-only.
double WeightOnlyBytes(const Op& op, Precision p, const ArchCalibration& cal) {
  // Forward GEMMs only: a backward GEMM keeps its forward's weight_bytes over permuted (m, n, k).
  if (!cal.weight_only_gemm || op.weight_bytes <= 0 || op.pass != Pass::kForward) return 0;
  const double elems = static_cast<double>(std::max<int64_t>(1, op.batch)) *
                       static_cast<double>(op.k) * static_cast<double>(op.n);
  if (elems <= 0) return 0;
  const double per = op.weight_bytes / elems;
  return per < 2.0 && per < BytesPer(p) ? per : 0;
}

}  // namespace

Precision EffectivePrecision(const GpuSpec& gpu, Dtype d) {
  return EffectiveOf(gpu, ToPrecision(d));
}

std::string PrecisionNote(const GpuSpec& gpu, Dtype d) {
  const Precision p = EffectivePrecision(gpu, d);
  if (p == ToPrecision(d)) return "";
  std::string note =
      gpu.name + " has no " + DtypeName(d) + " tensor cores: the GEMMs run in " + PrecisionName(p);
  if (DtypeBytes(d) < 2) {
    note += std::string(" (weight-only quantization: ") + DtypeName(d) + " storage)";
  }
  return note;
}

OpTiming OpTimeDetail(const GpuSpec& gpu, const Op& op, const ComputeCalibration& calib) {
  const ArchCalibration& cal = calib.For(gpu.arch);
  OpTiming t;
  const Precision p = EffectivePrecision(gpu, op.math);
  switch (op.kind) {
    case OpKind::kGemm: {
      const double weight_only = WeightOnlyBytes(op, p, cal);
      t.compute_s =
          weight_only > 0
              ? WeightOnlyComputeTime(gpu, cal, op.m, op.n, op.k, op.batch, p, weight_only)
              : GemmComputeTime(gpu, cal, op.m, op.n, op.k, op.batch, p, SplitAccumulate(op, p));
      t.launch_s = cal.GemmFor(p).launch_s;
      break;
    }
    case OpKind::kAttention: {
      // FlashAttention runs its matmuls in 16-bit.
      const Precision p16 = EffectivePrecision(gpu, Dtype::kBf16);
      const bool backward = op.pass == Pass::kBackward;
      double fraction = cal.attention_fraction * (backward ? cal.attention_backward_ratio : 1.0);
      const std::optional<AttentionRateFit>& fused =
          backward ? cal.fused_attention_backward : cal.fused_attention_forward;
      const std::optional<AttentionRateRatio>& ratio =
          backward ? cal.fused_attention_ratio_backward : cal.fused_attention_ratio_forward;
      const bool cudnn = op.attention_kernel == AttentionKernel::kCudnnFused && fused;
      // K/V blocks a query block walks: the mean keys per query (causal: about half the keys)
      // over the kernel's block.
      const double dims = static_cast<double>(op.head_dim_qk + op.head_dim_v);
      const double pairs =
          op.q_len > 0 && op.seqs > 0 && op.heads > 0 && dims > 0
              ? op.flop / (2.0 * op.seqs * op.heads * dims * (backward ? 2.5 : 1.0))
              : 0;
      const double blocks = op.q_len > 0 ? pairs / op.q_len / cal.fused_attention_kv_block : 0;
      if (cudnn) fraction = fused->Rate(blocks);
      // The arch-native fused kernels (training's cuDNN, serving's engine kernels) at this
      // GPU's measured speed over its fallback's; FlashAttention-2 (sm80 code, the same on both)
      // keeps the fallback's fraction.
      if ((cudnn || cal.serving_kernels) && ratio) fraction *= ratio->At(blocks);
      const double peak = Peak(gpu, p16) * fraction;
      t.compute_s = op.flop > 0 ? op.flop / peak : 0;
      t.launch_s = cal.kernel_overhead_s;
      break;
    }
    default: {
      const double vec = gpu.PeakFlops(Precision::kFp32);
      t.compute_s = op.flop > 0 && vec > 0 ? op.flop / vec : 0;
      t.launch_s = cal.kernel_overhead_s;
      break;
    }
  }
  const bool attention_mem = op.kind == OpKind::kAttention && cal.attention_hbm_fraction > 0;
  double fraction = attention_mem ? cal.attention_hbm_fraction : cal.hbm_fraction;
  if (op.transposes && cal.transpose_Bps > 0 && gpu.memory_Bps > 0) {
    // A transposing kernel's measured rate, never above streaming's.
    fraction = std::min(fraction, cal.transpose_Bps / gpu.memory_Bps);
  }
  t.memory_s = MemoryTime(gpu, fraction, op.bytes);
  t.memory_bound = t.memory_s > t.compute_s;
  if (op.kind == OpKind::kGemm && op.grouped_rows > 0 && op.batch > 1) {
    // A grouped (MoE) kernel over `batch` experts of grouped_rows rows each runs slower than the
    // dense model of the same per-group shape (the arch's measured grouped-GEMM rows, in their
    // precision, compute.yaml `grouped_gemm`): both terms stretch by the same factor.
    const double slow = cal.GroupedGemmSlowdownIn(p, op.grouped_rows, gpu.name);
    t.compute_s *= slow;
    t.memory_s *= slow;
  }
  t.time_s = std::max(t.compute_s, t.memory_s) + t.launch_s;
  if (op.kind != OpKind::kAttention && IsAttentionCore(op)) {
    t.time_s /= cal.unfused_attention_efficiency;
  }
  const double peak = Peak(gpu, p);
  t.efficiency = t.compute_s > 0 && peak > 0 ? op.flop / (peak * t.compute_s) : 0;
  return t;
}

ComputeCalibration ServingCalibration(const ComputeCalibration& cal) {
  ComputeCalibration out = cal;
  for (auto& [name, a] : out.archs) {
    if (!a.serving) continue;
    a.more_tiles.clear();
    a.small_m_tiles.clear();
    for (const auto& [p, fraction] : a.serving->gemm_fraction) {
      auto it = a.gemm.find(p);
      if (it != a.gemm.end()) it->second.fraction = fraction;
    }
    a.serving_kernels = true;
    if (a.serving->attention_fraction > 0) a.attention_fraction = a.serving->attention_fraction;
    if (a.serving->attention_hbm_fraction > 0) {
      a.attention_hbm_fraction = a.serving->attention_hbm_fraction;
    }
  }
  return out;
}

double OpTime(const GpuSpec& gpu, const Op& op, const ComputeCalibration& cal) {
  return OpTimeDetail(gpu, op, cal).time_s;
}

double OpsTime(const GpuSpec& gpu, const std::vector<Op>& ops, const ComputeCalibration& cal) {
  double t = 0;
  for (const Op& op : ops) t += OpTime(gpu, op, cal);
  return t;
}

double GemmEfficiency(const GpuSpec& gpu, int64_t m, int64_t n, int64_t k, int64_t batch,
                      Precision p, const ComputeCalibration& calib) {
  const ArchCalibration& cal = calib.For(gpu.arch);
  const double flop = 2.0 * static_cast<double>(m) * n * k * batch;
  const double peak = Peak(gpu, p);
  return flop / (peak * GemmComputeTime(gpu, cal, m, n, k, batch, p));
}

double GemmFlops(const GpuSpec& gpu, int64_t m, int64_t n, int64_t k, Precision p,
                 const ComputeCalibration& calib) {
  // The microbenchmarks' layout: inputs at p (fp4: NVFP4, values + E4M3 block scales, as
  // cuBLASLt's block-scaled FP4 GEMM reads them), 16-bit output.
  Op op;
  op.kind = OpKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flop = 2.0 * static_cast<double>(m) * n * k;
  const double in = p == Precision::kFp4 ? DtypeBytes(Dtype::kFp4) : BytesPer(p);
  op.bytes = (static_cast<double>(m) * k + static_cast<double>(k) * n) * in +
             static_cast<double>(m) * n * 2.0;
  switch (p) {
    case Precision::kFp4:
      op.math = Dtype::kFp4;
      break;
    case Precision::kFp8:
      op.math = Dtype::kFp8;
      break;
    case Precision::kFp16:
      op.math = Dtype::kFp16;
      break;
    case Precision::kFp32:
    case Precision::kTf32:
    case Precision::kFp64:
      op.math = Dtype::kFp32;
      break;
    default:
      op.math = Dtype::kBf16;
      break;
  }
  return op.flop / OpTime(gpu, op, calib);
}

}  // namespace ndt
