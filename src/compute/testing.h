// Shared fixtures of the compute tests (compute_test.cc, attention_tiles_test.cc,
// fused_attention_test.cc): the committed calibration and catalog, a synthetic GPU with round
// numbers, a GEMM op, a causal attention core, and one-arch calibrations for hand derivations.
#ifndef NDT_COMPUTE_TESTING_H_
#define NDT_COMPUTE_TESTING_H_

#include <cstdint>
#include <string>

#include "compute/compute.h"
#include "core/check.h"
#include "hw/catalog.h"
#include "model/ops.h"

namespace ndt {
namespace compute_testing {

inline const ComputeCalibration& Cal() {
  static const ComputeCalibration* cal = [] {
    StatusOr<ComputeCalibration> c = LoadComputeCalibration("");
    NDT_CHECK(c.ok(), c.status().message());
    return new ComputeCalibration(*c);
  }();
  return *cal;
}

inline const Catalog& Cat() {
  static const Catalog* cat = [] {
    StatusOr<Catalog> c = Catalog::Load(Catalog::DefaultDataDir());
    NDT_CHECK(c.ok(), c.status().message());
    return new Catalog(*c);
  }();
  return *cat;
}

inline GpuSpec Gpu(const std::string& name) {
  StatusOr<const GpuSpec*> g = Cat().FindGpu(name);
  NDT_CHECK(g.ok(), g.status().message());
  return **g;
}

// A synthetic Ampere GPU with round numbers for hand derivations.
inline GpuSpec Synthetic() {
  GpuSpec g;
  g.name = "synthetic";
  g.arch = "ampere";
  g.sms = 100;
  g.memory_Bps = 1e12;
  g.fp16_flops = g.bf16_flops = 100e12;
  g.fp32_flops = 10e12;
  return g;
}

// One causal bf16 attention core: `seqs` sequences x `heads` heads x `len` tokens, head_dim 128,
// run by `kernel`. FLOPs: len (len + 1) / 2 causal pairs per sequence and head, 2 x (128 + 128)
// each (QK^T and PV).
inline Op CausalAttentionCore(int seqs, int heads, int64_t len, AttentionKernel kernel) {
  Op op;
  op.kind = OpKind::kAttention;
  op.seqs = seqs;
  op.heads = heads;
  op.q_len = op.kv_len = len;
  op.head_dim_qk = op.head_dim_v = 128;
  op.causal = true;
  op.attention_kernel = kernel;
  op.flop = 2.0 * seqs * heads * (static_cast<double>(len) * (len + 1) / 2) * 256;
  return op;
}

inline Op Gemm(int64_t m, int64_t n, int64_t k, Dtype d = Dtype::kBf16) {
  Op op;
  op.kind = OpKind::kGemm;
  op.m = m;
  op.n = n;
  op.k = k;
  op.flop = 2.0 * m * n * k;
  op.bytes = 2.0 * (m * k + k * n + m * n);
  op.math = d;
  return op;
}

// A one-arch calibration with round numbers and an optional serving block (tests below).
inline std::string OneArch(const std::string& serving) {
  return "how: x\narchs:\n  - arch: default\n    tile: [128, 128]\n"
         "    gemm: {fp16: {fraction: 0.8, launch: 0 us, wave_overhead: 0 us, residuals: r}}\n"
         "    attention_fraction: 0.5\n    hbm_fraction: 0.8\n"
         "    unfused_attention_efficiency: 0.7\n    kernel_overhead: 2 us\n" +
         serving + "    how: h\n";
}
inline const char* const kServing =
    "    serving:\n      gemm_fraction: {fp16: 0.4}\n      attention_fraction: 0.25\n"
    "      attention_hbm_fraction: 0.5\n      iteration_overhead: 3 ms\n"
    "      overhead_per_seq: 10 us\n      residuals: r\n      how: h\n";

}  // namespace compute_testing
}  // namespace ndt

#endif  // NDT_COMPUTE_TESTING_H_
