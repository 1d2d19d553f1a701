// File: sweep/sweep_run_test.cc
// Sweeps run with the registry: rows equal to the command's JSON, 1 and N threads, kill -9 and
// --resume, the database queries, and `ndtwin sweep`'s fast paths against the general one.
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

namespace ndt {
namespace {

// ---- With the registry: a small train sweep ------------------------------------------------

const Context& Ctx() {
  static const Context ctx = [] {
    StatusOr<Context> c = Context::Load("");
    NDT_CHECK(c.ok(), c.status().message());
    return std::move(*c);
  }();
  return ctx;
}

StatusOr<std::vector<std::string>> RegistryOptions(const std::string& name) {
  const Command* c = FindCommand(name);
  if (c == nullptr) return Status::NotFound("unknown command '" + name + "'");
  auto req = c->new_request();
  OptionList o;
  req->Declare(&o);
  std::vector<std::string> names;
  for (const Option& x : o.options()) names.push_back(x.name);
  return names;
}

PointFn TrainFn() {
  return [](const Json& args) -> StatusOr<Json> {
    Diagnostics d;
    NDT_ASSIGN_OR_RETURN(CommandOutput out, RunJson(*FindCommand("train"), Ctx(), args, &d));
    return std::move(out.json);
  };
}

// 2 x 3 x 2 x 2 = 24 points; tp 16 exceeds the 8-GPU NVLink domain and pp 7 does not divide
// GPT-3's 96 layers: some points are errors, and the table keeps them.
const char* kSpec =
    "command: train\n"
    "fixed: {model: gpt3-175b, gbs: 1536, tokens: 3.0e11}\n"
    "grid:\n"
    "  sku: [Standard_ND96amsr_A100_v4, Standard_ND96isr_H100_v5]\n"
    "  vms: [16, 64, 128]\n"
    "  tp: [8, 16]\n"
    "zip: {pp: [8, 7], recompute: [full, selective]}\n"
    "fidelity: estimate\n";  // the closed form: milliseconds per point

SweepSpec TrainSpec(const std::string& y = kSpec) {
  StatusOr<SweepSpec> s = ParseSweepSpec(y, RegistryOptions);
  NDT_CHECK(s.ok(), s.status().message());
  return *s;
}

std::string TempPath(const std::string& name) {
  const std::string p = testing::TempDir() + "/ndt_sweep_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove(p);
  std::filesystem::remove(p + "-wal");
  std::filesystem::remove(p + "-shm");
  return p;
}

// The whole results table, row by row, every column.
std::vector<std::string> Dump(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT * FROM results ORDER BY id", -1, &s, nullptr),
            SQLITE_OK);
  std::vector<std::string> rows;
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::string r;
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      const unsigned char* t = sqlite3_column_text(s, c);
      r += (t ? reinterpret_cast<const char*>(t) : "NULL") + std::string("|");
    }
    rows.push_back(r);
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return rows;
}

// The whole results table with every REAL exactly (hex), for equality to the last bit.
std::vector<std::string> DumpExact(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT * FROM results ORDER BY id", -1, &s, nullptr),
            SQLITE_OK);
  std::vector<std::string> rows;
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::string r;
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      if (sqlite3_column_type(s, c) == SQLITE_FLOAT) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%a", sqlite3_column_double(s, c));
        r += buf;
      } else {
        const unsigned char* t = sqlite3_column_text(s, c);
        r += t ? reinterpret_cast<const char*>(t) : "NULL";
      }
      r += "|";
    }
    rows.push_back(r);
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return rows;
}

