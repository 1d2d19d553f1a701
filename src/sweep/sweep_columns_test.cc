// Headline columns of sweeps over fleet, plan train and plan infer, and the straggler in train's
// and plan train's rows: each the number the command's own JSON holds.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>

#include "cmd/command.h"
#include "cmd/testing.h"
#include "cmd/train_job.h"
#include "sweep/sweep.h"
#include "sweep/testing.h"

namespace ndt {
namespace {

using namespace sweep_testing;  // NOLINT: the shared helpers, as in every sweep test file

// fleet sweeps (issue 21: fleet joins as it lands): the headline columns are the numbers of
// fleet's own JSON document (goodput, step time, median time to train and cost, lost GPU-hours).
TEST(SweepRunTest, FleetColumnsAreItsJsonNumbers) {
  const SweepSpec spec = TrainSpec(
      "command: fleet\n"
      "fixed: {model: gpt3-175b, gbs: 1536, tokens: 1.0e11, runs: 20, tp: 8, pp: 8}\n"
      "grid: {sku: [Standard_ND96isr_H100_v5, Standard_ND96isr_H200_v5], vms: [16, 32]}\n"
      "fidelity: estimate\n");
  const std::string path = TempPath("fleet.sqlite");
  const PointFn fn = [](const Json& args) -> StatusOr<Json> {
    Diagnostics d;
    NDT_ASSIGN_OR_RETURN(CommandOutput out, RunJson(*FindCommand("fleet"), Ctx(), args, &d));
    return std::move(out.json);
  };
  ASSERT_TRUE(RunSweep(spec, fn, path, SweepOptions{}).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT id, status, goodput, step_time_s, time_to_train_days, "
                               "cost_usd, lost_gpu_hours FROM results ORDER BY id",
                               -1, &s, nullptr),
            SQLITE_OK);
  int rows = 0, priced = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    ++rows;
    Diagnostics d;
    StatusOr<CommandOutput> one =
        RunJson(*FindCommand("fleet"), Ctx(), SweepPoint(spec, sqlite3_column_int64(s, 0)), &d);
    ASSERT_TRUE(one.ok()) << one.status().message();
    const Json& j = one->json;
    EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)), "ok");
    EXPECT_EQ(sqlite3_column_double(s, 2), j["goodput"].get<double>());
    EXPECT_GT(sqlite3_column_double(s, 2), 0.5);  // a goodput, not a time
    EXPECT_EQ(sqlite3_column_double(s, 3), j["step_time_s"].get<double>());
    EXPECT_EQ(sqlite3_column_double(s, 4), j["time_to_train_days"]["p50"].get<double>());
    EXPECT_EQ(sqlite3_column_double(s, 6), j["lost_gpu_hours"].get<double>());
    if (j["cost_usd"].is_null()) {
      EXPECT_EQ(sqlite3_column_type(s, 5), SQLITE_NULL);  // H200 has no price in data/
    } else {
      ++priced;
      EXPECT_EQ(sqlite3_column_double(s, 5), j["cost_usd"]["p50"].get<double>());
    }
  }
  EXPECT_EQ(rows, 4);
  EXPECT_EQ(priced, 2);
  sqlite3_finalize(s);
  sqlite3_close(db);
  StatusOr<std::vector<SweepPick>> top = QueryTop(path, "goodput", 1);
  ASSERT_TRUE(top.ok()) << top.status().message();
  EXPECT_EQ(top->size(), 1u);
}

