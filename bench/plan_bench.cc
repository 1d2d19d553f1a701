// Benchmark: `plan train` for gpt3-175b (gbs 1536) on 1,024 GPUs over every VM size of the
// catalog, analytical scoring only (BM_PlanGpt3Analytical) and with the best 10 re-scored at flow
// fidelity (BM_PlanGpt3Flow). Counter: configurations/s (Calculon reports ~64/s). Threads: the
// OpenMP default (all cores). Run: build-<dir>/plan_bench.
#include <benchmark/benchmark.h>

#include "coll/testing.h"
#include "compute/compute.h"
#include "core/check.h"
#include "hw/catalog.h"
#include "plan/plan.h"
#include "topo/testing.h"

namespace ndt {
namespace {

void RunPlan(benchmark::State& state, Fidelity fidelity) {
  StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
  NDT_CHECK(cat.ok(), cat.status().message());
  StatusOr<ComputeCalibration> cal = LoadComputeCalibration("");
  NDT_CHECK(cal.ok(), cal.status().message());
  StatusOr<TransformerSpec> model = LoadModel("gpt3-175b", ModelsDir(""));
  NDT_CHECK(model.ok(), model.status().message());
  static const MemoryReserveTable reserve = [] {
    StatusOr<MemoryReserveTable> t = LoadMemoryReserve(Catalog::DefaultDataDir());
    NDT_CHECK(t.ok(), t.status().message());
    return std::move(t).value();
  }();
  PlanTrainRequest req;
  req.model = *model;
  req.memory_reserve = &reserve;
  req.gbs = 1536;
  req.gpus = 1024;
  req.fidelity = fidelity;
  for (const SkuSpec& s : cat->skus()) {
    if (s.gpus > 0) req.skus.push_back(&s);
  }
  int64_t configs = 0;
  for (auto _ : state) {
    StatusOr<PlanTrainReport> r = PlanTraining(*cat, testing::BuiltinFabricParams(),
                                               testing::BuiltinNcclCalibration(), *cal, req);
    NDT_CHECK(r.ok(), r.status().message());
    configs += r->evaluated;
    benchmark::DoNotOptimize(r->results.data());
  }
  state.counters["configs"] = static_cast<double>(configs) / state.iterations();
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(configs), benchmark::Counter::kIsRate);
}

void BM_PlanGpt3Analytical(benchmark::State& state) { RunPlan(state, Fidelity::kAnalytical); }
void BM_PlanGpt3Flow(benchmark::State& state) { RunPlan(state, Fidelity::kFlow); }

BENCHMARK(BM_PlanGpt3Analytical)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PlanGpt3Flow)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ndt
