#include "plan/choose.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "coll/testing.h"
#include "parallel/cluster_costs.h"
#include "parallel/testing.h"
#include "plan/testing.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

struct Env {
  Catalog cat;
  ComputeCalibration cal;
  std::vector<SoftwareStack> stacks;
  MemoryReserveTable reserve;
};

const Env& TheEnv() {
  static const Env* env = [] {
    const std::string dir = Catalog::DefaultDataDir();
    StatusOr<Catalog> cat = Catalog::Load(dir);
    StatusOr<ComputeCalibration> cal = LoadComputeCalibration(dir);
    StatusOr<std::vector<SoftwareStack>> stacks = LoadStacks(dir);
    StatusOr<MemoryReserveTable> reserve = LoadMemoryReserve(dir);
    EXPECT_TRUE(cat.ok() && cal.ok() && stacks.ok() && reserve.ok());
    return new Env{*cat, *cal, *stacks, *reserve};
  }();
  return *env;
}

using plan_testing::Llama;

// One 8 x H100 80 GB VM, analytical costs.
struct OneVm {
  std::unique_ptr<Cluster> cluster;
  std::unique_ptr<ClusterCosts> costs;
  TrainJob job;
};

std::unique_ptr<OneVm> MakeVm(const TransformerSpec& m, int64_t gbs, const SoftwareStack& stack) {
  const Env& env = TheEnv();
  const SkuSpec* sku = *env.cat.FindSku("Standard_ND96isr_H100_v5");
  ClusterSpec cs;
  cs.sku = sku;
  cs.gpu = &env.cat.GpuOf(*sku);
  cs.vms = 1;
  cs.fabric.tiers = ChooseTiers(cs);
  StatusOr<Cluster> c = testing::BuildClusterForTest(cs);
  EXPECT_TRUE(c.ok());
  auto vm = std::make_unique<OneVm>();
  vm->cluster = std::make_unique<Cluster>(std::move(*c));
  vm->costs =
      std::make_unique<ClusterCosts>(*vm->cluster, env.cal, testing::BuiltinNcclCalibration(),
                                     Dtype::kBf16, Fidelity::kAnalytical);
  vm->job.model = m;
  vm->job.strategy.gbs = gbs;
  vm->job.mbs_given = false;
  vm->job.vpp_given = false;
  vm->job.num_gpus = 8;
  vm->job.gpus_per_vm = 8;
  vm->job.nvlink_domain_gpus = 8;
  vm->job.gpu_memory_bytes = cs.gpu->memory_bytes;
  vm->job.memory_reserve = *env.reserve.For(cs.gpu->arch);
  ApplyTrainStack(stack, {}, &vm->job.strategy);
  return vm;
}

SoftwareStack Stack(const std::string& name) {
  return *FindStack(TheEnv().stacks, name, StackKind::kTraining);
}

TEST(ChooseTrainStrategy, IsTheFastestFeasibleOfEveryTpAndPpWithTheStacksKnobs) {
  // A 13B Llama: every (tp, pp) dividing 8 GPUs with heads % tp == 0 and 40 % pp == 0 is run
  // by hand with the stack's knobs; the choice must be the fastest feasible one.
  const TransformerSpec m = Llama(40, 5120, 40);
  const SoftwareStack stack = Stack("megatron-core-2024");
  auto vm = MakeVm(m, 64, stack);
  TrainSearchSpace space;
  space.allow_uneven = false;
  StatusOr<TrainChoice> c = ChooseTrainStrategy(vm->job, *vm->costs, space, stack, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  double best = 1e300;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp : {1, 2, 4, 8}) {
      if (tp * pp > 8 || 40 % pp != 0) continue;
      TrainJob j = vm->job;
      j.strategy.tp = tp;
      j.strategy.pp = pp;
      j.strategy.dp = 0;
      j.vpp_given = pp == 1;
      ApplyTrainStack(stack, {}, &j.strategy);
      StatusOr<TrainReport> r = RunTraining(j, *vm->costs);
      if (r.ok()) best = std::min(best, r->sim.step_time_s);
    }
  }
  TrainJob chosen = vm->job;
  chosen.strategy = c->strategy;
  chosen.vpp_given = c->strategy.pp == 1;
  StatusOr<TrainReport> r = RunTraining(chosen, *vm->costs);
  ASSERT_TRUE(r.ok());
  // The closed form ranks, the best 8 are simulated: the choice is the best by simulation.
  EXPECT_DOUBLE_EQ(r->sim.step_time_s, best);
  EXPECT_EQ(c->strategy.zero, 1);  // the stack's, since it fits
  EXPECT_FALSE(c->widened);
  ASSERT_GE(c->chosen.size(), 3u);
  EXPECT_EQ(c->chosen[0], "tp " + std::to_string(c->strategy.tp));
}

