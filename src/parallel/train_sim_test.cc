#include "parallel/train_sim.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "coll/testing.h"
#include "compute/compute.h"
#include "hw/catalog.h"
#include "parallel/cluster_costs.h"
#include "parallel/memory.h"
#include "parallel/schedule.h"
#include "parallel/testing.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

using testing::FakeCosts;
using testing::Resolve;
using testing::SmallGpt;

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

TEST(TrainSim, ZeroOptimizerStepUpdatesTheExpertsOfItsExpertDataParallelShard) {
  // An 8-expert MoE on 16 GPUs as dp 16, ep 8, ZeRO-1: a GPU updates 1/16 of the dense
  // parameters but 1/2 of its experts' (16 / 8 = 2 ranks hold each expert; memory.h). The Adam
  // step is one element-wise op of 38 B per updated parameter (train_layer_cost.cc), which
  // FakeCosts times at 1 TB/s: 38 * (dense / 16 + expert / 2) / 1e12 s, in the graph and in the
  // closed form. (It was 38 * (dense + expert) / 16 / 1e12: the experts' update 8x too short.)
  TransformerSpec m = testing::TinyMoe(1024);
  Strategy s;
  s.gbs = 16;
  s.ep = 8;
  s.zero = 1;
  s = Resolve(m, s, 16);
  ASSERT_EQ(s.dp, 16);
  const double expert = StageExpertParamsPerGpu(m, s, 0);
  const double dense = StageParamsPerGpu(m, s, 0) - expert;
  ASSERT_GT(expert, dense);
  const double want = 38.0 * (dense / 16 + expert / 2) / 1e12;
  FakeCosts costs;
  for (bool closed_form : {false, true}) {
    TrainSimOptions o;
    o.closed_form = closed_form;
    auto r = SimulateTrainingStep(m, s, costs, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_NEAR(r->breakdown.optimizer_s, want, 1e-9 * want) << closed_form;
  }
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

// FP8 current scaling with SP: each dense layer all-reduces an amax over the TP group before the
// casts of QKV's and FC1's inputs (forward) and of the output projection's and FC2's output
// gradients (backward), in the stream, exposed. With every other transfer free and a 4-byte
// all-reduce charged 1 ms: SmallGpt's 8 layers x 2 micro-batches x (2 + 2) x 1 ms = 64 ms of TP
// time more than delayed scaling, which has none of them.
TEST(TrainSim, CurrentScalingAllReducesEachCastsAmaxOverTheTpGroup) {
  class AmaxCosts : public FakeCosts {
   public:
    AmaxCosts() : FakeCosts(1e30, 1e30) {}
    double CommTime(CommKind k, double bytes, std::span<const int> g) const override {
      if (k == CommKind::kAllReduce && bytes == 4.0) return 1e-3;
      return FakeCosts::CommTime(k, bytes, g);
    }
  } costs;
  TransformerSpec m = SmallGpt();
  Strategy s;
  s.gbs = 2;
  s.mbs = 1;
  s.tp = 2;
  s.sp = true;
  s.tp_overlap = false;
  s.precision = Dtype::kFp8;
  s = Resolve(m, s, 2);
  ASSERT_EQ(s.micro_batches(), 2);
  const double delayed = SimulateTrainingStep(m, s, costs, {}).value().breakdown.tp_comm_s;
  s.fp8_current_scaling = true;
  const double current = SimulateTrainingStep(m, s, costs, {}).value().breakdown.tp_comm_s;
  EXPECT_NEAR(current - delayed, 8 * 2 * 4 * 1e-3, 1e-9);
  // Without sequence parallelism nothing is gathered in FP8: no amax all-reduce.
  s.sp = false;
  const double no_sp = SimulateTrainingStep(m, s, costs, {}).value().breakdown.tp_comm_s;
  s.fp8_current_scaling = false;
  EXPECT_NEAR(no_sp, SimulateTrainingStep(m, s, costs, {}).value().breakdown.tp_comm_s, 1e-12);
}

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

namespace ndt {
namespace {

// FakeCosts that records the bytes of every point-to-point message asked of it.
class P2pRecordingCosts : public testing::FakeCosts {
 public:
  double P2pTime(double bytes, int a, int b) const override {
    p2p_bytes_.push_back(bytes);
    return FakeCosts::P2pTime(bytes, a, b);
  }
  mutable std::vector<double> p2p_bytes_;
};

TEST(TrainSim, SequenceParallelSendsEachTpRanksShardBetweenStages) {
  // SmallGpt, mbs 1: a stage's output is 1,024 tokens x 1,024 hidden x 2 B = 2 MiB. With SP it is
  // already split by tokens over the 2 TP ranks, and each sends its 1 MiB to the next stage on
  // its own NIC, nothing gathered after (Megatron-core get_tensor_shapes: seq_length // tp); the
  // only message priced is 1 MiB. Without SP the whole output is on every TP rank: scatter-gather
  // prices 1 MiB sent plus an NVLink all-gather against 2 MiB sent directly, and keeps the
  // cheaper.
  const TransformerSpec m = SmallGpt();
  const double act = 1024.0 * 1024.0 * 2.0;
  Strategy s;
  s.gbs = 4;
  s.tp = 2;
  s.pp = 2;
  s.sp = true;
  s = Resolve(m, s, 4);
  P2pRecordingCosts sp;
  ASSERT_TRUE(SimulateTrainingStep(m, s, sp, {}).ok());
  ASSERT_FALSE(sp.p2p_bytes_.empty());
  for (double b : sp.p2p_bytes_) EXPECT_EQ(b, act / 2);
  s.sp = false;
  P2pRecordingCosts full;
  ASSERT_TRUE(SimulateTrainingStep(m, s, full, {}).ok());
  EXPECT_NE(std::find(full.p2p_bytes_.begin(), full.p2p_bytes_.end(), act), full.p2p_bytes_.end());
  EXPECT_NE(std::find(full.p2p_bytes_.begin(), full.p2p_bytes_.end(), act / 2),
            full.p2p_bytes_.end());
}

}  // namespace
}  // namespace ndt

namespace ndt {
namespace {

// FakeCosts on NVLink domains of `domain` GPUs (rank r in domain r / domain): a collective whose
// group spans two domains runs at a quarter of the bus bandwidth (25 GB/s against 100 GB/s), a
// send across domains at a fifth (5 GB/s against 25 GB/s). Records the groups and pairs priced.
class DomainCosts : public testing::FakeCosts {
 public:
  explicit DomainCosts(int domain) : domain_(domain) {}
  double CommTime(CommKind k, double bytes, std::span<const int> g) const override {
    groups_.emplace_back(g.begin(), g.end());
    const auto [lo, hi] = std::minmax_element(g.begin(), g.end());
    const bool across = *lo / domain_ != *hi / domain_;
    return FakeCosts::CommTime(k, bytes, g) * (across ? 4.0 : 1.0);
  }
  double P2pTime(double bytes, int a, int b) const override {
    pairs_.emplace_back(a, b);
    return FakeCosts::P2pTime(bytes, a, b) * (a / domain_ != b / domain_ ? 5.0 : 1.0);
  }
  bool Priced(const std::vector<int>& g) const {
    return std::find(groups_.begin(), groups_.end(), g) != groups_.end();
  }
  bool Sent(int a, int b) const {
    return std::find(pairs_.begin(), pairs_.end(), std::pair{a, b}) != pairs_.end();
  }

 private:
  int domain_;
  mutable std::vector<std::vector<int>> groups_;
  mutable std::vector<std::pair<int, int>> pairs_;
};

TrainSimResult StepOn(const TransformerSpec& m, const Strategy& s, const TrainCosts& c, int domain,
                      bool closed_form = false) {
  TrainSimOptions o;
  o.nvlink_domain_gpus = domain;
  o.closed_form = closed_form;
  StatusOr<TrainSimResult> r = SimulateTrainingStep(m, s, c, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : TrainSimResult{};
}

TEST(TrainSim, TpGroupsStraddlingDomainsArePricedOnTheStraddlingGroup) {
  // SmallGpt (8 layers, hidden 1024, seq 1024), tp 4, dp 3 on 12 GPUs in domains of 6: TP groups
  // {0..3}, {4..7}, {8..11}; {4..7} spans domains 0 and 1, rank 0's does not. Without SP a
  // micro-batch runs 4 all-reduces per layer (2 forward, 2 backward) plus the embedding's and the
  // LM head's: 8 x 4 + 2 = 34, of the 2 MiB activation (1,024 tokens x 1,024 x 2 B). A ring
  // all-reduce over 4 ranks moves 2 x 3/4 of it: 3,145,728 B, 31.45728 us at 100 GB/s inside a
  // domain, 125.82912 us at 25 GB/s across. gbs 3: one micro-batch. The DP groups
  // {t, t + 4, t + 8} all span two domains (rank 0's too): priced the same either way, and one
  // 40M-parameter bucket holds a GPU's ~39M gradients, reduced after the backward either way. So
  // the step grows by 34 x (125.82912 - 31.45728) us = 3.20864256 ms, all of it TP.
  const TransformerSpec m = SmallGpt();
  Strategy s;
  s.tp = 4;
  s.gbs = 3;
  s = Resolve(m, s, 12);
  ASSERT_EQ(s.dp, 3);
  const double want = 34 * (125.82912e-6 - 31.45728e-6);
  for (bool closed_form : {false, true}) {
    DomainCosts rank0(6), known(6);
    const TrainSimResult before = StepOn(m, s, rank0, 0, closed_form);  // domain unknown
    const TrainSimResult after = StepOn(m, s, known, 6, closed_form);
    EXPECT_FALSE(rank0.Priced({4, 5, 6, 7}));
    EXPECT_TRUE(known.Priced({4, 5, 6, 7}));
    EXPECT_NEAR(after.breakdown.tp_comm_s - before.breakdown.tp_comm_s, want, 1e-12) << closed_form;
    EXPECT_NEAR(after.step_time_s - before.step_time_s, want, 1e-9 * after.step_time_s)
        << closed_form;
    // tp 4 tiles domains of 4 (and of 12): every group inside one, nothing moves.
    for (int domain : {4, 12}) {
      DomainCosts tiled(domain), unknown(domain);
      EXPECT_EQ(StepOn(m, s, tiled, domain, closed_form).step_time_s,
                StepOn(m, s, unknown, 0, closed_form).step_time_s)
          << domain;
    }
  }
}

TEST(TrainSim, PipelineSendsArePricedOnAStageBoundaryAcrossDomains) {
  // tp 2, pp 3, dp 2 on 12 GPUs in domains of 6: a stage holds 4 consecutive ranks
  // (tp + 2 dp + 4 pp). Rank 0 sends 0 -> 4 (both in domain 0); stage 0's rank 2 (tp 0, dp 1)
  // sends 2 -> 6 (domains 0 and 1), 5x slower in DomainCosts: the sends are priced on that one,
  // and the step grows.
  const TransformerSpec m = SmallGpt();
  Strategy s;
  s.tp = 2;
  s.pp = 3;
  s.gbs = 8;
  s.uneven_stages = true;  // 8 layers on 3 stages
  s = Resolve(m, s, 12);
  ASSERT_EQ(s.dp, 2);
  DomainCosts rank0(6), known(6);
  const double before = StepOn(m, s, rank0, 0).step_time_s;
  const double after = StepOn(m, s, known, 6).step_time_s;
  EXPECT_TRUE(rank0.Sent(0, 4));
  EXPECT_FALSE(rank0.Sent(2, 6));
  EXPECT_TRUE(known.Sent(2, 6));
  EXPECT_GT(after, before);
}

// A catalog SKU's cluster of `vms` VMs and its calibrated costs.
struct RealCluster {
  Catalog cat;
  Cluster cluster;
  ComputeCalibration cal;
};
std::unique_ptr<RealCluster> BuildReal(const std::string& sku_name, int vms) {
  StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
  EXPECT_TRUE(cat.ok()) << cat.status().message();
  if (!cat.ok()) return nullptr;
  auto out = std::make_unique<RealCluster>(RealCluster{std::move(*cat), Cluster{}, {}});
  StatusOr<const SkuSpec*> sku = out->cat.FindSku(sku_name);
  EXPECT_TRUE(sku.ok());
  if (!sku.ok()) return nullptr;
  ClusterSpec cs;
  cs.sku = *sku;
  cs.gpu = &out->cat.GpuOf(**sku);
  cs.vms = vms;
  StatusOr<Cluster> cl = testing::BuildClusterForTest(cs);
  EXPECT_TRUE(cl.ok()) << cl.status().message();
  StatusOr<ComputeCalibration> cal = LoadComputeCalibration("");
  EXPECT_TRUE(cal.ok()) << cal.status().message();
  if (!cl.ok() || !cal.ok()) return nullptr;
  out->cluster = std::move(*cl);
  out->cal = std::move(*cal);
  return out;
}

TEST(ClusterCostsTrain, StraddlingTpGroupCrossesTheScaleOutNetworkOnNvl72) {
  // GB300 NVL72, 36 VMs = 144 GPUs in 2 racks of 72. tp 16 (dp 9): the group at ranks 64 .. 79
  // has 8 GPUs in each rack, so coll/ runs its collectives over InfiniBand (no NVLS across
  // racks): slower than rank 0's, which stays on one rack's NVLink. Priced on it, the TP time and
  // the step grow. tp 8 tiles the racks (72 = 9 x 8): nothing moves.
  std::unique_ptr<RealCluster> rc = BuildReal("Standard_ND128isr_GB300_v6", 36);
  ASSERT_TRUE(rc != nullptr);
  ASSERT_EQ(rc->cluster.nvlink_domain_gpus(), 72);
  ClusterCosts costs(rc->cluster, rc->cal, testing::BuiltinNcclCalibration(), Dtype::kBf16,
                     Fidelity::kAnalytical);
  const TransformerSpec m = SmallGpt();
  std::vector<int> straddling(16), inside(16);
  for (int i = 0; i < 16; ++i) {
    straddling[i] = 64 + i;
    inside[i] = i;
  }
  const double act = 1024.0 * 1024.0 * 2.0;
  EXPECT_GT(costs.CommTime(CommKind::kAllReduce, act, straddling),
            costs.CommTime(CommKind::kAllReduce, act, inside));
  Strategy s;
  s.tp = 16;
  s.gbs = 9;
  s = Resolve(m, s, 144);
  const TrainSimResult before = StepOn(m, s, costs, 0);
  const TrainSimResult after = StepOn(m, s, costs, 72);
  EXPECT_GT(after.breakdown.tp_comm_s, before.breakdown.tp_comm_s);
  EXPECT_GT(after.step_time_s, before.step_time_s);
  Strategy t8;
  t8.tp = 8;
  t8.gbs = 18;
  t8 = Resolve(m, t8, 144);
  EXPECT_EQ(StepOn(m, t8, costs, 72).step_time_s, StepOn(m, t8, costs, 0).step_time_s);
}

TEST(ClusterCostsTrain, TpInsideH100VmsMovesNothing) {
  // 4 x ND96isr_H100_v5 (8-GPU NVLink domains), tp 8: every TP group is one VM; the DP groups
  // span the VMs alike (rank 0's too). Knowing the domain changes nothing.
  std::unique_ptr<RealCluster> rc = BuildReal("Standard_ND96isr_H100_v5", 4);
  ASSERT_TRUE(rc != nullptr);
  ClusterCosts costs(rc->cluster, rc->cal, testing::BuiltinNcclCalibration(), Dtype::kBf16,
                     Fidelity::kAnalytical);
  const TransformerSpec m = SmallGpt();
  Strategy s;
  s.tp = 8;
  s.pp = 2;
  s.gbs = 8;
  s = Resolve(m, s, 32);
  EXPECT_EQ(StepOn(m, s, costs, 8).step_time_s, StepOn(m, s, costs, 0).step_time_s);
}

}  // namespace
}  // namespace ndt