TEST(SweepRunTest, RowsAreTheCommandsJson) {
  const SweepSpec spec = TrainSpec();
  ASSERT_EQ(spec.points, 24u);
  const std::string path = TempPath("rows.sqlite");
  SweepOptions o;
  o.threads = 2;
  StatusOr<SweepStats> st = RunSweep(spec, TrainFn(), path, o);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->evaluated, 24u);
  EXPECT_EQ(st->ok + st->errors, 24u);
  EXPECT_GT(st->ok, 0u);
  EXPECT_GT(st->errors, 0u);  // tp 16 > the 8-GPU NVLink domain, at least
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT id, params, status, error, result, step_time_s, cost_usd "
                               "FROM results ORDER BY id",
                               -1, &s, nullptr),
            SQLITE_OK);
  uint64_t n = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    const uint64_t id = sqlite3_column_int64(s, 0);
    EXPECT_EQ(id, n++);
    const Json args = SweepPoint(spec, id);
    EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)), CanonicalJson(args));
    Diagnostics d;
    StatusOr<CommandOutput> one = RunJson(*FindCommand("train"), Ctx(), args, &d);
    const std::string status = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
    if (one.ok()) {
      EXPECT_EQ(status, "ok");
      // Exactly the CLI's --json document (dump(2), without the trailing newline).
      EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 4)), one->json.dump(2));
      EXPECT_EQ(sqlite3_column_double(s, 5), one->json["step_time_s"].get<double>());
      EXPECT_EQ(sqlite3_column_double(s, 6), one->json["cost_usd"].get<double>());
    } else {
      EXPECT_EQ(status, "error");
      EXPECT_EQ(reinterpret_cast<const char*>(sqlite3_column_text(s, 3)), one.status().message());
      EXPECT_EQ(sqlite3_column_type(s, 4), SQLITE_NULL);
    }
  }
  EXPECT_EQ(n, 24u);
  sqlite3_finalize(s);
  sqlite3_close(db);
  // Without --resume an existing file is refused; with it and another spec too.
  StatusOr<SweepStats> again = RunSweep(spec, TrainFn(), path, o);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("use --resume"), std::string::npos);
  o.resume = true;
  SweepSpec other = spec;
  other.fixed["gbs"] = 768;
  StatusOr<SweepStats> wrong = RunSweep(other, TrainFn(), path, o);
  EXPECT_FALSE(wrong.ok());
  // Resuming a finished sweep runs nothing.
  StatusOr<SweepStats> nothing = RunSweep(spec, TrainFn(), path, o);
  ASSERT_TRUE(nothing.ok());
  EXPECT_EQ(nothing->evaluated, 0u);
  EXPECT_EQ(nothing->resumed, 24u);
}

TEST(SweepRunTest, OneThreadEqualsManyAndSummaryDropsResult) {
  const SweepSpec spec = TrainSpec();
  const std::string one = TempPath("t1.sqlite"), four = TempPath("t4.sqlite");
  SweepOptions o;
  o.threads = 1;
  ASSERT_TRUE(RunSweep(spec, TrainFn(), one, o).ok());
  o.threads = 4;
  o.batch = 5;  // several batches, not a multiple of the threads
  ASSERT_TRUE(RunSweep(spec, TrainFn(), four, o).ok());
  EXPECT_EQ(Dump(one), Dump(four));
  const std::string sum = TempPath("sum.sqlite");
  o.store = SweepStore::kSummary;
  ASSERT_TRUE(RunSweep(spec, TrainFn(), sum, o).ok());
  const std::vector<std::string> a = Dump(one), b = Dump(sum);
  ASSERT_EQ(a.size(), b.size());
  for (const std::string& r : b) {
    EXPECT_NE(r.find("|NULL|"), std::string::npos);  // result is NULL
  }
  o.store = SweepStore::kFull;
  o.resume = true;
  StatusOr<SweepStats> mixed = RunSweep(spec, TrainFn(), sum, o);
  EXPECT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("--store summary"), std::string::npos);
}

TEST(SweepRunTest, KillNineThenResumeEqualsUninterrupted) {
  const SweepSpec spec = TrainSpec();
  const std::string whole = TempPath("whole.sqlite"), killed = TempPath("killed.sqlite");
  SweepOptions o;
  o.threads = 2;
  o.batch = 4;
  ASSERT_TRUE(RunSweep(spec, TrainFn(), whole, o).ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child kills itself with SIGKILL after its third committed batch: no destructor, no
    // close, the WAL as the kill left it.
    SweepOptions k = o;
    k.threads = 1;  // libgomp's thread pool does not survive fork()
    int batches = 0;
    k.progress = [&](uint64_t, uint64_t) {
      if (++batches == 3) raise(SIGKILL);
    };
    (void)RunSweep(spec, TrainFn(), killed, k);
    _exit(0);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus));
  EXPECT_EQ(WTERMSIG(wstatus), SIGKILL);
  const std::vector<std::string> partial = Dump(killed);
  EXPECT_EQ(partial.size(), 12u);  // 3 batches of 4 committed
  o.resume = true;
  StatusOr<SweepStats> st = RunSweep(spec, TrainFn(), killed, o);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->resumed, 12u);
  EXPECT_EQ(st->evaluated, 12u);
  EXPECT_EQ(Dump(killed), Dump(whole));
}

TEST(SweepRunTest, ParetoAndTopFromTheDatabase) {
  const SweepSpec spec = TrainSpec();
  const std::string path = TempPath("pareto.sqlite");
  ASSERT_TRUE(RunSweep(spec, TrainFn(), path, SweepOptions{}).ok());
  StatusOr<std::vector<SweepPick>> front = QueryPareto(path, {"step_time_s", "cost_usd"});
  ASSERT_TRUE(front.ok()) << front.status().message();
  ASSERT_FALSE(front->empty());
  // Sorted by step time ascending, so cost must fall along the frontier.
  for (size_t i = 1; i < front->size(); ++i) {
    EXPECT_LE((*front)[i - 1].values[0], (*front)[i].values[0]);
    EXPECT_GT((*front)[i - 1].values[1], (*front)[i].values[1]);
  }
  StatusOr<std::vector<SweepPick>> top = QueryTop(path, "tokens_per_s", 3);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 3u);
  EXPECT_GE((*top)[0].values[0], (*top)[1].values[0]);  // maximized: best first
  EXPECT_EQ((*front)[0].id, (*top)[0].id);              // the fastest step is the most tokens/s
  StatusOr<std::vector<SweepPick>> bad = QueryTop(path, "speed", 3);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'speed' is not a column of a train sweep"),
            std::string::npos);
}

