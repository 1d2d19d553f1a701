#include <gtest/gtest.h>

#include "parallel/memory.h"
#include "parallel/testing.h"
#include "parallel/train_sim.h"

namespace ndt {
namespace {

using testing::FakeCosts;
using testing::Resolve;
using testing::SmallGpt;

TEST(TrainSim, ZeroThreeExposesPerLayerGathersSlowerThanCompute) {
  // 8 layers of h = 1024: 12 h^2 + 13 h = 12.6 M params, 25.2 MB in 16 bits per layer. At a
  // 1 GB/s bus over dp 8 one all-gather (or reduce-scatter) takes g = 7/8 x 25.2 MB / 1 GB/s =
  // 22 ms, against ~0.3 ms (forward) of layer compute at 100 TFLOP/s: each layer exposes its two
  // gathers and one reduce-scatter, 3 g, less its own compute. So the DP time is between
  // 8 x 3 g - all compute and 8 x 3 g (+ the tail's own gradient reduction, none with ZeRO-3).
  // With free communication the same job exposes nothing.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.zero = 3;
  s = Resolve(m, s, 8);
  const double h = 1024, p = 12 * h * h + 13 * h, g = 7.0 / 8.0 * 2 * p / 1e9;
  FakeCosts slow(1e9, 1e30), free_comm(1e30, 1e30);
  auto r = SimulateTrainingStep(m, s, slow, {});
  auto f = SimulateTrainingStep(m, s, free_comm, {});
  ASSERT_TRUE(r.ok() && f.ok());
  EXPECT_LE(r->breakdown.dp_comm_s, 8 * 3 * g * 1.001);
  EXPECT_GE(r->breakdown.dp_comm_s, 8 * 3 * g - r->breakdown.compute_s);
  EXPECT_GT(r->step_time_s, f->step_time_s + 8 * 3 * g - r->breakdown.compute_s);
  EXPECT_LT(f->breakdown.dp_comm_s, 1e-9);
}

// All-gathers cost `alpha_s` + (n-1)/n x bytes / bus_Bps; every other collective is free, so
// the DP time counts the ZeRO-3 gathers alone.
class GatherOnlyCosts : public FakeCosts {
 public:
  GatherOnlyCosts(double alpha_s, double bus_Bps) : alpha_s_(alpha_s), bus_Bps_(bus_Bps) {}
  double CommTime(CommKind k, double bytes, std::span<const int> g) const override {
    if (k != CommKind::kAllGather) return 0;
    const double n = static_cast<double>(g.size());
    return alpha_s_ + (n - 1) / n * bytes / bus_Bps_;
  }

