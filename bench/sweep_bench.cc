// Benchmark: where a sweep point's time goes, for GPT-3 175B training points at
// `fidelity: estimate` (BENCHMARKS.md "Sweeps"). One thread each; items/s = points per second
// per core.
//   BM_SweepPoint/VMS: the whole per-point path of `ndtwin sweep --store summary`: the point's
//     flags, RunJson (bind, resolve the model, build the cluster, its costs, the closed form),
//     the headline columns.
//   BM_SweepClusterSetup/VMS: building the cluster and its analytical costs alone (what every
//     point pays through RunJson; the planner builds it once per size).
//   BM_SweepClosedForm/VMS: the closed form on a pre-built cluster (the planner's first pass per
//     candidate): the ceiling if a sweep shared the cluster across points.
//   BM_SweepModelLoad: reading and parsing data/models/gpt3-175b.yaml (RunJson does it per point).
//   BM_SweepOverhead: the sweep's own work per point (flags, canonical params) without the command.
//   BM_SweepParams: the same params as `ndtwin sweep` writes them (SweepParams: no JSON per point).
//   BM_SweepTrainPoint/VMS: the typed per-point path of `ndtwin sweep --store summary` for train
//     (cmd/sweep.cc): SimulateTrainJob on the shared TrainJobCache (model and cluster built once)
//     and the headline numbers; mbs and VPP searched as in BM_SweepPoint.
//   BM_SweepCommand/FIDELITY: `ndtwin sweep SPEC --store summary --threads 1` end to end (spec,
//     runners, SQLite with its indexes) over a 960-point GPT-3 space with every knob given (2
//     sizes x 16, 128 VMs x tp 1-8 x pp 1-16 x vpp 1-2 x mbs 1-4 x 2 recompute), as the issue's
//     full space gives them; items/s = configurations per CPU-second. Arg 0: estimate, 1:
//     analytical.
//   BM_SweepSlice: the same end to end over the 32,256-point slice of the full space (2 sizes x
//     8, 64, 512 VMs x every tp/pp/vpp/mbs/ZeRO/recompute; 86% of the points are errors, as in
//     the full space). BM_SweepSliceEvaluating: the same run, counting the CPU of the evaluating
//     thread only (SQLite runs on the sweep's writer thread): the rate without the store.
//   BM_SweepStore: the SQLite store alone (sweep/store.h): the slice's rows, read back from a
//     sweep of it, written into a fresh database as `ndtwin sweep` writes them (2,048 per
//     commit, the indexes kept on insert). items/s = rows per second: the store's share of the
//     end-to-end rate.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cmd/command.h"
#include "cmd/train_job.h"
#include "core/check.h"
#include "model/transformer.h"
#include "parallel/cluster_costs.h"
#include "parallel/train.h"
#include "sweep/store.h"
#include "sweep/sweep.h"
#include "topo/builders.h"

