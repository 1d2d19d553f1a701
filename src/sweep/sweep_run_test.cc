// Sweeps run with the registry (sweep/sweep.h's runner and store): rows equal to the command's
// JSON, 1 and N threads, kill -9 and --resume, the database queries.
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

}  // namespace
}  // namespace ndt
