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
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

constexpr char kA100[] = "Standard_ND96amsr_A100_v4";  // 8 x A100 80 GB, priced
constexpr char kH100[] = "Standard_ND96isr_H100_v5";   // 8 x H100 80 GB, priced
constexpr char kH200[] = "Standard_ND96isr_H200_v5";   // 8 x H200, no price

TransformerSpec Llama(int64_t layers, int64_t hidden, int64_t heads) {
  InlineModelArgs a;
  a.layers = layers;
  a.hidden = hidden;
  a.heads = heads;
  a.arch = "llama";
  StatusOr<TransformerSpec> m = BuildInlineModel(a);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

struct Env {
  Catalog cat;
  ComputeCalibration cal;
};

const Env& TheEnv() {
  static const Env* env = [] {
    const std::string dir = Catalog::DefaultDataDir();
    StatusOr<Catalog> cat = Catalog::Load(dir);
    StatusOr<ComputeCalibration> cal = LoadComputeCalibration(dir);
    EXPECT_TRUE(cat.ok() && cal.ok());
    return new Env{*cat, *cal};
  }();
  return *env;
}

PlanTrainRequest Request(const TransformerSpec& m, int64_t gbs, std::vector<std::string> skus) {
  PlanTrainRequest req;
  req.model = m;
  req.gbs = gbs;
  for (const std::string& s : skus) req.skus.push_back(*TheEnv().cat.FindSku(s));
  req.vms = 1;
  req.fidelity = Fidelity::kAnalytical;
  return req;
}

TEST(EnumerateTrainStrategies, CountsByHandOnEightGpus) {
  // 32 layers, 32 heads, 8 GPUs, NVLink domain 8. (tp, pp) with tp | 32, pp | 32, tp*pp | 8:
  // tp 1: pp 1,2,4,8; tp 2: pp 1,2,4; tp 4: pp 1,2; tp 8: pp 1 -> 10 pairs, dp = 8/(tp*pp)
  // in {8,4,2,1} all divide gbs 64. Times zero {0,1} and recompute {none,selective,full}, but
  // with dp 1 (tp*pp = 8: 4 pairs) ZeRO has nothing to shard and only ZeRO 0 is kept:
  // 6 pairs x 6 + 4 pairs x 3 = 48.
  const TransformerSpec m = Llama(32, 4096, 32);
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 8, 64, Dtype::kBf16).size(), 48u);
  // gbs 4: dp 8 (tp = pp = 1) does not divide it, 9 pairs left (4 of them dp 1): 5 x 6 + 4 x 3.
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 8, 4, Dtype::kBf16).size(), 42u);
  // 12 heads (hidden 1536): tp 8 does not divide them, 9 pairs (dp 1: (1,8), (2,4), (4,2)):
  // 6 x 6 + 3 x 3 = 45.
  EXPECT_EQ(EnumerateTrainStrategies(Llama(32, 1536, 12), 8, 8, 64, Dtype::kBf16).size(), 45u);
  // NVLink domain 2 (tp <= 2): tp 1 four pairs + tp 2 three: 7 pairs, of them dp 1: (1,8),
  // (2,4): 5 x 6 + 2 x 3 = 36.
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 2, 64, Dtype::kBf16).size(), 36u);
  // ZeRO given (train --zero 1) is kept as given, dp 1 too: the 10 pairs x 3 recomputes.
  TrainSearchSpace zero1;
  zero1.zero = 1;
  zero1.tp_overlap = false;
  Strategy base;
  base.gbs = 64;
  EXPECT_EQ(EnumerateTrainStrategies(m, 8, 8, base, zero1).size(), 30u);
}