// `ndtwin sweep --pareto`/`--by` with a name that is not a headline column of the spec's command
// is a one-line error before any point runs: no database is written (it was refused only after
// the whole sweep had run, leaving --out behind, so the corrected command then refused to start
// with "exists: use --resume"). Columns of another command are refused too (`output_tokens_per_s`
// is infer's, not train's).
TEST(SweepRunTest, AColumnThatIsNotOneIsRefusedBeforeAnyPointRuns) {
  const std::string spec_file = TempPath("columns.yaml");
  {
    std::FILE* f = std::fopen(spec_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(kSpec, f);
    std::fclose(f);
  }
  const std::string out = TempPath("columns.sqlite");
  for (const Json& extra :
       {Json{{"pareto", "step_time_s,speed"}}, Json{{"pareto", "step_time_s,output_tokens_per_s"}},
        Json{{"top", 3}, {"by", "speed"}}}) {
    Json args = {{"spec", spec_file}, {"out", out}, {"threads", 1}};
    args.update(extra);
    Diagnostics d;
    StatusOr<CommandOutput> r = RunJson(*FindCommand("sweep"), Ctx(), args, &d);
    ASSERT_FALSE(r.ok()) << extra.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
    const std::string flag = extra.contains("by") ? "--by: '" : "--pareto: '";
    EXPECT_EQ(r.status().message().rfind(flag, 0), 0u) << r.status().message();
    EXPECT_NE(r.status().message().find("is not a column of a train sweep"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(out)) << extra.dump();
  }
}

// `ndtwin sweep` binds only the varied keys per point, and for train --store summary takes the
// headline numbers from the report with the models and clusters shared (cmd/sweep.cc): its
// tables equal the library's over RunJson of every whole point, to the last bit. The spec
// reaches every branch: a required option left null (the general path), a value that does not
// bind and one out of range (errors), null for the default (vpp), a price list varied, the
// micro-batch and VPP searches, points that fit and points that do not.
TEST(SweepRunTest, CommandFastPathsEqualTheGeneralPath) {
  const std::string y =
      "command: train\n"
      "fixed: {model: gpt3-175b, gbs: 1536, tokens: 3.0e11, pp: 8}\n"
      "grid:\n"
      "  sku: [Standard_ND96amsr_A100_v4, null, Standard_ND96isr_H100_v5]\n"
      "  vms: [16, 64]\n"
      "  tp: [8, x, 0, 4]\n"
      "  vpp: [null, 2]\n"
      "  price-per-hour: [[], [Standard_ND96isr_H100_v5=50]]\n"
      "  recompute: [full, selective]\n"
      "fidelity: estimate\n";
  const SweepSpec spec = TrainSpec(y);
  ASSERT_EQ(spec.points, 192u);
  const std::string general = TempPath("general.sqlite");
  SweepOptions o;
  o.threads = 2;
  ASSERT_TRUE(RunSweep(spec, TrainFn(), general, o).ok());
  const std::string spec_file = TempPath("fast.yaml");
  {
    std::FILE* f = std::fopen(spec_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(y.c_str(), f);
    std::fclose(f);
  }
  auto command = [&](const std::string& store) {
    const std::string out = TempPath(store + ".sqlite");
    Diagnostics d;
    StatusOr<CommandOutput> r =
        RunJson(*FindCommand("sweep"), Ctx(),
                Json{{"spec", spec_file}, {"out", out}, {"store", store}, {"threads", 2}}, &d);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return DumpExact(out);
  };
  const std::vector<std::string> want = DumpExact(general);
  ASSERT_EQ(want.size(), 192u);
  size_t ok = 0, errors = 0;
  for (const std::string& r : want) (r.find("|ok|") != std::string::npos ? ok : errors)++;
  EXPECT_GT(ok, 10u);
  EXPECT_GT(errors, 10u);
  EXPECT_EQ(command("full"), want);
  // Summary: the same rows with the result NULL (the fifth column).
  std::vector<std::string> no_result;
  for (const std::string& r : want) {
    size_t at = 0;
    for (int k = 0; k < 4; ++k) at = r.find('|', at) + 1;
    no_result.push_back(r.substr(0, at) + "NULL" + r.substr(r.find('|', at)));
  }
  EXPECT_EQ(command("summary"), no_result);
}

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

// A point's warnings (what `ndtwin train` alone prints as "ndtwin: warning: ...") are in its row:
// the count in `warnings`, the text in `warning_list` (a JSON array, NULL without any), the same
// on 1 and 3 threads and with either store, and each row's list is the one train gives for that
// point. GB300 NVL72 (4 GPUs a VM, NVLink domains of 72 GPUs) on 36 VMs = 144 GPUs: tp 16's groups
// of 16 consecutive ranks do not tile a 72-GPU domain (72 / 16 = 4.5), so some straddle two
// domains and train warns; tp 8 (72 / 8 = 9 groups a domain) does not. Through `ndtwin sweep`
// the run says how many points warned on stderr (a note) and in its JSON ("warned"), and --top's
// rows carry their lists.
TEST(SweepRunTest, PointsKeepTheirWarnings) {
  const std::string y =
      "command: train\n"
      "fixed: {model: llama2-7b, gbs: 288, sku: Standard_ND128isr_GB300_v6, vms: 36, pp: 1}\n"
      "grid: {tp: [8, 16], recompute: [none, full]}\n"
      "fidelity: estimate\n";
  const SweepSpec spec = TrainSpec(y);
  ASSERT_EQ(spec.points, 4u);
  const std::string spec_file = TempPath("warn.yaml");
  std::FILE* f = std::fopen(spec_file.c_str(), "w");
  NDT_CHECK(f != nullptr, spec_file);
  std::fputs(y.c_str(), f);
  std::fclose(f);
  std::vector<std::vector<std::string>> tables;
  for (const char* store : {"full", "summary"}) {
    for (int threads : {1, 3}) {
      const std::string out = TempPath(std::string("warn_") + store + std::to_string(threads));
      Diagnostics d;
      StatusOr<CommandOutput> r = RunJson(*FindCommand("sweep"), Ctx(),
                                          Json{{"spec", spec_file},
                                               {"out", out},
                                               {"store", store},
                                               {"threads", threads},
                                               {"top", 4},
                                               {"by", "step_time_s"}},
                                          &d);
      ASSERT_TRUE(r.ok()) << r.status().message();
      // The 2 tp 16 points warn (the tp 8 ones may warn too, as train does: counted below).
      const uint64_t warned = r->json["warned"].get<uint64_t>();
      EXPECT_GE(warned, 2u);
      const std::string note = "sweep: " + std::to_string(warned) +
                               " of 4 points have warnings; see the warnings column";
      ASSERT_EQ(d.notes.size(), 1u);
      EXPECT_EQ(d.notes[0].rfind(note, 0), 0u) << d.notes[0];
      size_t listed = 0;
      for (const Json& row : r->json["top"]["rows"]) listed += row["warnings"].empty() ? 0 : 1;
      EXPECT_EQ(listed, warned);
      EXPECT_NE(r->text.find("warnings"), std::string::npos);
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(out.c_str(), &db), SQLITE_OK);
      sqlite3_stmt* s = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT id, warnings, warning_list FROM results ORDER BY id",
                                   -1, &s, nullptr),
                SQLITE_OK);
      std::vector<std::string> table;
      uint64_t with = 0;
      while (sqlite3_step(s) == SQLITE_ROW) {
        const Json args = SweepPoint(spec, sqlite3_column_int64(s, 0));
        Diagnostics one;
        ASSERT_TRUE(RunJson(*FindCommand("train"), Ctx(), args, &one).ok());
        const int64_t n = sqlite3_column_int64(s, 1);
        EXPECT_EQ(n, static_cast<int64_t>(one.warnings.size())) << args.dump();
        if (n == 0) {
          EXPECT_EQ(sqlite3_column_type(s, 2), SQLITE_NULL);
          table.push_back("");
        } else {
          const std::string list = reinterpret_cast<const char*>(sqlite3_column_text(s, 2));
          EXPECT_EQ(Json::parse(list), Json(one.warnings)) << args.dump();
          table.push_back(list);
          ++with;
        }
        if (args["tp"] == 16) {
          ASSERT_GE(n, 1);
          EXPECT_NE(table.back().find("straddle"), std::string::npos) << table.back();
        }
      }
      sqlite3_finalize(s);
      sqlite3_close(db);
      EXPECT_EQ(with, warned);
      tables.push_back(table);
    }
  }
  for (const auto& t : tables) EXPECT_EQ(t, tables[0]);
}

// The typed path's request declares train's options exactly (else the sweep would not use it).
TEST(SweepRunTest, TrainPointRequestDeclaresTrainsOptions) {
  TrainPointRequest mine;
  EXPECT_TRUE(SameOptions(mine, *FindCommand("train")->new_request()));
  EXPECT_FALSE(SameOptions(mine, *FindCommand("infer")->new_request()));
}

}  // namespace
}  // namespace ndt
