// The stack traits that change which kernels a layer runs: eager element-wise kernels
// (Strategy::eager_elementwise) and torchtitan's op-level selective recompute
// (SelectiveRecompute::kAlternateMatmuls), priced end to end through the step with FakeCosts
// (each op max(flop / 100 TFLOP/s, bytes / 1 TB/s), no launch cost).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/ops.h"
#include "parallel/testing.h"
#include "parallel/train_sim.h"

namespace ndt {
namespace {

using testing::FakeCosts;
using testing::Resolve;

// Llama-style: 8 layers, h 1024, 16 heads of 64, 4 K/V heads, ffn 2816, RMSNorm, SwiGLU, RoPE.
TransformerSpec SmallLlama() {
  InlineModelArgs a;
  a.arch = "llama";
  a.layers = 8;
  a.hidden = 1024;
  a.heads = 16;
  a.kv_heads = 4;
  a.ffn = 2816;
  a.seq = 1024;
  a.vocab = 32000;
  return BuildInlineModel(a).value();
}

// One GPU, 4 micro-batches of one sequence, with recompute `r`.
Strategy OneGpuFourMicroBatches(const TransformerSpec& m, Recompute r) {
  Strategy s;
  s.gbs = 4;
  s.mbs = 1;
  s = Resolve(m, s, 1);
  s.recompute = r;
  return s;
}

double Step(const TransformerSpec& m, const Strategy& s) {
  FakeCosts costs;
  StatusOr<TrainSimResult> r = SimulateTrainingStep(m, s, costs, {});
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->step_time_s : 0;
}

// One GPU, 4 micro-batches of one 1,024-token sequence, no recompute. Per layer and micro-batch
// (T = 1024, h = 1024, Q = T x 16 x 64, K = T x 4 x 64, F = T x 2816, bf16, ops.cc's counts):
//   forward:  two norms 2 x ((36 - 4) T h + 16 T), RoPE (20 - 4)(Q + K), SwiGLU (10 - 6) F;
//   backward: two norms 2 x ((92 - 8) T h + 24 T - 2h) (a fused norm's backward reads its weight
//             twice, the eager one once), RoPE (20 - 8)(Q + K), SwiGLU (18 - 12) F;
// plus the final norm once per micro-batch, (32 + 84) T h + 40 T - 2h. All memory-bound: bytes
// at 1 TB/s.
TEST(EagerElementwise, AddsTheEagerKernelsBytesToTheStep) {
  const TransformerSpec m = SmallLlama();
  Strategy s = OneGpuFourMicroBatches(m, Recompute::kNone);
  const double fused = Step(m, s);
  s.eager_elementwise = true;
  const double eager = Step(m, s);
  const double T = 1024, h = 1024, Q = T * 16 * 64, K = T * 4 * 64, F = T * 2816;
  const double layer = 2 * (32 * T * h + 16 * T) + 16 * (Q + K) + 4 * F +
                       2 * (84 * T * h + 24 * T - 2 * h) + 12 * (Q + K) + 6 * F;
  const double final_norm = 116 * T * h + 40 * T - 2 * h;
  const double want = 4 * (8 * layer + final_norm) / 1e12;
  EXPECT_NEAR(eager - fused, want, 1e-6 * want);
}

// torchtitan's op-level selective recompute re-runs, per layer and micro-batch, every forward op
// but the attention kernel and the saved matmuls: wk's share of the fused QKV GEMM (4 K heads of
// 16 + 2 x 4: 1/6), all of wo (out_proj), w3's half of gate/up, none of w2 (mlp_down), and every
// norm, RoPE, SwiGLU and residual op. Megatron's selective recompute re-runs the attention core.
TEST(SelectiveRecompute, AlternateMatmulsReRunsWhatTorchtitansPolicyDoesNotSave) {
  const TransformerSpec m = SmallLlama();
  Strategy s = OneGpuFourMicroBatches(m, Recompute::kSelective);
  s.selective_recompute = SelectiveRecompute::kAttentionCore;
  const double core = Step(m, s);
  s.selective_recompute = SelectiveRecompute::kAlternateMatmuls;
  const double alternate = Step(m, s);
  OpShape shape;
  shape.seq_len = 1024;
  FakeCosts costs;
  double rerun = 0, attention = 0;
  for (const Op& op : LayerForwardOps(m, 0, shape)) {
    const double t = costs.OpsTime({op});
    if (op.kind == OpKind::kAttention) {
      attention += t;
    } else if (op.name == "qkv_proj") {
      rerun += t / 6;
    } else if (op.name == "out_proj") {
      rerun += t;
    } else if (op.name == "mlp_gate_up") {
      rerun += t / 2;
    } else if (op.kind != OpKind::kGemm) {
      rerun += t;  // norms, RoPE, SwiGLU, residual adds
    }
  }
  ASSERT_GT(rerun, 0);
  const double want = 4 * 8 * (rerun - attention);
  EXPECT_NEAR(alternate - core, want, 1e-6 * std::abs(want));
}

// Python issues a layer's forward kernels one at a time. With the eager kernels the small Llama's
// layer runs 31 of them (two norms of 8, QKV, RoPE 3 + 3, attention, out_proj, two residual adds,
// gate/up, silu and mul, down); at 1 ms each the host, not the GPU, sets the forward's pace:
// each layer's forward takes 31 ms instead of its kernels' GPU time (recompute off).
TEST(HostIssue, TheHostSetsThePaceWhereKernelsAreShorterThanItsIssueCost) {
  const TransformerSpec m = SmallLlama();
  Strategy s = OneGpuFourMicroBatches(m, Recompute::kNone);
  s.eager_elementwise = true;
  const double gpu = Step(m, s);
  s.host_issue_per_kernel_s = 1e-3;
  const double host = Step(m, s);
  OpShape shape;
  shape.seq_len = 1024;
  shape.eager_elementwise = true;
  const std::vector<Op> fwd = LayerForwardOps(m, 0, shape);
  ASSERT_EQ(fwd.size(), 31u);
  FakeCosts costs;
  const double fwd_s = costs.OpsTime(fwd);  // ~0.4 ms at FakeCosts' 100 TFLOP/s and 1 TB/s
  const double want = 4 * 8 * (31 * 1e-3 - fwd_s);
  EXPECT_NEAR(host - gpu, want, 1e-6 * want);
  // At the torchtitan stack's 22.5 us the host still binds on this fake GPU (31 x 22.5 us =
  // 0.70 ms against ~0.4 ms); at 1 ns per kernel it never does.
  s.host_issue_per_kernel_s = 22.5e-6;
  const double want22 = 4 * 8 * (31 * 22.5e-6 - fwd_s);
  ASSERT_GT(want22, 0);
  EXPECT_NEAR(Step(m, s) - gpu, want22, 1e-6 * want22);
  s.host_issue_per_kernel_s = 1e-9;
  EXPECT_DOUBLE_EQ(Step(m, s), gpu);
}

}  // namespace
}  // namespace ndt
