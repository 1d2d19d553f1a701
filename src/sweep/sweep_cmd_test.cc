// `ndtwin sweep` (cmd/sweep.cc): columns checked before any point runs, its fast paths against the
// general one, the typed train request, and the points' warnings.
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

// --out must name a file in an existing folder, and the spec must be a file: an empty --out ran
// the sweep into SQLite's private temporary database (rows gone, "in " printed), a folder as --out
// said "exists: use --resume", a missing folder "unable to open database file", and a folder as
// the spec "must be a mapping".
TEST(SweepRunTest, OutAndSpecMustBeFiles) {
  const std::string spec_file = TempPath("paths.yaml");
  {
    std::FILE* f = std::fopen(spec_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(kSpec, f);
    std::fclose(f);
  }
  const std::string dir = testing::TempDir();
  const std::pair<Json, std::string> cases[] = {
      {{{"spec", spec_file}, {"out", ""}}, "--out needs a file name"},
      {{{"spec", spec_file}, {"out", dir}}, "is a directory; give a file name"},
      {{{"spec", spec_file}, {"out", dir}, {"resume", true}}, "is a directory; give a file name"},
      {{{"spec", spec_file}, {"out", dir + "/no_such_folder/x.sqlite"}}, "does not exist"},
      {{{"spec", dir}, {"out", TempPath("paths.sqlite")}}, "is a directory; give the sweep's YAML"},
  };
  for (const auto& [args, want] : cases) {
    Diagnostics d;
    StatusOr<CommandOutput> r = RunJson(*FindCommand("sweep"), Ctx(), args, &d);
    ASSERT_FALSE(r.ok()) << args.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << args.dump();
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
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