TEST(ChooseTrainStrategy, SearchesExpertParallelismWhenLeftOutAndKeepsAGivenOne) {
  // parallel/testing.h MoeFitsOnlySplit on one 8 x H100 VM: tp = pp = 1 forced, and with the
  // stack's ZeRO 1 only ep 4 or 8 fits, so train without --ep must search EP (it ran ep 1 and
  // failed before) and say what it chose.
  const TransformerSpec m = testing::MoeFitsOnlySplit();
  const SoftwareStack stack = Stack("megatron-core-2024");
  auto vm = MakeVm(m, 8, stack);
  TrainSearchSpace space;
  space.allow_uneven = false;
  StatusOr<TrainChoice> c = ChooseTrainStrategy(vm->job, *vm->costs, space, stack, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_GE(c->strategy.ep, 4);
  EXPECT_EQ(c->strategy.zero, 1);
  EXPECT_FALSE(c->widened);
  EXPECT_NE(std::find(c->chosen.begin(), c->chosen.end(), "ep " + std::to_string(c->strategy.ep)),
            c->chosen.end());
  // --ep 8: kept, and not listed as chosen.
  space.ep = 8;
  vm->job.strategy.ep = 8;
  c = ChooseTrainStrategy(vm->job, *vm->costs, space, stack, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->strategy.ep, 8);
  for (const std::string& x : c->chosen) EXPECT_NE(x.rfind("ep ", 0), 0u) << x;
  // A dense model never lists ep.
  auto dense = MakeVm(Llama(16, 2048, 16), 64, stack);
  c = ChooseTrainStrategy(dense->job, *dense->costs, TrainSearchSpace{}, stack, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->strategy.ep, 1);
  for (const std::string& x : c->chosen) EXPECT_NE(x.rfind("ep ", 0), 0u) << x;
}

TEST(ChooseTrainStrategy, KeepsGivenKnobsAndWidensZeroOnlyWhenTheStacksDoesNotFit) {
  // 13B on tp 1, pp 1 (given): weights, gradients and the stack's ZeRO-1 states are
  // 13e9 x (2 + 4 + 12/8) B = 97.6 GB per GPU > 80 GB, so ZeRO 3 (13e9 x 18 / 8 = 29 GB) is
  // chosen, and said to depart from the stack: megatron-core-2024 runs ZeRO 0 and 1 only
  // (traits.zero_stages), so the choice also says the stack cannot run it. (fp32 gradients, as
  // Megatron-LM keeps them: the stack's own grad_dtype is bf16.)
  const TransformerSpec m = Llama(40, 5120, 40);
  SoftwareStack stack = Stack("megatron-core-2024");
  stack.grad_bytes_per_param = 4;
  auto vm = MakeVm(m, 64, stack);
  TrainSearchSpace space;
  space.tp = 1;
  space.pp = 1;
  space.allow_uneven = false;
  StatusOr<TrainChoice> c = ChooseTrainStrategy(vm->job, *vm->costs, space, stack, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->strategy.tp, 1);
  EXPECT_EQ(c->strategy.pp, 1);
  EXPECT_TRUE(c->widened);
  EXPECT_GT(c->strategy.zero, 1);
  ASSERT_FALSE(c->chosen.empty());
  EXPECT_NE(c->chosen[0].find("the stack's 1 does not fit"), std::string::npos) << c->chosen[0];
  EXPECT_NE(c->chosen[0].find("; megatron-core-2024 cannot run ZeRO "), std::string::npos)
      << c->chosen[0];
}

TEST(ChooseTrainStrategy, WidensRecomputeWithinTheStacksZeroStagesBeforeLeavingThem) {
  // A 6.4B Llama (32 x 4096) on tp 1, pp 1, dp 8 at mbs 2 (this test's model: 4,096 tokens).
  // GiB per GPU: weights 12.4, fp32 gradients 24.8 (ZeRO 1) or 3.1 (ZeRO 2: sharded over 8),
  // optimizer 9.3, activations without recompute ~34 (68.2 at mbs 4, as this test printed while
  // written). Usable: 79.11 GiB less the reserve (data/memory_reserve.yaml, one communicator:
  // context 0.60, cuBLAS 0.03, NCCL 0.14, 5% of the 78.37 GiB pool 3.92) = 74.4 GiB. ZeRO 1
  // without recompute: ~81 > 74.4; ZeRO 2: ~59 fits; ZeRO 1 with full recompute (one layer's
  // activations and the layer inputs) fits. megatron-core-2024 runs ZeRO 0 and 1 only
  // (traits.zero_stages): the choice must keep ZeRO 1 and recompute, as a Megatron-Core 0.9 user
  // would (the search used to take ZeRO 2). (fp32 gradients, as Megatron-LM keeps them: the stack's
  // own grad_dtype is bf16.)
  const TransformerSpec m = Llama(32, 4096, 32);
  SoftwareStack stack = Stack("megatron-core-2024");
  stack.grad_bytes_per_param = 4;
  auto vm = MakeVm(m, 64, stack);
  vm->job.strategy.mbs = 2;
  vm->job.mbs_given = true;
  TrainSearchSpace space;
  space.tp = 1;
  space.pp = 1;
  space.allow_uneven = false;
  // The premise: the stack's own knobs (ZeRO 1, no recompute) do not fit.
  TrainSearchSpace as_stack = space;
  as_stack.zero = 1;
  as_stack.recompute = Recompute::kNone;
  EXPECT_FALSE(ChooseTrainStrategy(vm->job, *vm->costs, as_stack, stack, {}).ok());
  StatusOr<TrainChoice> c = ChooseTrainStrategy(vm->job, *vm->costs, space, stack, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->widened);
  EXPECT_LE(c->strategy.zero, 1);
  EXPECT_NE(c->strategy.recompute, Recompute::kNone);
  for (const std::string& x : c->chosen) EXPECT_EQ(x.find("cannot run"), std::string::npos) << x;
}

TEST(ChooseTrainStrategy, NothingFitsNamesTheSmallestFootprint) {
  // 175B-class on 8 GPUs: no tp x pp x ZeRO x recompute fits.
  const TransformerSpec m = Llama(96, 12288, 96);
  const SoftwareStack stack = Stack("megatron-core-2024");
  auto vm = MakeVm(m, 64, stack);
  TrainSearchSpace space;
  space.allow_uneven = false;
  StatusOr<TrainChoice> c = ChooseTrainStrategy(vm->job, *vm->costs, space, stack, {});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kDoesNotFit);
  EXPECT_NE(c.status().message().find("the smallest does not fit"), std::string::npos);
  EXPECT_NE(c.status().message().find("more --vms"), std::string::npos);
}

