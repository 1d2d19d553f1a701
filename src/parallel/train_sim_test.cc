#include "parallel/train_sim.h"

#include <gtest/gtest.h>

#include "coll/testing.h"
#include "compute/compute.h"
#include "hw/catalog.h"
#include "parallel/cluster_costs.h"
#include "parallel/memory.h"
#include "parallel/schedule.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

// Closed-form costs: 100 TFLOP/s, 1 TB/s HBM; ring collectives at `bus_Bps` bus bandwidth;
// p2p at `p2p_Bps`. Zero bandwidth cost when bus_Bps is infinite.
class FakeCosts : public TrainCosts {
 public:
  explicit FakeCosts(double bus_Bps = 100e9, double p2p_Bps = 25e9)
      : bus_Bps_(bus_Bps), p2p_Bps_(p2p_Bps) {}
  double OpsTime(const std::vector<Op>& ops) const override {
    double t = 0;
    for (const Op& op : ops) t += std::max(op.flop / 100e12, op.bytes / 1e12);
    return t;
  }
  double CommTime(CommKind k, double bytes, std::span<const int> g) const override {
    const double n = static_cast<double>(g.size());
    const double f = k == CommKind::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
    return f * bytes / bus_Bps_;
  }
  double P2pTime(double bytes, int, int) const override { return bytes / p2p_Bps_; }
  double PeakFlops() const override { return 100e12; }

 private:
  double bus_Bps_, p2p_Bps_;
};

TransformerSpec SmallGpt(int64_t vocab = 51200) {
  InlineModelArgs a;
  a.layers = 8;
  a.hidden = 1024;
  a.heads = 16;
  a.seq = 1024;
  a.vocab = vocab;
  return BuildInlineModel(a).value();
}

