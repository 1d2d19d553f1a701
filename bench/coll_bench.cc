// Benchmark: collective timing at scale. BM_AllReduceFlow16k: one 1 GiB all_reduce over 16,384
// GPUs (2,048 x Standard_ND96amsr_A100_v4, 3-tier rail-optimized fat tree) with the max-min flow
// model (target < 1 s wall per call; the cluster is built once, outside the timed loop).
// BM_AllReduceAnalytical16k: the same with the analytical model. BM_AllReduce1Vm: 1 VM sweep
// point (analytical), the per-call cost training search pays. BM_AllToAllFlow64Vms: one 1 GiB
// all_to_all over 512 GPUs (64 x Standard_ND96isr_H100_v5) with the flow model: 261,632 flows,
// ~290k subflows, hundreds of completion events (178 s before completions re-solved only the
// top of the max-min allocation; ~0.4 s after).
#include <benchmark/benchmark.h>

#include <numeric>

#include "coll/collective.h"
#include "coll/testing.h"
#include "core/check.h"
#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

// The catalog outlives every cluster built from it (a Cluster points into it).
const Catalog& Cat() {
  static const Catalog c = [] {
    StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
    NDT_CHECK(cat.ok(), cat.status().message());
    return *std::move(cat);
  }();
  return c;
}

struct Fixture {
  Cluster cluster;
  std::vector<int> group;
};

Fixture Make(int vms, const char* size = "Standard_ND96amsr_A100_v4") {
  Fixture f;
  StatusOr<const SkuSpec*> sku = Cat().FindSku(size);
  NDT_CHECK(sku.ok(), sku.status().message());
  ClusterSpec s;
  s.sku = *sku;
  s.gpu = &Cat().GpuOf(**sku);
  s.vms = vms;
  s.fabric.tiers = ChooseTiers(s);
  StatusOr<Cluster> c = testing::BuildClusterForTest(s);
  NDT_CHECK(c.ok(), c.status().message());
  f.cluster = *std::move(c);
  f.group.resize(f.cluster.num_gpus());
  std::iota(f.group.begin(), f.group.end(), 0);
  return f;
}

void Run(benchmark::State& state, int vms, Fidelity fid, CollOp op = CollOp::kAllReduce,
         const char* size = "Standard_ND96amsr_A100_v4") {
  Fixture f = Make(vms, size);
  CollOptions o;
  o.calibration = &testing::BuiltinNcclCalibration();
  o.fidelity = fid;
  double time_s = 0;
  for (auto _ : state) {
    StatusOr<CollResult> r = TimeCollective(f.cluster, op, 1 << 30, f.group, o);
    NDT_CHECK(r.ok(), r.status().message());
    time_s = r->time_s;
    benchmark::ClobberMemory();  // DoNotOptimize(double&) garbles doubles with GCC 12 +
                                 // benchmark 1.7
  }
  state.counters["gpus"] = f.cluster.num_gpus();
  state.counters["predicted_us"] = time_s * 1e6;
}

void BM_AllReduceFlow16k(benchmark::State& s) { Run(s, 2048, Fidelity::kFlow); }
void BM_AllReduceAnalytical16k(benchmark::State& s) { Run(s, 2048, Fidelity::kAnalytical); }
void BM_AllReduce1Vm(benchmark::State& s) { Run(s, 1, Fidelity::kAnalytical); }
void BM_AllToAllFlow64Vms(benchmark::State& s) {
  Run(s, 64, Fidelity::kFlow, CollOp::kAllToAll, "Standard_ND96isr_H100_v5");
}
BENCHMARK(BM_AllReduceFlow16k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllReduceAnalytical16k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_AllReduce1Vm)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AllToAllFlow64Vms)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ndt