 private:
  double alpha_s_, bus_Bps_;
};

TEST(TrainSim, OverlappedParamGatherExposesOnlyItsFirstBucket) {
  // ZeRO 1 over dp 2, one micro-batch; only all-gathers cost (100 GB/s bus, no latency): the
  // updated weights' gather of the stage's P parameters in 16 bits takes full = 1/2 x 2P / 1e11
  // (P = 153 M for SmallGpt: 1.5 ms). With overlap_param_gather and 1 M-parameter buckets the
  // first bucket's gather, 1/2 x 2 x 1e6 / 1e11 = 10 us, stays exposed and the rest hides under
  // the forward (8 layers and the 51k-vocabulary head at 100 TFLOP/s: ~3 ms > 1.5 ms), so the
  // step is shorter by full - 10 us, in both fidelities (FakeCosts' collectives take no SMs).
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 2;
  s.zero = 1;
  s = Resolve(m, s, 2);
  ASSERT_EQ(s.dp, 2);
  const double p = StageParamsPerGpu(m, s, 0);
  const double full = 0.5 * 2 * p / 1e11, first = 0.5 * 2 * 1e6 / 1e11;
  GatherOnlyCosts costs(0, 1e11);
  for (bool closed : {false, true}) {
    TrainSimOptions o;
    o.dp_bucket_params = 1e6;
    o.closed_form = closed;
    Strategy on = s;
    on.overlap_param_gather = true;
    auto a = SimulateTrainingStep(m, s, costs, o);
    auto b = SimulateTrainingStep(m, on, costs, o);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_NEAR(a->step_time_s - b->step_time_s, full - first, 1e-9) << "closed " << closed;
  }
}

TEST(TrainSim, ZeroThreeBlockCopyOutRunsOnTheComputeStream) {
  // FSDP2's copy-out of each gathered block (per_block, block_copy_out): with free collectives
  // only the copies remain, one per gather: 8 layers x 2 gathers (forward, backward) x 4 B/param
  // (read and write 16 bits) x 12 h^2 + 13 h = 12,596,224 params at FakeCosts' 1 TB/s:
  // 16 x 4 x 12,596,224 / 1e12 = 0.806 ms. The embedding and head are not gathered per block.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.zero = 3;
  s.zero3.block_copy_out = true;
  s = Resolve(m, s, 8);
  auto r = SimulateTrainingStep(m, s, FakeCosts(1e30, 1e30), {});
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->breakdown.dp_comm_s, 16 * 4 * 12'596'224 / 1e12, 1e-12);
}

TEST(TrainSim, ZeroThreePerTensorGathersEachLargeTensorOnTheCriticalPath) {
  // DeepSpeed 2021's trait on SmallGpt (8 layers, h = 1024, vocab 51200, seq 1024, learned
  // positions, tied embeddings), dp 8, one micro-batch, full recompute, persistence threshold
  // 1e5 elements, no prefetch (bucket 1 element). Tensors >= 1e5 elements per layer: QKV 3h^2,
  // proj h^2, fc1 4h^2, fc2 4h^2 (biases <= 4h and norms are persistent); each is gathered in the
  // forward, the recomputed forward and the backward: 8 layers x 4 x 3 = 96 all-gathers. The
  // word embedding (51200 h), the positions (1024 h) and the tied head (the word embedding
  // again) are gathered once forward and once backward: 3 x 2 = 6. Total 102 per step.
  // Elements moved: 8 x 3 x 12 h^2 = 301,989,888 plus 2 x (52,428,800 + 1,048,576 +
  // 52,428,800) = 211,812,352, so 513,802,240 elements = 1,027,604,480 bytes in fp16, at
  // (n-1)/n = 7/8 over a 1 GB/s bus: 0.899153920 s.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.zero = 3;
  s.recompute = Recompute::kFull;
  s.zero3.gather = Zero3Gather::kPerTensor;
  s.zero3.persistence_threshold_params = 1e5;
  s.zero3.prefetch_bucket_params = 1;
  s = Resolve(m, s, 8);
  ASSERT_EQ(s.micro_batches(), 1);
  auto count = SimulateTrainingStep(m, s, GatherOnlyCosts(1.0, 1e30), {});
  ASSERT_TRUE(count.ok());
  EXPECT_NEAR(count->breakdown.dp_comm_s, 102.0, 1e-6);
  auto bytes = SimulateTrainingStep(m, s, GatherOnlyCosts(0.0, 1e9), {});
  ASSERT_TRUE(bytes.ok());
  EXPECT_NEAR(bytes->breakdown.dp_comm_s, 7.0 / 8.0 * 1'027'604'480 / 1e9, 1e-9);
  // Without recompute the layers gather twice: 8 x 4 x 2 + 6 = 70.
  Strategy nr = s;
  nr.recompute = Recompute::kNone;
  auto r70 = SimulateTrainingStep(m, nr, GatherOnlyCosts(1.0, 1e30), {});
  ASSERT_TRUE(r70.ok());
  EXPECT_NEAR(r70->breakdown.dp_comm_s, 70.0, 1e-6);
  // Copy-out per rank (PyTorch's list all_gather): each gathered tensor is read and written once
  // more in 8 copy kernels; with free collectives and FakeCosts' 1 TB/s HBM (no launch cost)
  // that is 2 x 1,027,604,480 B / 1e12 B/s = 2.055 ms.
  Strategy co = s;
  co.zero3.copy_out_per_rank = true;
  auto copies = SimulateTrainingStep(m, co, GatherOnlyCosts(0.0, 1e30), {});
  ASSERT_TRUE(copies.ok());
  EXPECT_NEAR(copies->breakdown.dp_comm_s, 2.0 * 1'027'604'480 / 1e12, 1e-9);
  // A prefetch bucket holding every tensor hides the gathers behind the compute: never more
  // exposed than without prefetch.
  Strategy pf = s;
  pf.zero3.prefetch_bucket_params = 1e9;
  auto hidden = SimulateTrainingStep(m, pf, GatherOnlyCosts(0.0, 1e9), {});
  ASSERT_TRUE(hidden.ok());
  EXPECT_LT(hidden->breakdown.dp_comm_s, bytes->breakdown.dp_comm_s);
  EXPECT_GE(hidden->breakdown.dp_comm_s,
            bytes->breakdown.dp_comm_s - bytes->breakdown.compute_s - 1e-9);
}

// Reduce-scatters cost `alpha_s` each; every other collective is free.
class ScatterOnlyCosts : public FakeCosts {
 public:
  explicit ScatterOnlyCosts(double alpha_s) : alpha_s_(alpha_s) {}
  double CommTime(CommKind k, double, std::span<const int>) const override {
    return k == CommKind::kReduceScatter ? alpha_s_ : 0.0;
  }

 private:
  double alpha_s_;
};

TEST(TrainSim, ZeroThreePerTensorReducesEachTensorAndWaitsForTheHostsViewList) {
  // The setting of ZeroThreePerTensorGathersEachLargeTensorOnTheCriticalPath (102 all-gathers
  // per step, dp 8). Host views: each gather first waits for 8 views of 1 us on the host
  // (free collectives, no copy-out): 102 x 8 us = 816 us.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.zero = 3;
  s.recompute = Recompute::kFull;
  s.zero3.gather = Zero3Gather::kPerTensor;
  s.zero3.persistence_threshold_params = 1e5;
  s.zero3.prefetch_bucket_params = 1;
  s = Resolve(m, s, 8);
  Strategy hv = s;
  hv.zero3.host_view_s = 1e-6;
  auto views = SimulateTrainingStep(m, hv, GatherOnlyCosts(0.0, 1e30), {});
  ASSERT_TRUE(views.ok());
  EXPECT_NEAR(views->breakdown.dp_comm_s, 102 * 8 * 1e-6, 1e-12);
  // Reduce-scatters of 1 s each, not overlapped: one per layer and one for the embedding stage
  // (9 s) before; per tensor, each layer reduces QKV, proj, fc1, fc2 and then its small tensors
  // (biases, norms) together: 5 calls; the embedding stage the word embedding, the positions,
  // and the final norm (the tied head is the word embedding, reduced once): 3. 8 x 5 + 3 = 43.
  s.overlap_dp = false;  // DeepSpeed's overlap_comm false
  auto layer = SimulateTrainingStep(m, s, ScatterOnlyCosts(1.0), {});
  ASSERT_TRUE(layer.ok());
  EXPECT_NEAR(layer->breakdown.dp_comm_s, 9.0, 1e-6);
  Strategy pt = s;
  pt.zero3.reduce_per_tensor = true;
  auto tensor = SimulateTrainingStep(m, pt, ScatterOnlyCosts(1.0), {});
  ASSERT_TRUE(tensor.ok());
  EXPECT_NEAR(tensor->breakdown.dp_comm_s, 43.0, 1e-6);
}

TEST(TrainSim, TpOverlapHidesCommunicationUnderGemmsButOneChunk) {
  // tp 4 with sp. Slow bus (1 GB/s): TP communication far exceeds the GEMMs, so overlap hides
  // only the GEMM time: exposed = comm - gemm, between comm/4 and comm. Fast bus (1 TB/s): the
  // GEMMs cover it and one chunk of tp stays exposed. In units u of one all-gather (or
  // reduce-scatter) of the layer's activations: each layer pass has 2 + 2, so 8 layers x fwd +
  // bwd = 64 u, plus the embedding's and the LM head's reductions (2 u, not overlapped):
  // comm = 66 u, exposed = 64 u / 4 + 2 u = 18 u.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 4;
  s.tp = 4;
  s.sp = true;
  s = Resolve(m, s, 4);
  Strategy o = s;
  o.tp_overlap = true;
  for (double bus : {1e9, 1e12}) {
    auto plain = SimulateTrainingStep(m, s, FakeCosts(bus), {});
    auto over = SimulateTrainingStep(m, o, FakeCosts(bus), {});
    ASSERT_TRUE(plain.ok() && over.ok());
    const double c = plain->breakdown.tp_comm_s, e = over->breakdown.tp_comm_s;
    EXPECT_GE(e, c / 4 * (1 - 1e-9)) << bus;
    if (bus == 1e12) {
      EXPECT_NEAR(e, c * 18 / 66, 1e-9 * c);
    } else {
      EXPECT_LT(e, c);
    }
    EXPECT_LT(over->step_time_s, plain->step_time_s);
  }
}

// FakeCosts plus a fixed 1 ms per kernel, so a GEMM run in pieces costs one more per piece.
class KernelCosts : public FakeCosts {
 public:
  double OpsTime(const std::vector<Op>& ops) const override {
    return FakeCosts::OpsTime(ops) + 1e-3 * static_cast<double>(ops.size());
  }
};

TEST(TrainSim, TpOverlapRunsTheOverlappedGemmsInPieces) {
  // tp 2 with sp and TE's overlap run in pieces (rs_splits 3): per layer the forward runs
  // qkv_proj and mlp_up in 2 pieces (ring exchange) and out_proj and mlp_down in 3 (pipelined
  // reduce-scatter), the backward out_proj_dgrad and mlp_down_dgrad in 2: 1 + 1 + 2 + 2 + 1 + 1
  // = 8 more kernels per layer. The pieces do the same FLOPs, each reads the whole weight, and
  // FakeCosts' GEMMs here are compute-bound, so only the kernels add time: 8 layers x 8 x 1 ms
  // per micro-batch, all compute (no recompute, one stage).
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 4;
  s.tp = 2;
  s.sp = true;
  s.tp_overlap = true;
  s = Resolve(m, s, 2);
  Strategy p = s;
  p.tp_ub.gemm_pieces = true;
  p.tp_ub.rs_splits = 3;
  auto whole = SimulateTrainingStep(m, s, KernelCosts(), {});
  auto pieces = SimulateTrainingStep(m, p, KernelCosts(), {});
  ASSERT_TRUE(whole.ok() && pieces.ok());
  const double mm = static_cast<double>(s.micro_batches());
  EXPECT_NEAR(pieces->breakdown.compute_s - whole->breakdown.compute_s, mm * 8 * 8 * 1e-3, 1e-9);
  EXPECT_DOUBLE_EQ(pieces->hardware_flop, whole->hardware_flop);
  // Without TP overlap nothing is split.
  Strategy off = p;
  off.tp_overlap = false;
  Strategy off_whole = s;
  off_whole.tp_overlap = false;
  auto a = SimulateTrainingStep(m, off, KernelCosts(), {});
  auto b = SimulateTrainingStep(m, off_whole, KernelCosts(), {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->step_time_s, b->step_time_s);
}

// FakeCosts whose every call takes a share x of the GPU from overlapped compute (its SMs and
// its HBM alike, so the op mix does not matter).
class FootprintCosts : public FakeCosts {
 public:
  FootprintCosts(double bus_Bps, double share) : FakeCosts(bus_Bps), share_(share) {}
  CommPriced CommPricedOf(CommKind k, double bytes, std::span<const int> g) const override {
    return {CommTime(k, bytes, g), share_, share_};
  }
  CommPriced P2pPricedOf(double bytes, int src, int dst) const override {
    return {P2pTime(bytes, src, dst), share_, share_};
  }
  int Sms() const override { return 132; }

 private:
  double share_;
};

TEST(TrainSim, OverlappedGradientBucketsSlowTheBackwardBesideThem) {
  // dp 2, one bucket per layer (dp_bucket_params 1) and a fast bus: every bucket but the last
  // (layer 0 with the embedding, reduced after the backward ends) runs beside the last backward.
  // Each bucket's kernels take x = 24/132 of the GPU, so each second a bucket runs beside the
  // backward costs the backward x seconds more (sim/task_graph.h: w s at 1 - x of the speed do
  // w (1 - x) s of work): step = plain step + x * (sum of the hidden buckets' times), and the
  // breakdown counts the x part as compute.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 2;
  s = Resolve(m, s, 2);
  TrainSimOptions o;
  o.dp_bucket_params = 1;
  o.want_trace = true;
  const double x = 24.0 / 132.0;
  auto plain = SimulateTrainingStep(m, s, FakeCosts(1e12), o);
  auto slowed = SimulateTrainingStep(m, s, FootprintCosts(1e12, x), o);
  ASSERT_TRUE(plain.ok() && slowed.ok());
  double compute_end = 0, hidden = 0, last_start = 0;
  for (const StepSpan& sp : plain->spans) {
    if (sp.category == "backward") compute_end = std::max(compute_end, sp.start_s + sp.dur_s);
  }
  int buckets = 0;
  for (const StepSpan& sp : plain->spans) {
    if (sp.category != "dp") continue;
    ++buckets;
    if (sp.start_s + sp.dur_s <= compute_end) {
      hidden += sp.dur_s;
    } else {
      last_start = sp.start_s;
    }
  }
  EXPECT_EQ(buckets, 8);
  EXPECT_NEAR(last_start, compute_end, 1e-12);  // the last bucket waits for the backward's end
  ASSERT_GT(hidden, 0);
  EXPECT_NEAR(slowed->step_time_s, plain->step_time_s + x * hidden, 1e-9 * plain->step_time_s);
  EXPECT_NEAR(slowed->breakdown.compute_s, plain->breakdown.compute_s + x * hidden,
              1e-9 * plain->step_time_s);
  EXPECT_NEAR(slowed->breakdown.pp_bubble_s, plain->breakdown.pp_bubble_s,
              1e-9 * plain->step_time_s);
  // The closed form prices the same slowdown from the whole reduction less one bucket.
  TrainSimOptions cf;
  cf.closed_form = true;
  auto est = SimulateTrainingStep(m, s, FootprintCosts(1e12, x), cf);
  ASSERT_TRUE(est.ok());
  EXPECT_GT(est->step_time_s, SimulateTrainingStep(m, s, FakeCosts(1e12), cf)->step_time_s);
}

TEST(TrainSim, TpOverlapSlowsTheGemmsByTheSmsItsKernelsTake) {
  // The fast-bus case of TpOverlapHidesCommunicationUnderGemmsButOneChunk: of comm = 66 u,
  // 64 u - 16 u = 48 u hide under the GEMMs. With userbuffers kernels on 24 of the GPU's 132 SMs
  // the GEMMs run at 108/132 of their speed while it does: + 48 u x 24/132. With the all-gathers
  // on copy engines only the reduce-scatters (half of each pass's time here: same bytes, same
  // bus) take SMs: + 48 u x 24/132 / 2. dp 1, pp 1: the step is the sum of the passes.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 4;
  s.tp = 4;
  s.sp = true;
  s.tp_overlap = true;
  s = Resolve(m, s, 4);
  const FootprintCosts costs(1e12, 0.0);
  auto free_gemms = SimulateTrainingStep(m, s, costs, {});  // tp_ub.comm_sms 0: not slowed
  Strategy no_ce = s;
  no_ce.tp_ub.comm_sms = 24;
  no_ce.tp_ub.ag_copy_engine = false;
  Strategy ce = no_ce;
  ce.tp_ub.ag_copy_engine = true;
  auto a = SimulateTrainingStep(m, no_ce, costs, {});
  auto b = SimulateTrainingStep(m, ce, costs, {});
  ASSERT_TRUE(free_gemms.ok() && a.ok() && b.ok());
  auto plain_s = s;
  plain_s.tp_overlap = false;
  const double c = SimulateTrainingStep(m, plain_s, costs, {})->breakdown.tp_comm_s;
  const double u = c / 66;
  const double t0 = free_gemms->step_time_s;
  EXPECT_NEAR(a->step_time_s, t0 + 48 * u * 24 / 132, 1e-9 * t0);
  EXPECT_NEAR(b->step_time_s, t0 + 48 * u * 24 / 132 / 2, 1e-9 * t0);
  EXPECT_NEAR(a->breakdown.compute_s - free_gemms->breakdown.compute_s, 48 * u * 24 / 132,
              1e-9 * t0);
}

}  // namespace
}  // namespace ndt
