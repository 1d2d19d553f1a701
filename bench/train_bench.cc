// Benchmark: one simulated training iteration end to end (costs, lowering, task-graph run) at
// scale: megatron-1t on 3,072 A100 GPUs (384 x ND96amsr_A100_v4, tp 8, pp 64, dp 6, gbs 3072,
// mbs 1, full recompute: 512 micro-batches, ~131k tasks) and llama3-405b on 16,384 H100 GPUs
// (2,048 x ND96isr_H100_v5, tp 8, pp 16, dp 128, gbs 2048, mbs 1, ZeRO-1). Flow fidelity. The
// cluster is built once outside the loop (topo_bench measures that). Counters: tasks, events.
// Run: build-<dir>/train_bench.
#include <benchmark/benchmark.h>

#include "coll/testing.h"
#include "compute/compute.h"
#include "core/check.h"
#include "hw/catalog.h"
#include "parallel/cluster_costs.h"
#include "parallel/memory_reserve.h"
#include "parallel/train.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace {

struct Setup {
  Catalog catalog;
  ComputeCalibration cal;
  MemoryReserveTable reserve;  // data/memory_reserve.yaml
};

const Setup& Data() {
  static const Setup s = [] {
    StatusOr<Catalog> c = Catalog::Load(Catalog::DefaultDataDir());
    NDT_CHECK(c.ok(), c.status().message());
    StatusOr<ComputeCalibration> cal = LoadComputeCalibration("");
    NDT_CHECK(cal.ok(), cal.status().message());
    StatusOr<MemoryReserveTable> reserve = LoadMemoryReserve(Catalog::DefaultDataDir());
    NDT_CHECK(reserve.ok(), reserve.status().message());
    return Setup{std::move(c).value(), std::move(cal).value(), std::move(reserve).value()};
  }();
  return s;
}

void RunJob(benchmark::State& state, const char* sku_name, int vms, const char* model_name, int tp,
            int pp, int64_t gbs, int zero) {
  const Setup& d = Data();
  StatusOr<const SkuSpec*> sku = d.catalog.FindSku(sku_name);
  NDT_CHECK(sku.ok(), sku.status().message());
  ClusterSpec cs;
  cs.sku = *sku;
  cs.gpu = &d.catalog.GpuOf(**sku);
  cs.vms = vms;
  cs.fabric.tiers = ChooseTiers(cs);
  StatusOr<Cluster> cluster = testing::BuildClusterForTest(cs);
  NDT_CHECK(cluster.ok(), cluster.status().message());
  StatusOr<TransformerSpec> model = LoadModel(model_name, ModelsDir(""));
  NDT_CHECK(model.ok(), model.status().message());
  TrainJob job;
  job.model = *model;
  // Llama 3 405B: 126 layers on 16 stages, 7 at each end (ChunkLayers), as Meta ran it.
  job.strategy.uneven_stages = true;
  job.strategy.tp = tp;
  job.strategy.pp = pp;
  job.strategy.gbs = gbs;
  job.strategy.mbs = 1;
  job.strategy.zero = zero;
  job.strategy.sp = true;
  job.strategy.recompute = Recompute::kFull;
  job.num_gpus = cluster->num_gpus();
  job.gpus_per_vm = cluster->gpus_per_vm();
  job.nvlink_domain_gpus = cluster->nvlink_domain_gpus();
  job.gpu_memory_bytes = cs.gpu->memory_bytes;
  StatusOr<MemoryReserve> reserve = d.reserve.For(cs.gpu->arch);
  NDT_CHECK(reserve.ok(), reserve.status().message());
  job.memory_reserve = *reserve;
  int64_t tasks = 0, events = 0;
  for (auto _ : state) {
    ClusterCosts costs(*cluster, d.cal, testing::BuiltinNcclCalibration(), Dtype::kBf16,
                       Fidelity::kFlow);
    StatusOr<TrainReport> r = RunTraining(job, costs);
    NDT_CHECK(r.ok(), r.status().message());
    tasks = r->sim.tasks;
    events = r->sim.events;
    benchmark::DoNotOptimize(r->sim.step_time_s);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["events"] = static_cast<double>(events);
  state.counters["gpus"] = cluster->num_gpus();
}

void BM_TrainMegatron1T_3072Gpus(benchmark::State& state) {
  RunJob(state, "Standard_ND96amsr_A100_v4", 384, "megatron-1t", 8, 64, 3072, 0);
}
BENCHMARK(BM_TrainMegatron1T_3072Gpus)->Unit(benchmark::kMillisecond);

void BM_TrainLlama3_405B_16384Gpus(benchmark::State& state) {
  RunJob(state, "Standard_ND96isr_H100_v5", 2048, "llama3-405b", 8, 16, 2048, 1);
}
BENCHMARK(BM_TrainLlama3_405B_16384Gpus)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ndt