// plan train and plan infer sweeps (README: any registry command) have headline columns too: the
// best result's numbers, results[0] of the command's own JSON (they had none, so --pareto and
// --by were refused on them and the table held no number to query). Without --tokens plan
// train's time and cost are NULL; H200 has no price, so plan infer's $/M tokens is NULL there.
TEST(SweepRunTest, PlanColumnsAreTheBestResultsNumbers) {
  struct Case {
    const char* command;
    const char* yaml;
    std::vector<std::pair<std::string, std::string>> columns;  // column, key of results[0]
  };
  const std::vector<Case> cases = {
      {"plan train",
       "command: plan train\n"
       "fixed: {model: llama2-7b, gbs: 32, top: 1, sku: Standard_ND96amsr_A100_v4}\n"
       "grid: {vms: [1, 2], tokens: [0, 1.0e9]}\n"
       "fidelity: analytical\n",
       {{"step_time_s", "step_time_s"},
        {"tokens_per_s", "tokens_per_s"},
        {"mfu", "mfu"},
        {"memory_bytes", "memory_bytes_per_gpu"},
        {"time_to_train_s", "time_to_train_s"},
        {"cost_usd", "cost_usd"}}},
      {"plan infer",
       "command: plan infer\n"
       "fixed: {model: llama2-7b, vms: 1, requests: 256, input-len: 512, output-len: 64, top: 1}\n"
       "grid: {sku: [Standard_ND96isr_H100_v5, Standard_ND96isr_H200_v5]}\n",
       {{"output_tokens_per_s", "output_tokens_per_s"},
        {"per_gpu_output_tokens_per_s", "per_gpu_output_tokens_per_s"},
        {"ttft_p99_s", "ttft_p99_s"},
        {"tpot_p99_s", "tpot_p99_s"},
        {"usd_per_million_tokens", "usd_per_million_tokens"}}},
  };
  for (const Case& c : cases) {
    const SweepSpec spec = TrainSpec(c.yaml);
    const std::string path = TempPath("plan_columns.sqlite");
    const std::string command = c.command;
    const PointFn fn = [command](const Json& args) -> StatusOr<Json> {
      Diagnostics d;
      NDT_ASSIGN_OR_RETURN(CommandOutput out, RunJson(*FindCommand(command), Ctx(), args, &d));
      return std::move(out.json);
    };
    ASSERT_TRUE(RunSweep(spec, fn, path, SweepOptions{}).ok()) << c.command;
    std::string sql = "SELECT id, status";
    for (const auto& [col, key] : c.columns) sql += ", " + col;
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, (sql + " FROM results ORDER BY id").c_str(), -1, &s, nullptr),
              SQLITE_OK)
        << c.command;
    int rows = 0, nulls = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
      ++rows;
      Diagnostics d;
      StatusOr<CommandOutput> one =
          RunJson(*FindCommand(c.command), Ctx(), SweepPoint(spec, sqlite3_column_int64(s, 0)), &d);
      ASSERT_TRUE(one.ok()) << one.status().message();
      EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)), "ok");
      const Json& best = one->json["results"][0];
      for (size_t k = 0; k < c.columns.size(); ++k) {
        const int col = static_cast<int>(k) + 2;
        const std::string& key = c.columns[k].second;
        if (!best.contains(key) || best[key].is_null()) {
          ++nulls;
          EXPECT_EQ(sqlite3_column_type(s, col), SQLITE_NULL) << c.command << " " << key;
        } else {
          EXPECT_EQ(sqlite3_column_double(s, col), best[key].get<double>())
              << c.command << " " << key;
        }
      }
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    EXPECT_EQ(rows, 4 - (command == "plan infer" ? 2 : 0)) << c.command;
    // plan train: the 2 points without tokens lack time and cost (4 NULLs); plan infer: H200's
    // $/M tokens (1 NULL).
    EXPECT_EQ(nulls, command == "plan train" ? 4 : 1) << c.command;
    StatusOr<std::vector<SweepPick>> top = QueryTop(path, c.columns[0].first, 1);
    ASSERT_TRUE(top.ok()) << top.status().message();
    EXPECT_EQ(top->size(), 1u);
  }
}