Strategy Resolve(const TransformerSpec& m, Strategy s, int gpus) {
  std::vector<std::string> w;
  Status st = ResolveStrategy(m, gpus, 8, &s, &w);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

TEST(Schedule, OneFOneBHasWarmupThenAlternates) {
  // pp 4, stage 0: 3 warm-up forwards, then F3 B0 ... ; every pass appears once.
  auto st = StageSchedule(PipeSchedule::kOneFOneB, 4, 1, 8, 0);
  ASSERT_EQ(st.size(), 16u);
  EXPECT_TRUE(st[0].forward && st[1].forward && st[2].forward && st[3].forward);
  EXPECT_FALSE(st[4].forward);
  EXPECT_EQ(st[4].micro_batch, 0);
  auto last = StageSchedule(PipeSchedule::kOneFOneB, 4, 1, 8, 3);
  EXPECT_TRUE(last[0].forward);
  EXPECT_FALSE(last[1].forward);  // last stage: no warm-up
}

TEST(Schedule, InterleavedVisitsEveryChunkMicroBatchOnce) {
  auto st = StageSchedule(PipeSchedule::kInterleaved, 4, 2, 8, 1);
  std::vector<int> seen(2 * 2 * 8, 0);
  for (const PipeStep& p : st) ++seen[(p.forward ? 0 : 16) + p.chunk * 8 + p.micro_batch];
  for (int v : seen) EXPECT_EQ(v, 1);
}

TEST(TrainSim, OneGpuHasNoCommunication) {
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 4;
  s = Resolve(m, s, 1);
  FakeCosts costs;
  auto r = SimulateTrainingStep(m, s, costs, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TimeBreakdown& b = r->breakdown;
  EXPECT_EQ(b.tp_comm_s + b.dp_comm_s + b.ep_comm_s + b.cp_comm_s, 0);
  EXPECT_NEAR(b.pp_bubble_s, 0, 1e-12 * r->step_time_s);
  EXPECT_NEAR(r->step_time_s, b.compute_s + b.optimizer_s, 1e-9 * r->step_time_s);
}

TEST(TrainSim, UnfusedGradientAccumulationAddsOnePassOverTheGradientsPerMicroBatch) {
  // 1 GPU, 4 micro-batches. fp16 without gradient_accumulation_fusion: every micro-batch but the
  // first reads the new gradient and the sum and writes the sum (6 B/param) -> 3 * 6 * params
  // bytes at FakeCosts' 1 TB/s. bf16 accumulates into fp32 every micro-batch: 4 * 10 * params.
  TransformerSpec m = SmallGpt();
  const double params = CountParams(m).total;
  Strategy s;
  s.gbs = 4;
  s = Resolve(m, s, 1);
  FakeCosts costs;
  for (Dtype d : {Dtype::kFp16, Dtype::kBf16}) {
    s.precision = d;
    s.grad_accum_fusion = true;
    const double fused = SimulateTrainingStep(m, s, costs, {}).value().step_time_s;
    s.grad_accum_fusion = false;
    const double unfused = SimulateTrainingStep(m, s, costs, {}).value().step_time_s;
    const double want = d == Dtype::kFp16 ? 3 * 6 * params / 1e12 : 4 * 10 * params / 1e12;
    EXPECT_NEAR(unfused - fused, want, 1e-6 * want) << DtypeName(d);
    TrainSimOptions closed;
    closed.closed_form = true;
    const double est = SimulateTrainingStep(m, s, costs, closed).value().step_time_s;
    EXPECT_NEAR(est, unfused, 1e-9 * unfused);  // the closed form prices it the same
  }
}

TEST(TrainSim, DataParallelWithFreeCommKeepsPerGpuFlops) {
  // Same per-GPU work (gbs grows with dp) and free communication: FLOP/s per GPU is equal.
  TransformerSpec m = SmallGpt();
  FakeCosts free_comm(1e30, 1e30);
  Strategy s1;
  s1.gbs = 4;
  s1 = Resolve(m, s1, 1);
  Strategy s8;
  s8.gbs = 32;
  s8 = Resolve(m, s8, 8);
  auto r1 = SimulateTrainingStep(m, s1, free_comm, {});
  auto r8 = SimulateTrainingStep(m, s8, free_comm, {});
  ASSERT_TRUE(r1.ok() && r8.ok());
  const double f1 = r1->model_flop / r1->step_time_s / 1;
  const double f8 = r8->model_flop / r8->step_time_s / 8;
  EXPECT_GE(f8, f1 * (1 - 1e-9));
}

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

TEST(TrainSim, CommunicationCostOnlyAddsTime) {
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 16;
  s.tp = 2;
  s.pp = 2;
  s = Resolve(m, s, 8);
  auto fast = SimulateTrainingStep(m, s, FakeCosts(1e30, 1e30), {});
  auto slow = SimulateTrainingStep(m, s, FakeCosts(10e9, 10e9), {});
  ASSERT_TRUE(fast.ok() && slow.ok());
  EXPECT_GT(slow->step_time_s, fast->step_time_s);
  EXPECT_GT(slow->breakdown.tp_comm_s, 0);
}

TEST(TrainSim, PipelineBubbleMatchesTheOneFOneBFormula) {
  // With free communication and uniform stages, 1F1B takes (m + pp - 1) * (tf + tb) per stage
  // (Narayanan et al. SC21 §2.2.1); the bubble fraction is (pp - 1) / m of the ideal time.
  // A tiny vocabulary keeps the embedding and LM head from unbalancing the stages.
  TransformerSpec m = SmallGpt(/*vocab=*/256);
  Strategy s;
  s.gbs = 8;
  s.pp = 4;
  s.uneven_stages = true;
  s = Resolve(m, s, 4);
  auto r = SimulateTrainingStep(m, s, FakeCosts(1e30, 1e30), {});
  ASSERT_TRUE(r.ok());
  const double ideal = r->breakdown.compute_s;
  EXPECT_GT(r->breakdown.pp_bubble_s, 0.9 * ideal * 3 / 8);
  // Upper bound looser: the slowest stage (embedding, loss) sets the pace, not stage 0.
  EXPECT_LT(r->breakdown.pp_bubble_s, 1.2 * ideal * 3 / 8);
}

TEST(TrainSim, InterleavingShrinksTheBubble) {
  TransformerSpec m = SmallGpt();
  Strategy a;
  a.gbs = 8;
  a.pp = 4;
  Strategy b = a;
  b.vpp = 2;
  a = Resolve(m, a, 4);
  b = Resolve(m, b, 4);
  FakeCosts costs(1e30, 1e30);
  auto ra = SimulateTrainingStep(m, a, costs, {});
  auto rb = SimulateTrainingStep(m, b, costs, {});
  ASSERT_TRUE(ra.ok() && rb.ok());
  EXPECT_LT(rb->step_time_s, ra->step_time_s);
}

TEST(TrainSim, TimelineHasSpansOnEveryStageWithinTheStep) {
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.pp = 2;
  s = Resolve(m, s, 4);
  TrainSimOptions o;
  o.want_trace = true;
  auto r = SimulateTrainingStep(m, s, FakeCosts(), o);
  ASSERT_TRUE(r.ok());
  // 2 stages x (compute, send fwd, send bwd, dp) streams; one span per task, inside the step.
  EXPECT_EQ(r->stream_names.size(), 4u);
  EXPECT_EQ(static_cast<int64_t>(r->spans.size()), r->tasks);
  for (const StepSpan& sp : r->spans) {
    EXPECT_GE(sp.stage, 0);
    EXPECT_LT(sp.stage, 2);
    EXPECT_LE(sp.start_s + sp.dur_s, r->step_time_s * (1 + 1e-12));
  }
}

TEST(Strategy, UnevenStagesGiveTheEndsFewerLayers) {
  // Llama 3 405B: 126 layers on 16 stages = ceil 8 each (128), 2 too many: the first and the
  // last stage lose one (7, 8 x 14, 7), as Meta ran it.
  std::vector<int64_t> counts;
  int64_t next = 0;
  for (int v = 0; v < 16; ++v) {
    const LayerRange r = ChunkLayers(126, 16, 1, v);
    EXPECT_EQ(r.first, next) << v;  // contiguous
    next += r.count;
    counts.push_back(r.count);
  }
  EXPECT_EQ(next, 126);
  EXPECT_EQ(counts.front(), 7);
  EXPECT_EQ(counts.back(), 7);
  for (int v = 1; v < 15; ++v) EXPECT_EQ(counts[v], 8) << v;
  // 9 layers on 4: ceil 3 (12), 3 too many: v = 0, 3, then 1 lose one -> 2, 2, 3, 2.
  const int64_t want[] = {2, 2, 3, 2};
  for (int v = 0; v < 4; ++v) EXPECT_EQ(ChunkLayers(9, 4, 1, v).count, want[v]) << v;
  // Even splits are unchanged: 96 layers, pp 12 x vpp 2 -> 4 each, v x 4 first.
  for (int v = 0; v < 24; ++v) {
    EXPECT_EQ(ChunkLayers(96, 12, 2, v).count, 4);
    EXPECT_EQ(ChunkLayers(96, 12, 2, v).first, 4 * v);
  }
}

TEST(Memory, UnevenStagesHoldEveryParameterOnce) {
  // 10 layers on pp 4 (3 + 3 at the middle, 2 + 2 at the ends): the stages' parameters add up to
  // the model's, and the step simulates.
  InlineModelArgs a;
  a.layers = 10;
  a.hidden = 1024;
  a.heads = 16;
  a.seq = 1024;
  a.vocab = 51200;
  TransformerSpec m = BuildInlineModel(a).value();
  m.tied_embeddings = false;  // a tied head would be a second copy on the last stage
  Strategy s;
  s.gbs = 8;
  s.pp = 4;
  s.uneven_stages = true;
  s = Resolve(m, s, 4);
  double sum = 0;
  for (int st = 0; st < 4; ++st) sum += StageParamsPerGpu(m, s, st);
  const double total = CountParams(m).total;
  EXPECT_NEAR(sum, total, 1e-9 * total);
  FakeCosts costs;
  EXPECT_TRUE(SimulateTrainingStep(m, s, costs, {}).ok());
}

TEST(Memory, OptimizerStatesFollowTheZeroStage) {
  // bf16 (the default): 18 B/param = 2 (weights) + 4 (fp32 main_grad) + 12 (fp32 master, m, v);
  // ZeRO-1 divides the 12 by dp: 6 + 12/d, Megatron's distributed-optimizer table. fp16: fp16
  // gradients (2) and an fp32 gradient copy in the optimizer (16): 4 + 16/d.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s = Resolve(m, s, 8);
  MemoryBreakdown z0 = EstimateMemory(m, s);
  const double p = CountParams(m).total;
  EXPECT_NEAR(z0.params_per_gpu, p, 1e-6 * p);
  EXPECT_NEAR(z0.weights_bytes, 2 * p, 1e-6 * p);
  EXPECT_NEAR(z0.gradients_bytes, 4 * p, 1e-6 * p);
  EXPECT_NEAR(z0.optimizer_bytes, 12 * p, 1e-6 * p);
  s.zero = 1;
  MemoryBreakdown z1 = EstimateMemory(m, s);
  EXPECT_NEAR(z1.optimizer_bytes, 12 * p / 8, 1e-6 * p);
  EXPECT_NEAR(z1.gradients_bytes, 4 * p, 1e-6 * p);
  s.zero = 2;
  EXPECT_NEAR(EstimateMemory(m, s).gradients_bytes, 4 * p / 8, 1e-6 * p);
  s.zero = 3;
  MemoryBreakdown z3 = EstimateMemory(m, s);
  EXPECT_NEAR(z3.weights_bytes, 2 * p / 8, 1e-6 * p);
  s.zero = 1;
  s.precision = Dtype::kFp16;
  MemoryBreakdown h1 = EstimateMemory(m, s);
  EXPECT_NEAR(h1.gradients_bytes, 2 * p, 1e-6 * p);
  EXPECT_NEAR(h1.optimizer_bytes, 16 * p / 8, 1e-6 * p);
}

TEST(TrainSim, Bf16GradientsReduceInFp32) {
  // Two data-parallel GPUs, everything else free: the only communication is the gradient
  // all-reduce, of 4 B/param in bf16 (fp32 main_grad) and 2 in fp16, so the DP part of the
  // step doubles with bf16 (overlap off, so nothing hides it).
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 2;
  s.overlap_dp = false;
  s = Resolve(m, s, 2);
  FakeCosts costs(1e9);  // slow bus: DP time dominates
  const double bf16 = SimulateTrainingStep(m, s, costs, {}).value().breakdown.dp_comm_s;
  s.precision = Dtype::kFp16;
  const double fp16 = SimulateTrainingStep(m, s, costs, {}).value().breakdown.dp_comm_s;
  EXPECT_NEAR(bf16 / fp16, 2.0, 1e-6);
}

TEST(Memory, ZeroShardsOverContextParallelRanksToo) {
  // 8 GPUs as cp 2 x dp 4: all 8 hold the same weights, so ZeRO-1 divides the 12 B/param by 8
  // (Megatron-core shards the distributed optimizer over DP x CP), not by dp = 4.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 8;
  s.cp = 2;
  s.zero = 1;
  s = Resolve(m, s, 8);
  ASSERT_EQ(s.dp, 4);
  const double p = CountParams(m).total;
  EXPECT_NEAR(EstimateMemory(m, s).optimizer_bytes, 12 * p / 8, 1e-6 * p);
}

TEST(Memory, FullRecomputeKeepsOnlyLayerInputs) {
  // GPT, no TP: full recompute stores 2sbh per layer (Korthikanti Table 2) for L layers, plus one
  // layer's full set sbh(34 + 5as/h) as the recompute working set, plus fp32 logits 8 s b V.
  // With flash attention the working set keeps 4a/h (log-sum-exp) instead of 5as/h.
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 1;
  s.recompute = Recompute::kFull;
  s.flash_attention = false;
  s = Resolve(m, s, 1);
  MemoryBreakdown b = EstimateMemory(m, s);
  const double sbh = 1024.0 * 1 * 1024;
  const double full_layer = sbh * (34 + 5.0 * 16 * 1024 / 1024);
  const double logits = 8.0 * 1024 * 51200;
  EXPECT_NEAR(b.activations_bytes, 8 * 2 * sbh + full_layer + logits, 1e-6 * b.activations_bytes);
  s.flash_attention = true;
  b = EstimateMemory(m, s);
  const double flash_layer = sbh * (34 + 4.0 * 16 / 1024);
  EXPECT_NEAR(b.activations_bytes, 8 * 2 * sbh + flash_layer + logits, 1e-6 * b.activations_bytes);
}

TEST(Memory, InterleavedInFlightFollowsTheSchedule) {
  // GPT 8 layers, no TP, pp 2, 4 micro-batches. 1F1B: stage 0 holds pp = 2 micro-batches of its
  // 4 layers. Interleaved vpp 2 (chunks of 2 layers): warm-up (pp - 1) * 2 + (vpp - 1) * pp = 4
  // chunk passes, then one more forward before the first backward: 5 chunk passes = 2.5
  // stage micro-batches (Korthikanti: 1 + (pp - 1) / (pp * vpp) = 1.25 times 1F1B's 2).
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 4;
  s.pp = 2;
  s = Resolve(m, s, 2);
  const double per_layer = ActivationBytesPerLayer(m, 0, 1, 1024, 1, false, Recompute::kNone, true);
  EXPECT_NEAR(StageMemoryOf(m, s, 0).inflight_microbatches, 2.0, 1e-9);
  EXPECT_NEAR(StageMemoryOf(m, s, 0).activations_bytes, 2 * 4 * per_layer, 1e-6 * per_layer);
  s.vpp = 2;
  s = Resolve(m, s, 2);
  const MemoryBreakdown bi = StageMemoryOf(m, s, 0);
  EXPECT_NEAR(bi.inflight_microbatches, 2.5, 1e-9);
  EXPECT_NEAR(bi.activations_bytes, 5 * 2 * per_layer, 1e-6 * per_layer);
}

TEST(Memory, EmptyFirstChunkAddsNothingForItsExtraWarmup) {
  // Llama 3's layout: 6 layers on pp 2 x vpp 4 = 8 virtual stages with uneven stages: one layer
  // each, v = 0 (embedding only) and v = 7 (LM head only) hold none. Stage 0 has chunks v = 0, 2,
  // 4, 6 = 0, 1, 1, 1 layers. With 4 micro-batches its warm-up is (pp - 1) * 2 + (vpp - 1) * pp
  // = 8 chunk passes: chunk 0 mb 0-1, chunk 1 mb 0-1, chunk 2 mb 0-1, chunk 3 mb 0-1, then the
  // 9th forward is chunk 0 mb 2 (empty) before the first backward: 6 layer passes held, where
  // equal chunks of 3/4 layer would count 9 x 0.75 = 6.75 (and 1F1B holds 2 x 3 = 6).
  InlineModelArgs a;
  a.layers = 6;
  a.hidden = 1024;
  a.heads = 16;
  a.seq = 1024;
  a.vocab = 51200;
  TransformerSpec m = BuildInlineModel(a).value();
  Strategy s;
  s.gbs = 4;
  s.pp = 2;
  s.vpp = 4;
  s.uneven_stages = true;
  s = Resolve(m, s, 2);
  EXPECT_EQ(ChunkLayers(6, 2, 4, 0).count, 0);
  EXPECT_EQ(ChunkLayers(6, 2, 4, 7).count, 0);
  const double per_layer = ActivationBytesPerLayer(m, 0, 1, 1024, 1, false, Recompute::kNone, true);
  EXPECT_NEAR(StageMemoryOf(m, s, 0).activations_bytes, 6 * per_layer, 1e-6 * per_layer);
  FakeCosts costs;
  EXPECT_TRUE(SimulateTrainingStep(m, s, costs, {}).ok());
  TrainSimOptions cf;
  cf.closed_form = true;
  EXPECT_TRUE(SimulateTrainingStep(m, s, costs, cf).ok());
  // Without uneven stages, or with an empty middle stage, it is refused.
  Strategy bad = s;
  bad.uneven_stages = false;
  std::vector<std::string> w;
  EXPECT_EQ(ResolveStrategy(m, 2, 8, &bad, &w).code(), StatusCode::kInfeasible);
  bad = s;
  bad.vpp = 8;  // 16 virtual stages for 6 layers
  EXPECT_EQ(ResolveStrategy(m, 2, 8, &bad, &w).code(), StatusCode::kInfeasible);
}

TEST(Memory, DoesNotFitNamesTheLargestPart) {
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 1;
  s = Resolve(m, s, 1);
  MemoryBreakdown b = EstimateMemory(m, s);
  Status st = CheckFits(b, 1e9, s);
  EXPECT_EQ(st.code(), StatusCode::kDoesNotFit);
  EXPECT_NE(st.message().find("does not fit"), std::string::npos);
}

TEST(Strategy, DivisibilityErrorsAreOneLine) {
  TransformerSpec m = SmallGpt();
  std::vector<std::string> w;
  Strategy s;
  s.gbs = 8;
  s.tp = 3;
  Status st = ResolveStrategy(m, 3, 8, &s, &w);
  EXPECT_EQ(st.code(), StatusCode::kInfeasible);
  EXPECT_NE(st.message().find("heads"), std::string::npos);
  // 8 layers cannot fill pp 4 x vpp 4 = 16 virtual stages (pp 3 alone is fine: 3, 2, 3).
  Strategy p;
  p.gbs = 8;
  p.pp = 4;
  p.vpp = 4;
  p.uneven_stages = true;
  const Status sp = ResolveStrategy(m, 4, 8, &p, &w);
  EXPECT_EQ(sp.code(), StatusCode::kInfeasible);
  EXPECT_NE(sp.message().find("at least one layer"), std::string::npos);
  // pp 3 does not divide 8 layers: an error unless uneven stages are asked for (3, 2, 3).
  Strategy p3;
  p3.gbs = 8;
  p3.pp = 3;
  const Status s3 = ResolveStrategy(m, 3, 8, &p3, &w);
  EXPECT_EQ(s3.code(), StatusCode::kInfeasible);
  EXPECT_NE(s3.message().find("--uneven-stages"), std::string::npos);
  p3.uneven_stages = true;
  EXPECT_TRUE(ResolveStrategy(m, 3, 8, &p3, &w).ok());
  Strategy d;
  d.gbs = 7;
  EXPECT_EQ(ResolveStrategy(m, 2, 8, &d, &w).code(), StatusCode::kInfeasible);
  // vpp interleaves stages: meaningless with pp 1.
  Strategy v;
  v.gbs = 8;
  v.vpp = 2;
  EXPECT_EQ(ResolveStrategy(m, 1, 8, &v, &w).code(), StatusCode::kInvalidInput);
  // 16385 micro-batches (gbs 16385, dp 1, mbs 1) is one over the cap; 16384 resolves.
  Strategy big;
  big.gbs = 16385;
  EXPECT_EQ(ResolveStrategy(m, 1, 8, &big, &w).code(), StatusCode::kInvalidInput);
  big.gbs = 16384;
  EXPECT_TRUE(ResolveStrategy(m, 1, 8, &big, &w).ok());
}

TEST(Strategy, MegatronRankOrderPutsTpFastest) {
  Strategy s;
  s.tp = 2;
  s.pp = 2;
  s.dp = 2;
  // coord {tp, cp, dp, pp}: rank = tp + 2 * dp + 4 * pp.
  EXPECT_EQ(RankOf(s, {1, 0, 1, 1}), 1 + 2 + 4);
  EXPECT_EQ(GroupRanks(s, Axis::kDp, {0, 0, 0, 0}), (std::vector<int>{0, 2}));
  // cp 2 between tp and dp: rank = tp + 2 * cp + 4 * dp + 8 * pp; the weight replicas of rank 1
  // (tp 1, pp 0) are every cp and dp coordinate: 1, 3, 5, 7.
  Strategy c = s;
  c.cp = 2;
  EXPECT_EQ(DataParallelRanks(c, {1, 0, 0, 0}), (std::vector<int>{1, 3, 5, 7}));
  auto order = ParseOrder("pp,dp,cp,tp");
  ASSERT_TRUE(order.ok());
  s.order = *order;
  EXPECT_EQ(RankOf(s, {1, 0, 0, 0}), 4);  // tp now slowest: stride pp*dp*cp = 4
}

}  // namespace
}  // namespace ndt