TEST(EnumerateTrainStrategies, TpGroupsTileTheNvlinkDomainsTheGpusSpan) {
  // An NVL72 domain (GB200/GB300: 18 VMs of 4 GPUs), 64 heads. On 144 GPUs (two domains) TP
  // groups are consecutive ranks: tp 16 puts ranks 64-79 across the two domains (72 % 16 = 8),
  // tp 32 ranks 64-95, tp 64 ranks 64-127, each on InfiniBand while rank 0's group, the one
  // priced, sits inside domain 0; only tp 1, 2, 4, 8 (dividing 72) are searched. On 64 GPUs, one
  // domain, every power of two up to 64 is searched.
  const TransformerSpec m = Llama(80, 8192, 64);
  auto tps = [&](int gpus) {
    std::vector<int> out;
    for (const Strategy& s : EnumerateTrainStrategies(m, gpus, 72, 4608, Dtype::kBf16)) {
      if (std::find(out.begin(), out.end(), s.tp) == out.end()) out.push_back(s.tp);
    }
    return out;
  };
  EXPECT_EQ(tps(144), (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(tps(64), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  // A fixed --tp is kept as given (train checks it).
  TrainSearchSpace fixed;
  fixed.tp = 16;
  Strategy base;
  base.gbs = 4608;
  EXPECT_FALSE(EnumerateTrainStrategies(m, 144, 72, base, fixed).empty());
}

TEST(EnumerateTrainStrategies, StagesThatDoNotDivideTheLayersAreUneven) {
  // 30 layers on 8 GPUs, tp 1: pp 1, 2, 4, 8 all divide the GPUs; 30 % 4 and 30 % 8 != 0, so
  // those two run with uneven stages (first and last stages one layer short), the others even.
  const TransformerSpec m = Llama(30, 4096, 32);
  int uneven = 0, even = 0;
  for (const Strategy& s : EnumerateTrainStrategies(m, 8, 1, 64, Dtype::kBf16)) {
    EXPECT_EQ(s.uneven_stages, m.layers % s.pp != 0) << "pp " << s.pp;
    (s.uneven_stages ? uneven : even) += 1;
  }
  // pp 4 (zero {0,1} x recompute {none,sel,full}) and pp 8 (dp 1: zero 0 only, x 3).
  EXPECT_EQ(uneven, 6 + 3);
  EXPECT_EQ(even, 2 * 6);  // pp 1 and 2
}

TEST(EnumerateTrainStrategies, SpOnlyWithTensorParallelism) {
  for (const Strategy& s : EnumerateTrainStrategies(Llama(32, 4096, 32), 8, 8, 64, Dtype::kBf16)) {
    EXPECT_EQ(s.sp, s.tp > 1);
    EXPECT_EQ(s.tp * s.pp * s.dp, 8);
    EXPECT_EQ(s.cp, 1);
    EXPECT_EQ(s.ep, 1);
  }
}

TEST(EnumerateTrainStrategies, MoeSearchesEveryExpertDegreeTrainAccepts) {
  // TinyMoe (4 layers, 16 heads, 8 experts) on 8 GPUs, NVLink 8, gbs 64: tp 1, 2, 4, 8; pp 1, 2,
  // 4 (pp 3 does not divide 8). (tp, pp) -> dp: tp 1: 8, 4, 2; tp 2: 4, 2, 1; tp 4: 2, 1; tp 8: 1.
  // EP: the divisors of 8 experts dividing dp: dp 8 -> 1, 2, 4, 8 (4); dp 4 -> 3; dp 2 -> 2;
  // dp 1 -> 1. tp 1: 4 + 3 + 2, tp 2: 3 + 2 + 1, tp 4: 2 + 1, tp 8: 1 = 19, times ZeRO {0, 1} x
  // recompute {none, selective, full}: 114, less ZeRO 1 where dp is 1 (it shards nothing: the 3
  // (tp, pp) pairs with dp 1, x 3 recomputes): 105. The same shape dense: the 9 (tp, pp) pairs,
  // 9 x 6 - 9 = 45.
  const TransformerSpec moe = testing::TinyMoe(32000);
  const std::vector<Strategy> all = EnumerateTrainStrategies(moe, 8, 8, 64, Dtype::kBf16);
  EXPECT_EQ(all.size(), 105u);
  for (const Strategy& s : all) {
    EXPECT_EQ(moe.moe.experts % s.ep, 0) << "ep " << s.ep;
    EXPECT_EQ(s.dp % s.ep, 0) << "ep " << s.ep << " dp " << s.dp;
  }
  TransformerSpec dense = moe;
  dense.moe = MoeSpec{};
  dense.ffn_hidden = 3584;
  const std::vector<Strategy> d = EnumerateTrainStrategies(dense, 8, 8, 64, Dtype::kBf16);
  EXPECT_EQ(d.size(), 45u);
  for (const Strategy& s : d) EXPECT_EQ(s.ep, 1);
  // A given ep is kept: ep 4 needs dp 4 or 8: (tp 1, pp 1), (tp 1, pp 2), (tp 2, pp 1), x 6.
  Strategy base;
  base.gbs = 64;
  TrainSearchSpace space;
  space.tp_overlap = false;
  space.ep = 4;
  const std::vector<Strategy> given = EnumerateTrainStrategies(moe, 8, 8, base, space);
  EXPECT_EQ(given.size(), 18u);
  for (const Strategy& s : given) EXPECT_EQ(s.ep, 4);
}

TEST(EnumerateTrainStrategies, NeverProposesAnExpertDegreeTrainRefuses) {
  // 6 experts on 24 GPUs (dp 1, 2, 3, 4, 6, 8, 12, 24 across the (tp, pp) pairs, so EP 2, 3 and 6
  // each divide some dp and not others): every candidate passes train's own check
  // (ResolveStrategy, with the degree the planner resolves the micro-batch to: 1), and every
  // degree that check accepts for a (tp, pp, dp) is proposed.
  TransformerSpec m = testing::TinyMoe(32000);
  m.moe.experts = 6;
  std::map<std::tuple<int, int, int>, std::set<int>> eps;
  for (Strategy s : EnumerateTrainStrategies(m, 24, 8, 48, Dtype::kBf16)) {
    eps[{s.tp, s.pp, s.dp}].insert(s.ep);
    std::vector<std::string> w;
    const Status st = ResolveStrategy(m, 24, 8, &s, &w);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  ASSERT_FALSE(eps.empty());
  for (const auto& [shape, got] : eps) {
    std::set<int> want;
    for (int ep = 1; ep <= 6; ++ep) {
      if (CheckExpertDegree(m, ep, std::get<2>(shape)).ok()) want.insert(ep);
    }
    EXPECT_EQ(got, want) << "dp " << std::get<2>(shape);
  }
}

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

// Everything a plan reports, numbers as exact hex floats (%a): two reports print the same bytes
// only if every field is bit-identical.
std::string Bytes(const PlanTrainReport& r) {
  std::string out;
  auto add = [&out](const char* fmt, auto v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), fmt, v);
    out += buf;
  };
  add("evaluated %lld ", static_cast<long long>(r.evaluated));
  add("infeasible %lld ", static_cast<long long>(r.infeasible));
  add("bounded %lld\n", static_cast<long long>(r.bounded));
  for (const std::string& n : r.notes) out += "note " + n + "\n";
  for (const PlanResult& p : r.results) {
    const Strategy& s = p.strategy;
    out += p.sku;
    add(" #%zu", p.index);
    add(" vms %d", p.vms);
    add(" gpus %d", p.gpus);
    add(" tp %d", s.tp);
    add(" pp %d", s.pp);
    add(" dp %d", s.dp);
    add(" ep %d", s.ep);
    add(" vpp %d", s.vpp);
    add(" sp %d", static_cast<int>(s.sp));
    add(" zero %d", s.zero);
    add(" rc %d", static_cast<int>(s.recompute));
    add(" mbs %lld", static_cast<long long>(s.mbs));
    add(" step %a", p.step_time_s);
    add(" straggler %a", p.straggler_s);
    add(" tok/s %a", p.tokens_per_s);
    add(" mfu %a", p.mfu);
    add(" mem %a", p.memory_bytes);
    add(" ttt %a", p.time_to_train_s);
    add(" usd %a", p.cost_usd);
    add(" priced %d", static_cast<int>(p.priced));
    add(" fid %d\n", static_cast<int>(p.fidelity));
  }
  return out;
}

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
    job.gpu_variability = spread.For(cs.gpu->arch);
    StatusOr<TrainReport> t = RunTraining(job, costs);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(r.step_time_s, t->sim.step_time_s) << r.sku;
    EXPECT_EQ(r.straggler_s, t->sim.breakdown.straggler_s) << r.sku;
    EXPECT_EQ(r.mfu, t->mfu) << r.sku;
    EXPECT_GT(r.straggler_s, 0.0);
  }
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
            "deepspeed-zero3-2021, llm-foundry-2023, meta-llama3-2024, torchtitan-fsdp2-2024 can "
            "run them");
  EXPECT_EQ(ZeroStagesNote(*ds, *stacks), "");
  EXPECT_EQ(StackZeroStages(&*core), (std::vector<int>{0, 1}));
  EXPECT_EQ(StackZeroStages(nullptr), (std::vector<int>{0, 1}));
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