// The straggler (parallel/variability.h) is in a sweep's rows as in the command's own output:
// gpu-variability is an option of train and of plan train, so a spec sets it like any other key
// (here a grid over both values). Through `ndtwin sweep` (the typed train path, both stores) each
// train row's step time is train's for the point, with the wait on and 0 off; a plan train row is
// plan's document, its best step the one train gives for that configuration.
TEST(SweepRunTest, GpuVariabilityIsASpecKeyAndRowsCarryTheStraggler) {
  auto run = [](const std::string& y, const std::string& name, const std::string& store) {
    const std::string spec_file = TempPath(name + ".yaml"), out = TempPath(name + ".sqlite");
    std::FILE* f = std::fopen(spec_file.c_str(), "w");
    NDT_CHECK(f != nullptr, spec_file);
    std::fputs(y.c_str(), f);
    std::fclose(f);
    Diagnostics d;
    StatusOr<CommandOutput> r =
        RunJson(*FindCommand("sweep"), Ctx(),
                Json{{"spec", spec_file}, {"out", out}, {"store", store}, {"threads", 2}}, &d);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return out;
  };
  const std::string train =
      "command: train\n"
      "fixed: {model: gpt3-175b, gbs: 1536, tp: 8, pp: 8, recompute: full}\n"
      "grid: {vms: [16, 64], gpu-variability: [true, false]}\n"
      "zip: {sku: [Standard_ND96amsr_A100_v4]}\n"
      "fidelity: estimate\n";
  const SweepSpec spec = TrainSpec(train);
  ASSERT_EQ(spec.points, 4u);
  for (const std::string store : {"full", "summary"}) {
    const std::string path = run(train, "straggler_" + store, store);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(
        sqlite3_prepare_v2(db, "SELECT id, step_time_s FROM results ORDER BY id", -1, &s, nullptr),
        SQLITE_OK);
    std::vector<double> step;
    while (sqlite3_step(s) == SQLITE_ROW) {
      const Json args = SweepPoint(spec, sqlite3_column_int64(s, 0));
      Diagnostics d;
      StatusOr<CommandOutput> one = RunJson(*FindCommand("train"), Ctx(), args, &d);
      ASSERT_TRUE(one.ok()) << one.status().message();
      EXPECT_EQ(sqlite3_column_double(s, 1), one->json["step_time_s"].get<double>()) << store;
      const double straggler = one->json["breakdown"]["straggler_s"].get<double>();
      if (args["gpu-variability"].get<bool>()) {
        EXPECT_GT(straggler, 0.0);
      } else {
        EXPECT_EQ(straggler, 0.0);
      }
      step.push_back(sqlite3_column_double(s, 1));
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    // ids: vms 16 (on, off), vms 64 (on, off): the wait makes each step longer.
    ASSERT_EQ(step.size(), 4u);
    EXPECT_GT(step[0], step[1]);
    EXPECT_GT(step[2], step[3]);
  }
  // plan train: the row is plan's document, and its best configuration run by train (every
  // knob given) has plan's step time, the straggler included.
  const std::string plan =
      "command: plan train\n"
      "fixed: {model: llama2-7b, gbs: 64, gpus: 16, sku: Standard_ND96amsr_A100_v4, top: 1}\n"
      "grid: {gpu-variability: [true]}\n"
      "fidelity: analytical\n";
  const std::string path = run(plan, "straggler_plan", "full");
  const std::vector<std::string> rows = Dump(path);
  ASSERT_EQ(rows.size(), 1u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT result FROM results", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  const Json doc = Json::parse(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
  sqlite3_finalize(s);
  sqlite3_close(db);
  const Json& r = doc["results"][0];
  EXPECT_GT(r["straggler_s"].get<double>(), 0.0);
  Diagnostics d;
  StatusOr<CommandOutput> t =
      RunJson(*FindCommand("train"), Ctx(),
              TrainArgsOfPlanResult(Json{{"model", "llama2-7b"}, {"gbs", 64}}, r), &d);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(r["step_time_s"], t->json["step_time_s"]);
  EXPECT_EQ(r["mfu"], t->json["mfu"]);
}

}  // namespace
}  // namespace ndt
