// File: sweep/store.h
// Internal to the sweep module: the SQLite database of one sweep (store.cc), used by the runner
// (sweep.cc) and the queries (query.cc).
#ifndef NDTWIN_SWEEP_STORE_H_
#define NDTWIN_SWEEP_STORE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "sweep/sweep.h"

namespace ndt {
namespace sweep_detail {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

// kInvalidInput "path: what: <SQLite's message>".
Status DbError(sqlite3* db, const std::string& path, const std::string& what);
// Runs `sql` (several statements allowed).
Status Exec(sqlite3* db, const std::string& path, const std::string& sql);
StatusOr<Stmt> Prepare(sqlite3* db, const std::string& path, const std::string& sql);
// Opens `path` read-write (created when `create`), with a 10 s busy timeout.
StatusOr<Db> OpenDb(const std::string& path, bool create);
// A value of the sweep_meta table.
StatusOr<std::string> Meta(sqlite3* db, const std::string& path, const std::string& key);

// The database of one sweep, written by one process.
class Store {
 public:
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, const SweepSpec& spec,
                                               const std::vector<HeadlineColumn>& cols,
                                               SweepStore mode, bool resume);

  // The ids already stored, as a bitmap over [0, points).
  StatusOr<std::vector<bool>> Done(uint64_t points);

  // One transaction per batch: a kill loses at most the batch being written.
  Status Write(const std::vector<SweepRow>& rows);

  // Indexes on the headline columns and status, made after the rows (one scan and sort each,
  // which costs less than keeping them on insert: store.cc).
  Status Finish(const std::vector<HeadlineColumn>& cols);

  // The (ok, error) row counts.
  StatusOr<std::pair<uint64_t, uint64_t>> Counts();
  // The rows with warnings.
  StatusOr<uint64_t> Warned();

 private:
  std::string path_;
  size_t ncols_ = 0;
  Db db_;
  Stmt insert_;
};

}  // namespace sweep_detail
}  // namespace ndt

#endif  // NDTWIN_SWEEP_STORE_H_