namespace ndt {
namespace {

const Context& Ctx() {
  static const Context ctx = [] {
    StatusOr<Context> c = Context::Load("");
    NDT_CHECK(c.ok(), c.status().message());
    return std::move(*c);
  }();
  return ctx;
}

StatusOr<std::vector<std::string>> Options(const std::string& name) {
  const Command* c = FindCommand(name);
  if (c == nullptr) return Status::NotFound(name);
  auto req = c->new_request();
  OptionList o;
  req->Declare(&o);
  std::vector<std::string> names;
  for (const Option& x : o.options()) names.push_back(x.name);
  return names;
}

SweepSpec Spec(int vms) {
  const std::string y =
      "command: train\nfixed: {model: gpt3-175b, gbs: 1536, tokens: 300e9, sku: "
      "Standard_ND96amsr_A100_v4, vms: " +
      std::to_string(vms) +
      "}\n"
      "grid: {tp: [4, 8], pp: [8, 16], recompute: [selective, full]}\nfidelity: estimate\n";
  StatusOr<SweepSpec> s = ParseSweepSpec(y, Options);
  NDT_CHECK(s.ok(), s.status().message());
  return *s;
}

void BM_SweepPoint(benchmark::State& state) {
  const SweepSpec spec = Spec(static_cast<int>(state.range(0)));
  const Command* cmd = FindCommand("train");
  const PointFn fn = [cmd](const Json& args) -> StatusOr<Json> {
    Diagnostics d;
    NDT_ASSIGN_OR_RETURN(CommandOutput out, RunJson(*cmd, Ctx(), args, &d));
    return std::move(out.json);
  };
  const std::vector<HeadlineColumn> cols = HeadlineColumns("train");
  uint64_t id = 0;
  for (auto _ : state) {
    SweepRow r = EvaluatePoint(spec, id++ % spec.points, fn, cols, SweepStore::kSummary);
    NDT_CHECK(r.ok, r.error);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepPoint)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);

ClusterSpec SizeSpec(int vms) {
  StatusOr<const SkuSpec*> sku = Ctx().catalog.FindSku("Standard_ND96amsr_A100_v4");
  NDT_CHECK(sku.ok(), "sku");
  ClusterSpec cs;
  cs.sku = *sku;
  cs.gpu = &Ctx().catalog.GpuOf(**sku);
  cs.vms = vms;
  cs.fabric.tiers = ChooseTiers(cs);
  return cs;
}

void BM_SweepClusterSetup(benchmark::State& state) {
  const ClusterSpec cs = SizeSpec(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    StatusOr<Cluster> c = BuildCluster(cs, Ctx().fabric);
    NDT_CHECK(c.ok(), "cluster");
    ClusterCosts costs(*c, Ctx().compute, Ctx().nccl, Dtype::kBf16, Fidelity::kAnalytical);
    benchmark::DoNotOptimize(costs);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepClusterSetup)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_SweepClosedForm(benchmark::State& state) {
  const ClusterSpec cs = SizeSpec(static_cast<int>(state.range(0)));
  StatusOr<Cluster> c = BuildCluster(cs, Ctx().fabric);
  NDT_CHECK(c.ok(), "cluster");
  ClusterCosts costs(*c, Ctx().compute, Ctx().nccl, Dtype::kBf16, Fidelity::kAnalytical);
  StatusOr<TransformerSpec> m = LoadModel("gpt3-175b", ModelsDir(Ctx().data_dir));
  NDT_CHECK(m.ok(), "model");
  TrainJob job;
  job.model = *m;
  job.closed_form_search = true;
  job.strategy.gbs = 1536;
  job.strategy.tp = 8;
  job.strategy.pp = 8;
  job.strategy.recompute = Recompute::kFull;
  job.mbs_given = false;
  job.vpp_given = false;
  job.num_gpus = c->num_gpus();
  job.gpus_per_vm = c->gpus_per_vm();
  job.nvlink_domain_gpus = c->nvlink_domain_gpus();
  job.gpu_memory_bytes = cs.gpu->memory_bytes;
  StatusOr<MemoryReserve> reserve = Ctx().memory_reserve.For(cs.gpu->arch);
  NDT_CHECK(reserve.ok(), reserve.status().message());
  job.memory_reserve = *reserve;
  for (auto _ : state) {
    StatusOr<TrainReport> r = RunTraining(job, costs);
    NDT_CHECK(r.ok(), r.status().message());
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepClosedForm)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_SweepModelLoad(benchmark::State& state) {
  for (auto _ : state) {
    StatusOr<TransformerSpec> m = LoadModel("gpt3-175b", ModelsDir(Ctx().data_dir));
    NDT_CHECK(m.ok(), "model");
    benchmark::DoNotOptimize(m);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepModelLoad)->Unit(benchmark::kMicrosecond);

void BM_SweepOverhead(benchmark::State& state) {
  const SweepSpec spec = Spec(128);
  uint64_t id = 0;
  for (auto _ : state) {
    std::string p = CanonicalJson(SweepPoint(spec, id++ % spec.points));
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepOverhead)->Unit(benchmark::kMicrosecond);

void BM_SweepParams(benchmark::State& state) {
  const SweepSpec spec = Spec(128);
  const SweepParams params(spec);
  uint64_t id = 0;
  for (auto _ : state) {
    std::string p = params.Of(id++ % spec.points);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepParams)->Unit(benchmark::kMicrosecond);

void BM_SweepTrainPoint(benchmark::State& state) {
  TrainJobCache cache;
  std::vector<TrainJobArgs> points;
  for (int tp : {4, 8}) {
    for (int pp : {8, 16}) {
      for (const char* r : {"selective", "full"}) {
        TrainJobArgs a;
        a.sku = "Standard_ND96amsr_A100_v4";
        a.vms = static_cast<int>(state.range(0));
        a.model.model = "gpt3-175b";
        a.gbs = 1536;
        a.tokens = 300e9;
        a.tp = tp;
        a.pp = pp;
        a.recompute = r;
        a.fidelity = "estimate";
        points.push_back(a);
      }
    }
  }
  size_t i = 0;
  for (auto _ : state) {
    Diagnostics d;
    StatusOr<SimulatedTrainJob> r =
        SimulateTrainJob(Ctx(), points[i++ % points.size()], false, &d, &cache);
    NDT_CHECK(r.ok(), r.status().message());
    benchmark::DoNotOptimize(r->report.sim.step_time_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepTrainPoint)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_SweepCommand(benchmark::State& state) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string tag = std::to_string(getpid());
  const std::string spec = dir + "/ndt_sweep_bench_" + tag + ".yaml";
  const std::string out = dir + "/ndt_sweep_bench_" + tag + ".sqlite";
  const char* fidelity = state.range(0) == 0 ? "estimate" : "analytical";
  {
    std::FILE* f = std::fopen(spec.c_str(), "w");
    NDT_CHECK(f != nullptr, "spec");
    std::fprintf(f,
                 "command: train\nfixed: {model: gpt3-175b, gbs: 1536, tokens: 300e9, zero: 1}\n"
                 "grid:\n  sku: [Standard_ND96amsr_A100_v4, Standard_ND96isr_H100_v5]\n"
                 "  vms: [16, 128]\n  tp: [1, 2, 4, 8]\n  pp: [1, 2, 4, 8, 16]\n"
                 "  vpp: [1, 2]\n  mbs: [1, 2, 4]\n  recompute: [selective, full]\n"
                 "fidelity: %s\n",
                 fidelity);
    std::fclose(f);
  }
  const Command* sweep = FindCommand("sweep");
  uint64_t points = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (const char* x : {"", "-wal", "-shm"}) std::filesystem::remove(out + x);
    state.ResumeTiming();
    Diagnostics d;
    StatusOr<CommandOutput> r =
        RunJson(*sweep, Ctx(),
                Json{{"spec", spec}, {"out", out}, {"store", "summary"}, {"threads", 1}}, &d);
    NDT_CHECK(r.ok(), r.status().message());
    points += r->json["points"].get<uint64_t>();
  }
  for (const char* x : {"", "-wal", "-shm"}) std::filesystem::remove(out + x);
  std::filesystem::remove(spec);
  state.SetItemsProcessed(static_cast<int64_t>(points));
}
// The process's CPU: the writer thread (SQLite) included.
BENCHMARK(BM_SweepCommand)->Arg(0)->Arg(1)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

constexpr const char* kSliceSpec =
    "command: train\nfixed: {model: gpt3-175b, gbs: 1536, tokens: 300e9}\n"
    "grid:\n  sku: [Standard_ND96amsr_A100_v4, Standard_ND96isr_H100_v5]\n"
    "  vms: [8, 64, 512]\n  tp: [1, 2, 4, 8]\n  pp: [1, 2, 4, 8, 16, 32, 64]\n"
    "  vpp: [1, 2, 3, 4]\n  mbs: [1, 2, 4, 8]\n  zero: [0, 1, 2, 3]\n"
    "  recompute: [none, selective, full]\nfidelity: estimate\n";

struct TempFiles {
  std::string spec, out;
  TempFiles(const char* name, const char* text) {
    const std::string base = std::filesystem::temp_directory_path().string() + "/ndt_" + name +
                             "_" + std::to_string(getpid());
    spec = base + ".yaml";
    out = base + ".sqlite";
    std::FILE* f = std::fopen(spec.c_str(), "w");
    NDT_CHECK(f != nullptr, "spec");
    std::fputs(text, f);
    std::fclose(f);
    Clear();
  }
  void Clear() const {
    for (const char* x : {"", "-wal", "-shm"}) std::filesystem::remove(out + x);
  }
  ~TempFiles() {
    Clear();
    std::filesystem::remove(spec);
  }
};

uint64_t RunSweepSummary(const TempFiles& t) {
  Diagnostics d;
  StatusOr<CommandOutput> r =
      RunJson(*FindCommand("sweep"), Ctx(),
              Json{{"spec", t.spec}, {"out", t.out}, {"store", "summary"}, {"threads", 1}}, &d);
  NDT_CHECK(r.ok(), r.status().message());
  return r->json["points"].get<uint64_t>();
}

void SweepSlice(benchmark::State& state) {
  const TempFiles t("sweep_slice", kSliceSpec);
  uint64_t points = 0;
  for (auto _ : state) {
    state.PauseTiming();
    t.Clear();
    state.ResumeTiming();
    points += RunSweepSummary(t);
  }
  state.SetItemsProcessed(static_cast<int64_t>(points));
}
// The process's CPU (end to end), and the evaluating thread's alone (the store runs on the writer
// thread: this is the rate without it, the batches' hand-over included).
void BM_SweepSlice(benchmark::State& state) { SweepSlice(state); }
BENCHMARK(BM_SweepSlice)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
void BM_SweepSliceEvaluating(benchmark::State& state) { SweepSlice(state); }
BENCHMARK(BM_SweepSliceEvaluating)->Unit(benchmark::kMillisecond);

void BM_SweepStore(benchmark::State& state) {
  const TempFiles t("sweep_store", kSliceSpec);
  RunSweepSummary(t);
  const std::vector<HeadlineColumn> cols = HeadlineColumns("train");
  std::vector<SweepRow> rows;
  {
    sqlite3* db = nullptr;
    NDT_CHECK(sqlite3_open(t.out.c_str(), &db) == SQLITE_OK, "open");
    sqlite3_stmt* s = nullptr;
    NDT_CHECK(
        sqlite3_prepare_v2(db, "SELECT * FROM results ORDER BY id", -1, &s, nullptr) == SQLITE_OK,
        "select");
    auto text = [&](int c) {
      const unsigned char* p = sqlite3_column_text(s, c);
      return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p));
    };
    while (sqlite3_step(s) == SQLITE_ROW) {
      SweepRow r;
      r.id = static_cast<uint64_t>(sqlite3_column_int64(s, 0));
      r.params = text(1);
      r.ok = text(2) == "ok";
      r.error = text(3);
      for (size_t c = 0; c < cols.size(); ++c) {
        if (sqlite3_column_type(s, static_cast<int>(5 + c)) != SQLITE_NULL) {
          r.values.push_back(sqlite3_column_double(s, static_cast<int>(5 + c)));
        } else {
          r.values.push_back(std::nullopt);
        }
      }
      rows.push_back(std::move(r));
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
  }
  StatusOr<SweepSpec> spec = ParseSweepSpec(kSliceSpec, Options);
  NDT_CHECK(spec.ok(), spec.status().message());
  std::vector<std::vector<SweepRow>> batches;
  for (size_t i = 0; i < rows.size(); i += 2048) {
    batches.emplace_back(rows.begin() + static_cast<int64_t>(i),
                         rows.begin() + static_cast<int64_t>(std::min(rows.size(), i + 2048)));
  }
  for (auto _ : state) {
    state.PauseTiming();
    t.Clear();
    state.ResumeTiming();
    StatusOr<std::unique_ptr<sweep_detail::Store>> st =
        sweep_detail::Store::Open(t.out, *spec, cols, SweepStore::kSummary, false);
    NDT_CHECK(st.ok(), st.status().message());
    for (const std::vector<SweepRow>& b : batches) {
      const Status w = (*st)->Write(b);
      NDT_CHECK(w.ok(), w.message());
    }
    NDT_CHECK((*st)->Finish(cols).ok(), "finish");
    st->reset();  // closed: the last checkpoint counts
  }
  state.SetItemsProcessed(static_cast<int64_t>(rows.size() * state.iterations()));
}
BENCHMARK(BM_SweepStore)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ndt
