// PlanTraining under a software stack: its TP overlap and the ZeRO stages its software runs.
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

// Scoring runs on OpenMP threads (each with its own TrainJob, sharing the sizes' clusters and
// costs read-only): 1 and 7 threads (more than this machine's cores, so threads interleave) must
// give byte-identical reports, all 24 results (each re-simulated at flow fidelity) with every
// number. Shared mutable state in scoring (a cache, a job reused across threads) would show here.
TEST(PlanTraining, TheStacksTpOverlapIsSearchedAndNeverLoses) {
  // With megatron-core-2024 every tp > 1 candidate runs with TP overlap (the simulator exposes
  // max(comm / tp, comm - GEMM) <= comm), so the best is at least as fast as without a stack,
  // and its TP overlap is on where tp > 1.
  const TransformerSpec m = Llama(40, 5120, 40);
  StatusOr<std::vector<SoftwareStack>> stacks = LoadStacks(Catalog::DefaultDataDir());
  ASSERT_TRUE(stacks.ok());
  StatusOr<SoftwareStack> core = FindStack(*stacks, "megatron-core-2024", StackKind::kTraining);
  ASSERT_TRUE(core.ok());
  PlanTrainRequest plain = Request(m, 64, {kA100});
  plain.vms = 2;
  PlanTrainRequest stacked = plain;
  stacked.stack = &*core;
  const Env& env = TheEnv();
  StatusOr<PlanTrainReport> a = PlanTraining(env.cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), env.cal, plain);
  StatusOr<PlanTrainReport> b = PlanTraining(env.cat, testing::BuiltinFabricParams(),
                                             testing::BuiltinNcclCalibration(), env.cal, stacked);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GE(b->results[0].tokens_per_s, a->results[0].tokens_per_s);
  for (const PlanResult& r : b->results) {
    EXPECT_EQ(r.strategy.tp_overlap, r.strategy.tp > 1) << r.strategy.tp;
  }
  for (const PlanResult& r : a->results) EXPECT_FALSE(r.strategy.tp_overlap);
}

// ZeRO is searched over the stages the stack's software runs (traits.zero_stages): every other
// knob's combination with dp > 1 comes once per stage, dp 1 with ZeRO 0 alone, so on one size (no
// bound skips) each stage adds the same count: megatron-lm-2021 (0) plus one stage is
// megatron-core-2024 (0, 1), plus one more torchtitan-fsdp2-2024 (0, 2, 3), plus one more
// deepspeed-zero3-2021 (0-3). A 13B Llama, gbs 128 on 4 x 8 H100: with torchtitan the best is a
// ZeRO 2 or 3 configuration without a pipeline (the 13B's weights, gradients and Adam states
// sharded 32 ways leave room for mbs 2 with no recompute), which the planner never tried when it
// searched 0 and 1 only (its best was ZeRO 1 with tp or pp 2); and no pick of a stack has a stage
// its software cannot run (Megatron-Core 2024 no ZeRO 2 or 3, torchtitan no ZeRO 1).
TEST(PlanTraining, TheStacksZeroStagesAreSearchedAndNoOthers) {
  const TransformerSpec m = Llama(40, 5120, 40);
  StatusOr<std::vector<SoftwareStack>> stacks = LoadStacks(Catalog::DefaultDataDir());
  ASSERT_TRUE(stacks.ok());
  auto plan = [&](const char* name) {
    StatusOr<SoftwareStack> st = FindStack(*stacks, name, StackKind::kTraining);
    EXPECT_TRUE(st.ok()) << name;
    PlanTrainRequest req = Request(m, 128, {kH100});
    req.vms = 4;
    req.top_k = 3;
    req.stack = &*st;
    StatusOr<PlanTrainReport> r =
        PlanTraining(TheEnv().cat, testing::BuiltinFabricParams(),
                     testing::BuiltinNcclCalibration(), TheEnv().cal, req);
    EXPECT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->bounded, 0);
    for (const PlanResult& x : r->results) {
      EXPECT_NE(std::find(st->zero_stages.begin(), st->zero_stages.end(), x.strategy.zero),
                st->zero_stages.end())
          << name << " zero " << x.strategy.zero;
    }
    return *r;
  };
  const PlanTrainReport lm = plan("megatron-lm-2021");
  const PlanTrainReport core = plan("megatron-core-2024");
  const PlanTrainReport titan = plan("torchtitan-fsdp2-2024");
  const PlanTrainReport ds = plan("deepspeed-zero3-2021");
  EXPECT_GT(core.evaluated, lm.evaluated);
  EXPECT_EQ(titan.evaluated - core.evaluated, core.evaluated - lm.evaluated);
  EXPECT_EQ(ds.evaluated - titan.evaluated, core.evaluated - lm.evaluated);
  for (const PlanResult& r : core.results) EXPECT_LE(r.strategy.zero, 1);
  ASSERT_FALSE(titan.results.empty());
  EXPECT_GE(titan.results[0].strategy.zero, 2);
  EXPECT_EQ(titan.results[0].strategy.pp, 1);
}

// The note a plan gives where its stack cannot run every stage: Megatron-Core 2024's names ZeRO 2
// and 3 and the stacks that run either (deepspeed-zero3-2021, llm-foundry-2023, meta-llama3-2024,
// torchtitan-fsdp2-2024: the training stacks whose zero_stages hold 2 or 3, by name); DeepSpeed's
// runs all four, so none.
TEST(PlanTraining, ZeroStagesNoteSaysWhatTheStackCannotRun) {
  StatusOr<std::vector<SoftwareStack>> stacks = LoadStacks(Catalog::DefaultDataDir());
  ASSERT_TRUE(stacks.ok());
  StatusOr<SoftwareStack> core = FindStack(*stacks, "megatron-core-2024", StackKind::kTraining);
  StatusOr<SoftwareStack> ds = FindStack(*stacks, "deepspeed-zero3-2021", StackKind::kTraining);
  ASSERT_TRUE(core.ok() && ds.ok());
  EXPECT_EQ(ZeroStagesNote(*core, *stacks),
            "stack megatron-core-2024 runs ZeRO 0 and 1 only (traits.zero_stages, "
            "data/stacks/megatron-core-2024.yaml): ZeRO 2 and 3 not searched; --stack "
            "deepspeed-zero3-2021, llm-foundry-2023, meta-llama3-2024, nemo-2025, "
            "torchtitan-fsdp2-2024 can run them");
  EXPECT_EQ(ZeroStagesNote(*ds, *stacks), "");
  EXPECT_EQ(StackZeroStages(&*core), (std::vector<int>{0, 1}));
  EXPECT_EQ(StackZeroStages(nullptr), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace ndt