namespace ndt {
namespace {

TEST(ClusterCostsTrain, AnalyticalAndFlowAgreeOnAnUncongestedFabric) {
  // 4 VMs of ND96amsr_A100_v4 on a non-blocking rail-optimized fat tree: TP inside the VM, one
  // DP ring per rail, so no two flows share a link; the fidelities should agree within 2%.
  StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
  ASSERT_TRUE(cat.ok()) << cat.status().message();
  StatusOr<const SkuSpec*> sku = cat->FindSku("Standard_ND96amsr_A100_v4");
  ASSERT_TRUE(sku.ok());
  ClusterSpec cs;
  cs.sku = *sku;
  cs.gpu = &cat->GpuOf(**sku);
  cs.vms = 4;
  StatusOr<Cluster> cl = testing::BuildClusterForTest(cs);
  ASSERT_TRUE(cl.ok()) << cl.status().message();
  StatusOr<ComputeCalibration> cal = LoadComputeCalibration("");
  ASSERT_TRUE(cal.ok()) << cal.status().message();
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 64;
  s.tp = 8;
  s = Resolve(m, s, 32);
  ClusterCosts an(*cl, *cal, testing::BuiltinNcclCalibration(), Dtype::kBf16,
                  Fidelity::kAnalytical);
  ClusterCosts fl(*cl, *cal, testing::BuiltinNcclCalibration(), Dtype::kBf16, Fidelity::kFlow);
  auto ra = SimulateTrainingStep(m, s, an, {});
  auto rf = SimulateTrainingStep(m, s, fl, {});
  ASSERT_TRUE(ra.ok() && rf.ok());
  EXPECT_NEAR(rf->step_time_s, ra->step_time_s, 0.02 * ra->step_time_s);
}

}  // namespace
}  // namespace ndt
