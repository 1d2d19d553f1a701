// Benchmark: `ndtwin hpc --bench hpl` on 2,048 VMs (16,384 GPUs) through the registry, as the
// CLI, Python and the web API run it: the cluster graph (3-tier fat tree), the collective
// curves of HPL's broadcast, swap and pivot groups, and the panel-step loop (N ~ 1.2 M,
// ~1,150 steps at NB 1024). Target (issue 22): < 1 s. Run: build/hpc_bench.
#include <benchmark/benchmark.h>

#include "cmd/command.h"
#include "cmd/context.h"
#include "core/check.h"

namespace ndt {
namespace {

const Context& Ctx() {
  static const Context c = [] {
    StatusOr<Context> x = Context::Load("");
    NDT_CHECK(x.ok(), x.status().message());
    return *std::move(x);
  }();
  return c;
}

void RunHpl(benchmark::State& state, const char* sku, int vms) {
  const Command* cmd = FindCommand("hpc");
  NDT_CHECK(cmd != nullptr, "no hpc command");
  Json args = {{"sku", sku}, {"vms", vms}, {"bench", "hpl"}};
  for (auto _ : state) {
    Diagnostics diag;
    StatusOr<CommandOutput> out = RunJson(*cmd, Ctx(), args, &diag);
    NDT_CHECK(out.ok(), out.status().message());
    benchmark::DoNotOptimize(out->json);
    state.counters["rmax_PFLOPs"] = out->json["hpl"]["rmax_flops"].get<double>() / 1e15;
    state.counters["steps"] = out->json["hpl"]["steps"].get<double>();
  }
}

void BM_HplA100_2048Vms(benchmark::State& state) {
  RunHpl(state, "Standard_ND96amsr_A100_v4", 2048);
}
BENCHMARK(BM_HplA100_2048Vms)->Unit(benchmark::kMillisecond);

void BM_HplH100_2048Vms(benchmark::State& state) {
  RunHpl(state, "Standard_ND96isr_H100_v5", 2048);
}
BENCHMARK(BM_HplH100_2048Vms)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ndt
