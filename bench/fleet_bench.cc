// Benchmark: the fleet Monte Carlo. BM_MonteCarloLlama3_10k: 10,000 runs of the 54-day Llama 3
// job on 16,384 H100 (2,048 x Standard_ND96isr_H100_v5, ~466 interruptions per run), async
// checkpoints to Lustre, 16 hot spares, one thread (target < 1 s, issue 18). The cluster, data
// and checkpoint plan are built once, outside the timed loop.
#include <benchmark/benchmark.h>

#include "core/check.h"
#include "fleet/fleet.h"
#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/fabric_params.h"

namespace ndt {
namespace {

struct Fixture {
  FleetModel model;
  RunLength len;
};

const Fixture& Llama3() {
  static const Catalog cat = [] {
    StatusOr<Catalog> c = Catalog::Load(Catalog::DefaultDataDir());
    NDT_CHECK(c.ok(), c.status().message());
    return *std::move(c);
  }();
  static const Fixture f = [] {
    StatusOr<FleetData> data = LoadFleetData(Catalog::DefaultDataDir());
    NDT_CHECK(data.ok(), data.status().message());
    StatusOr<FabricParams> fabric = LoadFabricParams(Catalog::DefaultDataDir());
    NDT_CHECK(fabric.ok(), fabric.status().message());
    const SkuSpec* sku = *cat.FindSku("Standard_ND96isr_H100_v5");
    ClusterSpec spec;
    spec.sku = sku;
    spec.gpu = &cat.GpuOf(*sku);
    spec.vms = 2048;
    spec.fabric.tiers = ChooseTiers(spec);
    StatusOr<Cluster> cl = BuildCluster(spec, *fabric);
    NDT_CHECK(cl.ok(), cl.status().message());
    const FleetCluster fc = DescribeCluster(*cl);
    const double bytes = 405.85e9 * 14 / fc.gpus;
    StatusOr<CheckpointPlan> ck = PlanCheckpoint(*data, fc, CheckpointTarget::kLustre, true, bytes,
                                                 bytes * fc.gpus, std::nullopt);
    NDT_CHECK(ck.ok(), ck.status().message());
    Fixture x;
    x.model = BuildFleetModel(data->reliability, fc, *ck, 1.0, 16, false, 5.25);
    x.len.wall_s = 54 * 86400.0;
    return x;
  }();
  return f;
}

void BM_MonteCarloLlama3_10k(benchmark::State& state) {
  const Fixture& f = Llama3();
  const double tau = std::max(300.0, f.model.write_s);
  double sink = 0;
  for (auto _ : state) {
    const MonteCarloResult r = RunMonteCarlo(f.model, tau, f.len, 10000, 1, 1);
    sink += r.goodput.mean;
  }
  benchmark::DoNotOptimize(sink);
  state.counters["runs_per_s"] =
      benchmark::Counter(10000.0 * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MonteCarloLlama3_10k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ndt