TEST(Strategy, EqualityComparesEveryField) {
  const SoftwareStack stack = Stack("megatron-core-2024");
  Strategy a;
  ApplyTrainStack(stack, {}, &a);
  const Strategy b = a;
  EXPECT_TRUE(a == b);
  // One field apart, each kind of member (int, enum, double inside a trait, the order array).
  Strategy c = a;
  c.dp = 4;
  EXPECT_FALSE(a == c);
  c = a;
  c.recompute = Recompute::kFull;
  EXPECT_FALSE(a == c);
  c = a;
  c.zero3.host_view_s += 1e-6;
  EXPECT_FALSE(a == c);
  c = a;
  c.tp_ub.rs_splits += 1;
  EXPECT_FALSE(a == c);
  c = a;
  std::swap(c.order[0], c.order[1]);
  EXPECT_FALSE(a == c);
}

TEST(ChooseTrainStrategy, TheJobAsGivenTakesItsOwnErrorOnlyWhenItIsTheCandidate) {
  // 175B-class on 8 GPUs with tp 8, pp 1, ZeRO 1 and no recompute given, dp left out: the one
  // candidate is the job as given (dp 0 derived as 8 / 8 = 1), which does not fit. The chooser
  // must return the job's own error, the same with and without `as_given`.
  const TransformerSpec m = Llama(96, 12288, 96);
  const SoftwareStack stack = Stack("megatron-core-2024");
  auto vm = MakeVm(m, 64, stack);
  StrategyKnobs user;
  user.zero = 1;
  user.recompute = Recompute::kNone;
  TrainJob job = vm->job;
  job.strategy.tp = 8;
  job.strategy.pp = 1;
  job.strategy.dp = 0;
  job.vpp_given = true;
  job.closed_form_search = true;
  ApplyTrainStack(stack, user, &job.strategy);
  TrainSearchSpace space;
  space.tp = 8;
  space.pp = 1;
  space.zero = 1;
  space.recompute = Recompute::kNone;
  space.allow_uneven = false;
  const StatusOr<TrainReport> run = RunTraining(job, *vm->costs);
  ASSERT_FALSE(run.ok());
  ASSERT_EQ(run.status().code(), StatusCode::kDoesNotFit);
  const Status own = run.status();
  StatusOr<TrainChoice> plain = ChooseTrainStrategy(job, *vm->costs, space, stack, user);
  StatusOr<TrainChoice> taken = ChooseTrainStrategy(job, *vm->costs, space, stack, user, &own);
  ASSERT_FALSE(plain.ok());
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(plain.status().code(), own.code());
  EXPECT_EQ(plain.status().message(), own.message());
  EXPECT_EQ(taken.status().code(), own.code());
  EXPECT_EQ(taken.status().message(), own.message());
  // A marker shows which runs take `as_given` instead of running the candidate again.
  const Status marker = Status::DoesNotFit("marker");
  StatusOr<TrainChoice> c = ChooseTrainStrategy(job, *vm->costs, space, stack, user, &marker);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(), "marker");
  // Not taken: the job's strategy is not the candidate (dp given as 2, tp 4 against the space's 8),
  // or the job was not scored as the candidate is (simulated, or with a trace).
  for (int k = 0; k < 4; ++k) {
    TrainJob other = job;
    if (k == 0) other.strategy.dp = 2;
    if (k == 1) other.strategy.tp = 4;
    if (k == 2) other.closed_form_search = false;
    if (k == 3) other.want_trace = true;
    StatusOr<TrainChoice> o = ChooseTrainStrategy(other, *vm->costs, space, stack, user, &marker);
    EXPECT_TRUE(o.ok() || o.status().message() != "marker") << k;
  }
}

}  // namespace
}  // namespace ndt
