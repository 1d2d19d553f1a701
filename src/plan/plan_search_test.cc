// PlanTraining's search against RunTraining: the best is the best of every candidate, the
// same bytes on any thread count or bound, the straggler as train has it, the flow re-score.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "coll/testing.h"
#include "parallel/cluster_costs.h"
#include "parallel/testing.h"
#include "parallel/train.h"
#include "plan/plan.h"
#include "plan/testing.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

using namespace plan_testing;  // NOLINT: the shared helpers, as in every plan test file

TEST(PlanTraining, BestThroughputEqualsBestOfRunTrainingOnEachCandidate) {
  // A 13B Llama on one 8 x A100 80 GB VM (79.15 GiB CUDA can allocate): some strategies do not fit
  // (tp = pp = 1 holds 13B parameters of weights, gradients and Adam states on every GPU), so both
  // counts are tested.
  const TransformerSpec m = Llama(40, 5120, 40);
  const Env& env = TheEnv();
  const SkuSpec* sku = *env.cat.FindSku(kA100);
  ClusterSpec cs;
  cs.sku = sku;
  cs.gpu = &env.cat.GpuOf(*sku);
  cs.vms = 1;
  cs.fabric.tiers = ChooseTiers(cs);
  StatusOr<Cluster> cluster = testing::BuildClusterForTest(cs);
  ASSERT_TRUE(cluster.ok());
  ClusterCosts costs(*cluster, env.cal, testing::BuiltinNcclCalibration(), Dtype::kBf16,
                     Fidelity::kAnalytical);
  const std::vector<Strategy> all = EnumerateTrainStrategies(m, 8, 8, 32, Dtype::kBf16);
  double best = 0;
  int64_t infeasible = 0;
  for (const Strategy& s : all) {
    TrainJob job;
    job.model = m;
    job.strategy = s;
    job.mbs_given = false;
    job.vpp_given = s.pp == 1;
    job.num_gpus = 8;
    job.gpus_per_vm = 8;
    job.nvlink_domain_gpus = 8;
    job.gpu_memory_bytes = cs.gpu->memory_bytes;
    job.memory_reserve = *TheEnv().reserve.For(cs.gpu->arch);
    StatusOr<TrainReport> r = RunTraining(job, costs);
    if (r.ok()) {
      best = std::max(best, r->tokens_per_s);
    } else {
      ++infeasible;
    }
  }
  StatusOr<PlanTrainReport> rep =
      PlanTraining(env.cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   env.cal, Request(m, 32, {kA100}));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->evaluated, static_cast<int64_t>(all.size()));
  EXPECT_EQ(rep->infeasible, infeasible);
  EXPECT_GT(infeasible, 0);
  EXPECT_LT(infeasible, rep->evaluated);
  ASSERT_FALSE(rep->results.empty());
  EXPECT_EQ(rep->results[0].tokens_per_s, best);
  for (size_t i = 1; i < rep->results.size(); ++i) {
    EXPECT_GE(rep->results[i - 1].tokens_per_s, rep->results[i].tokens_per_s);
  }
}

TEST(PlanTraining, SameBytesOnOneAndSevenThreads) {
  PlanTrainRequest req = Request(Llama(16, 2048, 16), 32, {kA100, kH100, kH200});
  req.vms = 2;
  req.top_k = 24;
  req.fidelity = Fidelity::kFlow;
  req.tokens = 1e9;
  req.threads = 1;
  StatusOr<GpuVariabilityTable> spread = LoadGpuVariability(Catalog::DefaultDataDir());
  ASSERT_TRUE(spread.ok()) << spread.status().message();
  req.variability = &*spread;  // the straggler's E[max] is memoised across threads
  StatusOr<PlanTrainReport> a = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), TheEnv().cal, req);
  req.threads = 7;
  StatusOr<PlanTrainReport> b = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), TheEnv().cal, req);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(a->results.size(), 24u);
  EXPECT_EQ(Bytes(*a), Bytes(*b));
}

