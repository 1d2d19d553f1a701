// File: model/op_builder.h
// How model/ops.cc counts one operator's FLOPs and HBM bytes on one GPU: GEMMs, element-wise and
// norm passes (fused, or as PyTorch's eager kernels), quantization and index kernels. Internal to
// model/ (ops.cc says which operators a layer has; this says what each one moves).
#ifndef NDT_MODEL_OP_BUILDER_H_
#define NDT_MODEL_OP_BUILDER_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/ops.h"

namespace ndt {
namespace op_builder {

inline int64_t Ceil(double x) { return static_cast<int64_t>(std::ceil(x - 1e-9)); }

struct Builder {
  const TransformerSpec& spec;
  const OpShape& shape;
  std::vector<Op>* out;
  double a() const { return DtypeBytes(shape.activations); }
  double w() const { return DtypeBytes(shape.weights); }
  int t() const { return std::max(1, shape.tp); }
  // fp4 (NVFP4) GEMMs take their activation operand quantized (values + block scales): the
  // kernel before each GEMM writes it so. Wider math reads activations as stored.
  bool quantized_inputs() const { return shape.math == Dtype::kFp4; }
  double in() const { return quantized_inputs() ? DtypeBytes(shape.math) : a(); }
  // Transformer Engine's FP8 training recipe (fp8_autocast over te.LayerNormLinear, te.Linear and
  // te.LayerNormMLP, TE 1.x as Megatron-Core's TE layer spec runs it; set by LayerForwardOps for
  // fp8 math over 16-bit activations with fused element-wise kernels). Each linear layer's GEMM
  // reads FP8 operands (its input and the FP8 copy of its weight: 1 byte each) and writes a
  // 16-bit output. Its input is cast to FP8 by a memory-bound kernel TE runs before the GEMM,
  // `fp8_cast_transpose_fused` (read a, write the FP8 values and their transpose for the weight
  // gradient: a + 2 bytes per element), unless the producer writes it in FP8 (Fp8Output: the
  // norm of LayerNormLinear / LayerNormMLP, `layernorm_fwd_fp8` / `rmsnorm_fwd_fp8`, and
  // LayerNormMLP's activation), in which case the backward transposes it (`tex.fp8_transpose`,
  // 2 bytes per element). In the backward TE casts and transposes each GEMM's output gradient
  // (`grad_output_preprocess` -> `fp8_cast_transpose_fused` / `_bgrad_fused`: a + 2 bytes per
  // element) before the data- and weight-gradient GEMMs, except where LayerNormMLP fuses it into
  // the GELU backward (`fp8_cast_transpose_bgrad_dgelu_fused`). The amax of each cast is
  // reduced inside the cast kernel (delayed scaling); the per-step amax/scale update and the
  // weights' FP8 cast (once per step with Megatron-Core's is_first_microbatch caching) are not
  // per-micro-batch operators. Batched GEMMs over activations (unfused attention's QK^T, PV) are
  // not linear layers and keep their 16-bit path.
  //
  // Current scaling (OpShape::fp8_current_scaling; TE 2.2 pytorch/csrc/extensions cast.cpp,
  // normalization.cpp, activation.cpp): every cast first reads its 16-bit input once more for the
  // tensor's amax (`nvte_compute_amax`, a bytes per element) before it quantizes, and a norm or
  // activation can no longer write FP8 itself (normalization.cpp forces the unfused kernel for
  // Float8CurrentScalingQuantizer; activation.cpp computes the activation in 16-bit, then amax,
  // then quantize): the producer writes 16-bit and a quantize kernel reads it twice (amax, cast)
  // and writes FP8, 3a bytes per element more than the fused FP8 output. GELU's backward loses
  // its fused dgelu-cast (layernorm_mlp.py _get_act_func_supported_list: "Per-tensor current
  // scaling: []"), so FC1's output gradient is cast by a kernel of its own, as SwiGLU's is. The
  // one-thread `nvte_compute_scale_from_amax` kernel after each amax is not priced.
  bool te_fp8 = false;
  bool current_scaling() const { return te_fp8 && shape.fp8_current_scaling; }
  // HBM bytes of TE's cast-transpose of `elems` 16-bit values: read them (twice under current
  // scaling: the amax first), write the FP8 values and their FP8 transpose.
  double CastTransposeBytes(double elems) const {
    return elems * ((current_scaling() ? 2 : 1) * a() + 2 * DtypeBytes(Dtype::kFp8));
  }
  // The next GEMM reads an FP8 input its producer wrote (Fp8Output).
  bool fp8_input_fused = false;
  // The last op (a norm or activation feeding the next GEMM) writes its `elems` outputs in FP8
  // (1 byte instead of a); its backward keeps the 16-bit bytes it had. Under current scaling it
  // writes them at a and a separate kernel "<op>_fp8_quantize" reads them for the amax and again
  // for the cast (2a) and writes FP8 (1 byte); no backward (the GEMM's backward reads the FP8
  // copy, as it does after a fused FP8 output).
  void Fp8Output(double elems) {
    if (!te_fp8) return;
    fp8_input_fused = true;
    if (current_scaling()) {
      const std::string name = out->back().name + "_fp8_quantize";
      Memory(name, OpKind::kElementwise, 2 * elems, elems * (2 * a() + DtypeBytes(Dtype::kFp8)), 0)
          .no_backward = true;
      return;
    }
    Op& op = out->back();
    if (op.backward_bytes <= 0) op.backward_bytes = 2 * op.bytes;
    op.bytes -= elems * (a() - DtypeBytes(Dtype::kFp8));
  }
  // Dynamic NVFP4 quantization of `elems` activations feeding a GEMM whose producer does not
  // quantize (attention output, MLP activation): reads them at the activation dtype, writes
  // values + block scales, ~3 FLOP per element (abs-max, scale, convert). A separate kernel
  // (ASSUMPTION, conservative: TensorRT-LLM fuses it into the norm, norm_quant_fusion; other
  // producers may fuse it too, saving its launch and write).
  void Quantize(const char* name, double elems) {
    if (!quantized_inputs()) return;
    Elementwise(name, OpKind::kElementwise, elems, 1, 0, 3);
    out->back().bytes += elems * in();
  }

