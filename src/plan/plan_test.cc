// PlanTraining: expert parallelism, objectives and prices, and its one-line errors.
#include "plan/plan.h"

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
#include "plan/testing.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

using namespace plan_testing;  // NOLINT: the shared helpers, as in every plan test file

TEST(PlanTraining, PicksExpertParallelismWhereTheExpertsFitOnlySplit) {
  // parallel/testing.h MoeFitsOnlySplit: on one 8 x H100 VM tp and pp stay 1 and ep 1 or 2 does
  // not fit (145 and 87 GB per GPU before activations), ep 4 (58 GB) and ep 8 (43.5 GB) do.
  PlanTrainRequest req = Request(testing::MoeFitsOnlySplit(), 8, {kH100});
  req.top_k = 3;
  StatusOr<PlanTrainReport> r = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), TheEnv().cal, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->results.empty());
  for (const PlanResult& x : r->results) {
    EXPECT_GE(x.strategy.ep, 4);
    EXPECT_EQ(x.strategy.tp, 1);
    EXPECT_EQ(x.strategy.pp, 1);
    // train takes what the planner proposes.
    Strategy s = x.strategy;
    std::vector<std::string> w;
    EXPECT_TRUE(ResolveStrategy(req.model, 8, 8, &s, &w).ok());
  }
  // --ep 1 fixed: nothing fits (145 GB per GPU above), and the error says so.
  req.ep = 1;
  r = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(r.status().message().find("does not fit in GPU memory"), std::string::npos);
  // --ep 8 fixed: kept in every result.
  req.ep = 8;
  r = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->results.empty());
  for (const PlanResult& x : r->results) EXPECT_EQ(x.strategy.ep, 8);
}

TEST(PlanTraining, AGivenEpTrainWouldRefuseIsOneLineNamingTheFlag) {
  auto plan = [](const TransformerSpec& m, int ep, int gpus) {
    PlanTrainRequest req = Request(m, 64, {kH100});
    req.vms = 0;
    req.gpus = gpus;
    req.ep = ep;
    return PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                        testing::BuiltinNcclCalibration(), TheEnv().cal, req)
        .status();
  };
  const TransformerSpec moe = testing::TinyMoe(32000);
  Status st = plan(moe, 3, 8);
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(st.message(), "--ep 3 must divide the 8 routed experts of 'custom'");
  st = plan(moe, 0, 8);
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(st.message(), "--ep must be >= 1 (got 0)");
  st = plan(Llama(16, 2048, 16), 2, 8);
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(st.message(), "--ep 2 needs a mixture-of-experts model; 'custom' is dense");
  // ep 8 on 8 GPUs needs dp 8 (tp = pp = 1), which gbs 4 does not allow (dp divides the batch):
  // no candidate at all.
  PlanTrainRequest req = Request(moe, 4, {kH100});
  req.ep = 8;
  st = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                    TheEnv().cal, req)
           .status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidInput);
  EXPECT_NE(st.message().find("--ep 8 divides no candidate's dp"), std::string::npos);
}

TEST(PlanTraining, CostRanksTheSizeWithMoreTokensPerDollarFirst) {
  // One VM each, so cost = tokens / (tokens/s) / 3600 * price: least cost <=> most tokens/s per
  // $/h. The best tokens/s of each size comes from a throughput plan of that size alone.
  const TransformerSpec m = Llama(16, 2048, 16);
  const double tokens = 1e9;
  const Env& env = TheEnv();
  double per_usd[2];
  const char* names[2] = {kA100, kH100};
  for (int i = 0; i < 2; ++i) {
    StatusOr<PlanTrainReport> r =
        PlanTraining(env.cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                     env.cal, Request(m, 32, {names[i]}));
    ASSERT_TRUE(r.ok());
    per_usd[i] = r->results[0].tokens_per_s / (*env.cat.FindSku(names[i]))->price->usd_per_hour;
  }
  PlanTrainRequest req = Request(m, 32, {kH100, kA100, kH200});
  req.objective = PlanObjective::kCost;
  req.tokens = tokens;
  StatusOr<PlanTrainReport> rep = PlanTraining(env.cat, testing::BuiltinFabricParams(),
                                               testing::BuiltinNcclCalibration(), env.cal, req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const PlanResult& best = rep->results[0];
  EXPECT_EQ(best.sku, per_usd[0] > per_usd[1] ? kA100 : kH100);
  const double price = (*env.cat.FindSku(best.sku))->price->usd_per_hour;
  EXPECT_NEAR(best.cost_usd, tokens / best.tokens_per_s / 3600 * price, 1e-9 * best.cost_usd);
  // The unpriced H200 is skipped with a note.
  ASSERT_EQ(rep->notes.size(), 1u);
  EXPECT_NE(rep->notes[0].find("no price"), std::string::npos);
  for (size_t i = 1; i < rep->results.size(); ++i) {
    EXPECT_LE(rep->results[i - 1].cost_usd, rep->results[i].cost_usd);
  }
}

TEST(PlanTraining, ACostRankingOfUnpricedSizesSaysHowToPriceThem) {
  // Cost over ND H200 v5 alone (no list price): no size to run, and the fix is a price, not
  // only another --gpus or --sku.
  PlanTrainRequest req = Request(Llama(16, 2048, 16), 64, {kH200});
  req.objective = PlanObjective::kCost;
  req.tokens = 1e9;
  StatusOr<PlanTrainReport> rep =
      PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(rep.status().message(),
            "no VM size can run this request (no price, skipped (objective cost): "
            "Standard_ND96isr_H200_v5); try another --gpus or --sku, or give a size its price with "
            "--price-per-hour");
}

TEST(PlanTraining, TimeAndCostNeedTokens) {
  PlanTrainRequest req = Request(Llama(16, 2048, 16), 32, {kA100});
  req.objective = PlanObjective::kTime;
  StatusOr<PlanTrainReport> r = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), TheEnv().cal, req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("--tokens"), std::string::npos);
}

TEST(PlanTraining, NothingFitsSaysWhyAndSuggestsMoreGpus) {
  // GPT-3 175B on 8 x 80 GB: 175e9 parameters x 16 bytes (bf16 weights and grads, fp32 master
  // and Adam) / 8 GPUs = 350 GB per GPU even fully split, so every candidate is pruned.
  InlineModelArgs a;
  a.layers = 96;
  a.hidden = 12288;
  a.heads = 96;
  const TransformerSpec m = *BuildInlineModel(a);
  StatusOr<PlanTrainReport> r =
      PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(),
                   TheEnv().cal, Request(m, 64, {kA100}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(r.status().message().find("does not fit in GPU memory"), std::string::npos);
  EXPECT_NE(r.status().message().find("more GPUs"), std::string::npos);
}

TEST(PlanTraining, GpusSkipSizesThatDoNotDivide) {
  // 12 GPUs: the 8-GPU A100 size cannot make 12, so nothing is left.
  PlanTrainRequest req = Request(Llama(16, 2048, 16), 32, {kA100});
  req.vms = 0;
  req.gpus = 12;
  StatusOr<PlanTrainReport> r = PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), TheEnv().cal, req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
}

}  // namespace
}  // namespace ndt