// With a spread per architecture, every result is RunTraining of its configuration (mbs and vpp
// as plan resolved them) with its size's spread, bit for bit: the step waits for the slowest of
// its 8 GPUs as `train` does. The spreads differ per architecture (A100 8%, H100 16%, made up for
// the test), so a size taking another's would show: H100's fraction, sigma E[max of 8], is twice
// A100's, and without a table the straggler is 0 and each step shorter.
TEST(PlanTraining, EachResultWaitsForItsSizesSlowestGpuAsRunTrainingDoes) {
  const TransformerSpec m = Llama(16, 2048, 16);
  const Env& env = TheEnv();
  GpuVariabilityTable spread;
  spread.archs.push_back({"ampere", GpuVariability{0.08, "test"}});
  spread.archs.push_back({"hopper", GpuVariability{0.16, "test"}});
  PlanTrainRequest req = Request(m, 32, {kA100, kH100});
  req.top_k = 200;  // every feasible configuration of both sizes (H100's would fill a short list)
  req.variability = &spread;
  StatusOr<PlanTrainReport> rep = PlanTraining(env.cat, testing::BuiltinFabricParams(),
                                               testing::BuiltinNcclCalibration(), env.cal, req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_GT(rep->results.size(), 6u);
  req.variability = nullptr;
  StatusOr<PlanTrainReport> none = PlanTraining(env.cat, testing::BuiltinFabricParams(),
                                                testing::BuiltinNcclCalibration(), env.cal, req);
  ASSERT_TRUE(none.ok());
  EXPECT_GT(none->results[0].tokens_per_s, rep->results[0].tokens_per_s);
  for (const PlanResult& r : none->results) EXPECT_EQ(r.straggler_s, 0.0);
  EXPECT_DOUBLE_EQ(StragglerFraction(spread.For("hopper"), 8),
                   2 * StragglerFraction(spread.For("ampere"), 8));
  int a100 = 0;
  for (const PlanResult& r : rep->results) a100 += r.sku == kA100;
  EXPECT_GT(a100, 0);  // both sizes among the results
  EXPECT_LT(a100, static_cast<int>(rep->results.size()));
  for (const PlanResult& r : rep->results) {
    const SkuSpec* sku = *env.cat.FindSku(r.sku);
    ClusterSpec cs;
    cs.sku = sku;
    cs.gpu = &env.cat.GpuOf(*sku);
    cs.vms = 1;
    cs.fabric.tiers = ChooseTiers(cs);
    StatusOr<Cluster> cluster = testing::BuildClusterForTest(cs);
    ASSERT_TRUE(cluster.ok());
    ClusterCosts costs(*cluster, env.cal, testing::BuiltinNcclCalibration(), Dtype::kBf16,
                       Fidelity::kAnalytical);
    TrainJob job;
    job.model = m;
    job.strategy = r.strategy;
    job.mbs_given = true;
    job.vpp_given = true;
    job.num_gpus = 8;
    job.gpus_per_vm = 8;
    job.nvlink_domain_gpus = 8;
    job.gpu_memory_bytes = cs.gpu->memory_bytes;
    job.memory_reserve = *TheEnv().reserve.For(cs.gpu->arch);
    job.gpu_variability = spread.For(cs.gpu->arch);
    StatusOr<TrainReport> t = RunTraining(job, costs);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(r.step_time_s, t->sim.step_time_s) << r.sku;
    EXPECT_EQ(r.straggler_s, t->sim.breakdown.straggler_s) << r.sku;
    EXPECT_EQ(r.mfu, t->mfu) << r.sku;
    EXPECT_GT(r.straggler_s, 0.0);
  }
}

TEST(PlanTraining, BoundPruningNeverChangesTheResults) {
  // Every size with GPUs, 16 GPUs: skipping sizes whose peak-FLOP bound is below the K-th best
  // must give the same top K as scoring everything; skipped + scored = enumerated.
  const TransformerSpec m = Llama(16, 2048, 16);
  PlanTrainRequest req = Request(m, 64, {});
  for (const SkuSpec& s : TheEnv().cat.skus()) {
    if (s.gpus > 0) req.skus.push_back(&s);
  }
  req.vms = 0;
  req.gpus = 16;
  req.top_k = 3;
  StatusOr<PlanTrainReport> pruned =
      PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, req);
  req.prune_by_bound = false;
  StatusOr<PlanTrainReport> full =
      PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, req);
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  ASSERT_TRUE(full.ok()) << static_cast<int>(full.status().code()) << full.status().message();
  EXPECT_GT(pruned->bounded, 0);
  EXPECT_EQ(full->bounded, 0);
  EXPECT_EQ(pruned->evaluated + pruned->bounded, full->evaluated);
  ASSERT_EQ(pruned->results.size(), full->results.size());
  for (size_t i = 0; i < full->results.size(); ++i) {
    EXPECT_EQ(pruned->results[i].index, full->results[i].index);
    EXPECT_EQ(pruned->results[i].tokens_per_s, full->results[i].tokens_per_s);
    EXPECT_LE(full->results[i].mfu, 1.0);  // what the bound assumes
  }
}

TEST(PlanTraining, KeepScoredScoresEveryConfigurationAndKeepsTheResults) {
  // The same 16-GPU search as above: keep_scored turns the bound off (every size scored) and
  // lists every feasible configuration, best first; the results are unchanged and among them.
  const TransformerSpec m = Llama(16, 2048, 16);
  PlanTrainRequest req = Request(m, 64, {});
  for (const SkuSpec& s : TheEnv().cat.skus()) {
    if (s.gpus > 0) req.skus.push_back(&s);
  }
  req.vms = 0;
  req.gpus = 16;
  req.top_k = 3;
  StatusOr<PlanTrainReport> plain =
      PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, req);
  req.keep_scored = true;
  StatusOr<PlanTrainReport> kept =
      PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, req);
  ASSERT_TRUE(plain.ok() && kept.ok());
  EXPECT_TRUE(plain->scored.empty());
  EXPECT_EQ(kept->bounded, 0);
  EXPECT_EQ(static_cast<int64_t>(kept->scored.size()), kept->evaluated - kept->infeasible);
  for (size_t i = 1; i < kept->scored.size(); ++i) {
    EXPECT_GE(kept->scored[i - 1].tokens_per_s, kept->scored[i].tokens_per_s);
  }
  ASSERT_EQ(plain->results.size(), kept->results.size());
  for (size_t i = 0; i < kept->results.size(); ++i) {
    EXPECT_EQ(plain->results[i].index, kept->results[i].index);
    bool listed = false;
    for (const PlanResult& p : kept->scored) listed = listed || p.index == kept->results[i].index;
    EXPECT_TRUE(listed) << "result " << i;
  }
}

TEST(PlanTraining, RescoresTheBestAtFlowFidelity) {
  PlanTrainRequest req = Request(Llama(16, 2048, 16), 32, {kA100});
  req.vms = 2;
  req.top_k = 3;
  req.fidelity = Fidelity::kFlow;
  StatusOr<PlanTrainReport> r = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), TheEnv().cal, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->results.size(), 3u);
  for (const PlanResult& x : r->results) {
    EXPECT_EQ(x.fidelity, Fidelity::kFlow);
    EXPECT_EQ(x.gpus, 16);
  }
}

}  // namespace
}  // namespace ndt