  // C[m x n] = A[m x k] W[k x n], `batch` times; `flop_m` is the exact (unquantized) row count
  // summed over the batch when it differs from m * batch (grouped expert GEMMs).
  void Gemm(const char* name, double m, int64_t n, int64_t k, int64_t batch = 1,
            double rows_total = -1) {
    const double rows = rows_total >= 0 ? rows_total : m * static_cast<double>(batch);
    // A linear layer under the FP8 recipe (te_fp8): one weight, or grouped experts.
    const bool fp8_linear = te_fp8 && (batch == 1 || rows_total >= 0);
    const double x_elems = rows * static_cast<double>(k);
    if (fp8_linear && !fp8_input_fused) {
      Op& cast = Memory(std::string(name) + "_x_fp8_cast_transpose", OpKind::kElementwise,
                        3 * x_elems, CastTransposeBytes(x_elems), 0);
      cast.no_backward = true;
      cast.transposes = true;
    }
    Op op;
    op.name = name;
    op.kind = OpKind::kGemm;
    op.m = std::max<int64_t>(1, Ceil(m));
    op.n = n;
    op.k = k;
    op.batch = batch;
    // Expert GEMMs (rows_total given): one grouped kernel over `batch` experts of m rows each.
    if (rows_total >= 0 && batch > 1) op.grouped_rows = static_cast<double>(op.m);
    op.flop = 2.0 * rows * static_cast<double>(n) * static_cast<double>(k);
    const double wb = fp8_linear ? DtypeBytes(Dtype::kFp8) : w();
    op.weight_bytes = static_cast<double>(batch) * static_cast<double>(k) * n * wb;
    const double x_bytes = fp8_linear ? DtypeBytes(Dtype::kFp8) : in();
    op.bytes =
        rows * (static_cast<double>(k) * x_bytes + static_cast<double>(n) * a()) + op.weight_bytes;
    op.math = shape.math;
    if (fp8_linear) {
      op.fp8_dy_cast_bytes = CastTransposeBytes(rows * static_cast<double>(n));
      if (fp8_input_fused) op.fp8_x_transpose_bytes = x_elems * 2 * DtypeBytes(Dtype::kFp8);
    }
    fp8_input_fused = false;
    out->push_back(op);
  }
  // An element-wise op over `elems` elements reading `reads` and writing `writes` tensors.
  void Elementwise(const char* name, OpKind kind, double elems, double reads, double writes,
                   double flop_per_elem, double weight_bytes = 0) {
    Memory(name, kind, flop_per_elem * elems, elems * (reads + writes) * a(), weight_bytes);
  }
  // A kernel over `elems` int32 indices moving `bytes_per_elem` bytes each; no backward (the
  // backward reuses its result).
  void Index(const char* name, double elems, double bytes_per_elem) {
    Memory(name, OpKind::kElementwise, 0, elems * bytes_per_elem, 0).no_backward = true;
  }
  // A non-GEMM op of `flop` FLOPs moving `bytes` of activations and its `weight_bytes`.
  Op& Memory(std::string name, OpKind kind, double flop, double bytes, double weight_bytes) {
    Op op;
    op.name = std::move(name);
    op.kind = kind;
    op.flop = flop;
    op.weight_bytes = weight_bytes;
    op.bytes = bytes + weight_bytes;
    op.math = shape.math;
    out->push_back(std::move(op));
    return out->back();
  }
  // Tokens seen by norms / residuals on this GPU (sequence parallel divides them by t).
  double NormTokens(double tokens) const { return shape.sequence_parallel ? tokens / t() : tokens; }
  // Element-wise ops as PyTorch eager kernels (OpShape::eager_elementwise; not with FP4 inputs,
  // whose quantization a fused producer writes).
  bool eager() const { return shape.eager_elementwise && !quantized_inputs(); }
  // One eager kernel over `elems` elements moving `fwd` HBM bytes per element, whose autograd
  // backward kernels move `bwd` bytes per element (Op::backward_bytes).
  void EagerKernel(const std::string& name, OpKind kind, double elems, double fwd, double bwd,
                   double flop_per_elem, double weight_bytes = 0) {
    Memory(name, kind, flop_per_elem * elems, elems * fwd, weight_bytes).backward_bytes =
        elems * bwd + weight_bytes;
  }
  // torchtitan's RMSNorm (torchtitan/models/norms.py, 2024): `(x.float() * torch.rsqrt(
  // x.float().pow(2).mean(-1, keepdim=True) + eps)).type_as(x) * weight`, eight kernels; per
  // element of x (a = activation bytes, fp32 = 4), forward / backward (PyTorch's derivatives.yaml):
  //   x.float()      a+4 / 4+a  (the gradient cast back)
  //   pow(2)         8   / 28   (pow_backward: grad * 2 * x.pow(1): copy 8, scale 8, mul 12)
  //   mean(-1)       4   / 4    (mean_backward writes the expanded gradient / h)
  //   + eps, rsqrt   per token only
  //   x * rsqrt      8   / 36   (grad * rsqrt 8; grad * x 12 and its row sum 4; the add of x's
  //                              two gradients, from here and from pow, 12)
  //   type_as(x)     4+a / a+4
  //   * weight       2a  / 6a   (grad * weight 2a; grad * out 3a and its column sum a)
  // 4a + 28 bytes forward (36 in bf16) and 8a + 76 backward (92), where a fused norm moves 2a
  // and 4a.
  void EagerRmsNorm(const std::string& name, double tokens) {
    const double h = static_cast<double>(spec.hidden);
    const double rows = NormTokens(tokens), elems = rows * h, x = a();
    EagerKernel(name + ".to_fp32", OpKind::kNorm, elems, x + 4, 4 + x, 0);
    EagerKernel(name + ".pow", OpKind::kNorm, elems, 8, 28, 1);
    EagerKernel(name + ".mean", OpKind::kNorm, elems, 4, 4, 1);
    EagerKernel(name + ".add_eps", OpKind::kNorm, rows, 8, 8, 1);
    EagerKernel(name + ".rsqrt", OpKind::kNorm, rows, 8, 16, 1);
    EagerKernel(name + ".mul_rsqrt", OpKind::kNorm, elems, 8, 36, 1);
    EagerKernel(name + ".to_act", OpKind::kNorm, elems, 4 + x, x + 4, 0);
    EagerKernel(name + ".mul_weight", OpKind::kNorm, elems, 2 * x, 6 * x, 1, h * w());
  }
  void Norm(const char* name, double tokens) {
    const double h = static_cast<double>(spec.hidden);
    if (eager() && spec.norm == NormType::kRmsNorm) {
      EagerRmsNorm(name, tokens);
      return;
    }
    // Fused norm + quantization (TensorRT-LLM norm_quant_fusion) writes the GEMM's input.
    const double elems = NormTokens(tokens) * h;
    Elementwise(name, OpKind::kNorm, elems, 1, quantized_inputs() ? 0 : 1, 5,
                (spec.norm == NormType::kLayerNorm ? 2 : 1) * h * w());
    if (quantized_inputs()) out->back().bytes += elems * in();
  }
};

}  // namespace op_builder
}  // namespace ndt

#endif  // NDT_MODEL_OP_BUILDER_H_
