// Benchmark: building the cluster graph at 16,384 GPUs (2,048 VMs of ND96amsr_A100_v4 and
// 4,096 VMs of ND128isr_GB300_v6, 3-tier rail-optimized fat tree of radix 64), plus routing.
// Counters: nodes, full-duplex links, GPUs. Run: build-<dir>/topo_bench.
#include <benchmark/benchmark.h>

#include "core/check.h"
#include "hw/catalog.h"
#include "topo/builders.h"

namespace ndt {
namespace {

struct Fixture {
  Catalog catalog;
  FabricParams params;
};

Fixture Load() {
  StatusOr<Catalog> c = Catalog::Load(Catalog::DefaultDataDir());
  NDT_CHECK(c.ok(), c.status().message());
  StatusOr<FabricParams> p = LoadFabricParams(Catalog::DefaultDataDir());
  NDT_CHECK(p.ok(), p.status().message());
  return Fixture{std::move(c).value(), std::move(p).value()};
}

// Loaded once for all benchmarks (function-local, read-only after the first call).
const Fixture& Data() {
  static const Fixture f = Load();
  return f;
}

ClusterSpec Spec(const char* sku, int vms) {
  StatusOr<const SkuSpec*> s = Data().catalog.FindSku(sku);
  NDT_CHECK(s.ok(), s.status().message());
  ClusterSpec spec;
  spec.sku = *s;
  spec.gpu = &Data().catalog.GpuOf(**s);
  spec.vms = vms;
  spec.fabric.tiers = 3;
  return spec;
}

void BM_BuildCluster(benchmark::State& state, const char* sku, int vms) {
  ClusterSpec spec = Spec(sku, vms);
  size_t nodes = 0, links = 0;
  int gpus = 0;
  for (auto _ : state) {
    StatusOr<Cluster> c = BuildCluster(spec, Data().params);
    NDT_CHECK(c.ok(), c.status().message());
    nodes = c->nodes().size();
    links = c->links().size() / 2;
    gpus = c->num_gpus();
    benchmark::DoNotOptimize(c);
  }
  state.counters["gpus"] = gpus;
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["links"] = static_cast<double>(links);
}
BENCHMARK_CAPTURE(BM_BuildCluster, ND96amsr_A100_v4_16384gpu, "ND96amsr_A100_v4", 2048)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildCluster, ND128isr_GB300_v6_16384gpu, "ND128isr_GB300_v6", 4096)
    ->Unit(benchmark::kMillisecond);

// Routes from GPU 0 to every other GPU (NVLink, same leaf, other pod).
void BM_GpuRouteAll(benchmark::State& state) {
  ClusterSpec spec = Spec("ND96amsr_A100_v4", 2048);
  StatusOr<Cluster> c = BuildCluster(spec, Data().params);
  NDT_CHECK(c.ok(), c.status().message());
  for (auto _ : state) {
    size_t hops = 0;
    for (int b = 1; b < c->num_gpus(); ++b) hops += c->GpuRoute(0, b)[0].links.size();
    benchmark::DoNotOptimize(hops);
  }
  state.SetItemsProcessed(state.iterations() * (c->num_gpus() - 1));
}
BENCHMARK(BM_GpuRouteAll)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ndt
