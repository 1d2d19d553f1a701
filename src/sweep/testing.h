// File: sweep/testing.h
// Helpers shared by the sweep tests that run registry commands (sweep_run_test.cc,
// sweep_cmd_test.cc, sweep_columns_test.cc): the data loaded once, the registry's option names,
// a small GPT-3 train spec, temporary paths, and the results table dumped row by row.
#ifndef NDTWIN_SWEEP_TESTING_H_
#define NDTWIN_SWEEP_TESTING_H_

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
namespace sweep_testing {

inline const Context& Ctx() {
  static const Context ctx = [] {
    StatusOr<Context> c = Context::Load("");
    NDT_CHECK(c.ok(), c.status().message());
    return std::move(*c);
  }();
  return ctx;
}

inline StatusOr<std::vector<std::string>> RegistryOptions(const std::string& name) {
  const Command* c = FindCommand(name);
  if (c == nullptr) return Status::NotFound("unknown command '" + name + "'");
  auto req = c->new_request();
  OptionList o;
  req->Declare(&o);
  std::vector<std::string> names;
  for (const Option& x : o.options()) names.push_back(x.name);
  return names;
}

inline PointFn TrainFn() {
  return [](const Json& args) -> StatusOr<Json> {
    Diagnostics d;
    NDT_ASSIGN_OR_RETURN(CommandOutput out, RunJson(*FindCommand("train"), Ctx(), args, &d));
    return std::move(out.json);
  };
}

// 2 x 3 x 2 x 2 = 24 points; tp 16 exceeds the 8-GPU NVLink domain and pp 7 does not divide
// GPT-3's 96 layers: some points are errors, and the table keeps them.
inline const char* const kSpec =
    "command: train\n"
    "fixed: {model: gpt3-175b, gbs: 1536, tokens: 3.0e11}\n"
    "grid:\n"
    "  sku: [Standard_ND96amsr_A100_v4, Standard_ND96isr_H100_v5]\n"
    "  vms: [16, 64, 128]\n"
    "  tp: [8, 16]\n"
    "zip: {pp: [8, 7], recompute: [full, selective]}\n"
    "fidelity: estimate\n";  // the closed form: milliseconds per point

inline SweepSpec TrainSpec(const std::string& y = kSpec) {
  StatusOr<SweepSpec> s = ParseSweepSpec(y, RegistryOptions);
  NDT_CHECK(s.ok(), s.status().message());
  return *s;
}

inline std::string TempPath(const std::string& name) {
  const std::string p = testing::TempDir() + "/ndt_sweep_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove(p);
  std::filesystem::remove(p + "-wal");
  std::filesystem::remove(p + "-shm");
  return p;
}

// The whole results table, row by row, every column; with `exact`, every REAL in hex (equality
// to the last bit).
inline std::vector<std::string> Dump(const std::string& path, bool exact = false) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT * FROM results ORDER BY id", -1, &s, nullptr),
            SQLITE_OK);
  std::vector<std::string> rows;
  while (sqlite3_step(s) == SQLITE_ROW) {
    std::string r;
    for (int c = 0; c < sqlite3_column_count(s); ++c) {
      if (exact && sqlite3_column_type(s, c) == SQLITE_FLOAT) {
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

inline std::vector<std::string> DumpExact(const std::string& path) { return Dump(path, true); }

}  // namespace sweep_testing
}  // namespace ndt

#endif  // NDTWIN_SWEEP_TESTING_H_
