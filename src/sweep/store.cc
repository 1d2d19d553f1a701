// File: sweep/store.cc
// The SQLite database of one sweep (store.h) and ParseSweepStore (sweep.h).
#include "sweep/store.h"

#include <filesystem>

#include "core/files.h"

namespace ndt {
namespace sweep_detail {
namespace {

const char* StoreName(SweepStore s) { return s == SweepStore::kFull ? "full" : "summary"; }

}  // namespace

Status DbError(sqlite3* db, const std::string& path, const std::string& what) {
  return Status::InvalidInput(path + ": " + what + ": " + sqlite3_errmsg(db));
}

Status Exec(sqlite3* db, const std::string& path, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err != nullptr ? err : "error";
    sqlite3_free(err);
    return Status::InvalidInput(path + ": " + m + " (in: " + sql.substr(0, 60) + ")");
  }
  return Status::Ok();
}

StatusOr<Stmt> Prepare(sqlite3* db, const std::string& path, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
    return DbError(db, path, "cannot prepare '" + sql.substr(0, 60) + "'");
  }
  return Stmt(s);
}

StatusOr<Db> OpenDb(const std::string& path, bool create) {
  // SQLite's memory statistics take a global mutex on every allocation and free; nothing here
  // reads them. Only before SQLite initializes (a no-op after, as for a second call).
  static const int memstatus_off = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)memstatus_off;
  sqlite3* raw = nullptr;
  // NOMUTEX: a connection is used by one thread at a time (opened and queried by the caller, then
  // written by the sweep's writer thread between its start and its join), so SQLite's
  // per-call connection mutex only costs time.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) return DbError(db.get(), path, "cannot open");
  sqlite3_busy_timeout(db.get(), 10000);
  return db;
}

StatusOr<std::string> Meta(sqlite3* db, const std::string& path, const std::string& key) {
  NDT_ASSIGN_OR_RETURN(Stmt s, Prepare(db, path, "SELECT value FROM sweep_meta WHERE key = ?"));
  sqlite3_bind_text(s.get(), 1, key.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(s.get()) != SQLITE_ROW) {
    return Status::InvalidInput(path + ": not an ndtwin sweep database (no " + key + ")");
  }
  return std::string(reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 0)));
}

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path, const SweepSpec& spec,
                                             const std::vector<HeadlineColumn>& cols,
                                             SweepStore mode, bool resume) {
  // An empty --out opened SQLite's private temporary database (the sweep ran, printed "in " and
  // its rows vanished); a folder or a missing folder gave "exists: use --resume" or "unable to
  // open database file". Only the writer (rank 0 under MPI) opens the store, so only its file
  // system is checked.
  NDT_RETURN_IF_ERROR(CheckWritablePath(path, "--out"));
  const bool exists = std::filesystem::exists(path);
  if (exists && !resume) {
    return Status::InvalidInput(path + " exists: use --resume to finish it, or remove it");
  }
  auto st = std::unique_ptr<Store>(new Store);
  st->path_ = path;
  st->ncols_ = cols.size();
  NDT_ASSIGN_OR_RETURN(st->db_, OpenDb(path, true));
  sqlite3* db = st->db_.get();
  // 64 KiB pages (a new file only: SQLite keeps an existing file's): a sweep's rows are
  // appended, and a commit writes each page it touched whole into the WAL and a checkpoint copies
  // it again, so fewer, larger pages mean fewer frames, checksums and system calls for the same
  // bytes (the full GPT-3 space's store: ~40% less CPU than 4 KiB pages). The same rows: the
  // page size is not part of what a query or `sqlite3 .dump` reads. A larger page cache and
  // checkpoints every 128 MiB of WAL: less re-reading and copying.
  // synchronous=NORMAL in WAL mode: a commit is durable once the WAL frames are written (the
  // kernel holds them if the process is killed, even with kill -9); only a power loss or an OS
  // crash may roll back the last commits, never corrupt the file (SQLite's WAL guarantee).
  NDT_RETURN_IF_ERROR(Exec(db, path,
                           "PRAGMA page_size=65536; PRAGMA journal_mode=WAL; "
                           "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536; "
                           "PRAGMA wal_autocheckpoint=2048; PRAGMA temp_store=MEMORY;"));
  const std::string spec_json = CanonicalJson(spec.ToJson());
  if (exists) {
    StatusOr<std::string> old = Meta(db, path, "spec");
    if (!old.ok()) return old.status();
    if (*old != spec_json) {
      return Status::InvalidInput(path +
                                  " holds another spec's sweep; --resume needs the same "
                                  "spec (or use another --out)");
    }
    NDT_ASSIGN_OR_RETURN(std::string m, Meta(db, path, "store"));
    if (m != StoreName(mode)) {
      return Status::InvalidInput(path + " was written with --store " + m +
                                  "; resume it with the same --store");
    }
  } else {
    std::string sql =
        "CREATE TABLE sweep_meta(key TEXT PRIMARY KEY, value TEXT);"
        "CREATE TABLE results(id INTEGER PRIMARY KEY, params TEXT, status TEXT, error TEXT, "
        "result TEXT";
    for (const HeadlineColumn& c : cols) sql += ", " + c.name + " REAL";
    sql += ", warnings INTEGER, warning_list TEXT);";
    NDT_RETURN_IF_ERROR(Exec(db, path, "BEGIN;" + sql));
    NDT_ASSIGN_OR_RETURN(Stmt m, Prepare(db, path, "INSERT INTO sweep_meta VALUES (?, ?)"));
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"schema", "ndtwin.sweep/1"},
                               {"spec", spec_json},
                               {"command", spec.command},
                               {"store", StoreName(mode)},
                               {"points", std::to_string(spec.points)}}) {
      sqlite3_bind_text(m.get(), 1, k.c_str(), -1, SQLITE_TRANSIENT);
      sqlite3_bind_text(m.get(), 2, v.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(m.get()) != SQLITE_DONE) return DbError(db, path, "cannot write");
      sqlite3_reset(m.get());
    }
    NDT_RETURN_IF_ERROR(Exec(db, path, "COMMIT;"));
  }
  // The indexes are made by Finish, after the rows: each is then one scan of the table and one
  // sort, written once, where kept on insert every commit rewrote the index pages it touched
  // (the partial ones are inserted into at random places) into the WAL: with 64 KiB pages, ~45%
  // of the store's CPU against ~30% for building them at the end. A run killed before Finish
  // has rows without indexes; --resume makes them (queries are correct either way).
  if (exists) {
    // A database begun by a build before the warnings columns: add them (its rows get NULL).
    NDT_ASSIGN_OR_RETURN(Stmt info, Prepare(db, path, "PRAGMA table_info(results)"));
    bool has = false;
    while (sqlite3_step(info.get()) == SQLITE_ROW) {
      has |= std::string(reinterpret_cast<const char*>(sqlite3_column_text(info.get(), 1))) ==
             "warnings";
    }
    if (!has) {
      NDT_RETURN_IF_ERROR(Exec(db, path,
                               "ALTER TABLE results ADD COLUMN warnings INTEGER; "
                               "ALTER TABLE results ADD COLUMN warning_list TEXT;"));
    }
  }
  // Columns named: an older database has the warnings columns last, as a new one does.
  std::string ins = "INSERT OR REPLACE INTO results(id, params, status, error, result";
  for (const HeadlineColumn& c : cols) ins += ", " + c.name;
  ins += ", warnings, warning_list) VALUES (?, ?, ?, ?, ?";
  for (size_t i = 0; i < cols.size() + 2; ++i) ins += ", ?";
  ins += ")";
  NDT_ASSIGN_OR_RETURN(st->insert_, Prepare(db, path, ins));
  return st;
}

// The ids already stored, as a bitmap over [0, points).
StatusOr<std::vector<bool>> Store::Done(uint64_t points) {
  std::vector<bool> done(points, false);
  NDT_ASSIGN_OR_RETURN(Stmt s, Prepare(db_.get(), path_, "SELECT id FROM results"));
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    const int64_t id = sqlite3_column_int64(s.get(), 0);
    if (id >= 0 && static_cast<uint64_t>(id) < points) done[id] = true;
  }
  return done;
}

// One transaction per batch: a kill loses at most the batch being written.
Status Store::Write(const std::vector<SweepRow>& rows) {
  sqlite3* db = db_.get();
  NDT_RETURN_IF_ERROR(Exec(db, path_, "BEGIN;"));
  sqlite3_stmt* s = insert_.get();
  const int warnings_at = static_cast<int>(6 + ncols_);
  std::string list;
  for (const SweepRow& r : rows) {
    sqlite3_bind_int64(s, 1, static_cast<int64_t>(r.id));
    sqlite3_bind_text(s, 2, r.params.data(), static_cast<int>(r.params.size()), SQLITE_STATIC);
    sqlite3_bind_text(s, 3, r.ok ? "ok" : "error", -1, SQLITE_STATIC);
    if (r.ok) {
      sqlite3_bind_null(s, 4);
    } else {
      sqlite3_bind_text(s, 4, r.error.data(), static_cast<int>(r.error.size()), SQLITE_STATIC);
    }
    if (r.ok && !r.result.empty()) {
      sqlite3_bind_text(s, 5, r.result.data(), static_cast<int>(r.result.size()), SQLITE_STATIC);
    } else {
      sqlite3_bind_null(s, 5);
    }
    for (size_t c = 0; c < ncols_; ++c) {
      if (c < r.values.size() && r.values[c].has_value()) {
        sqlite3_bind_double(s, static_cast<int>(6 + c), *r.values[c]);
      } else {
        sqlite3_bind_null(s, static_cast<int>(6 + c));
      }
    }
    sqlite3_bind_int64(s, warnings_at, static_cast<int64_t>(r.warnings.size()));
    if (r.warnings.empty()) {
      sqlite3_bind_null(s, warnings_at + 1);
    } else {
      list = Json(r.warnings).dump();
      sqlite3_bind_text(s, warnings_at + 1, list.data(), static_cast<int>(list.size()),
                        SQLITE_TRANSIENT);
    }
    if (sqlite3_step(s) != SQLITE_DONE) {
      Status e = DbError(db, path_, "cannot insert");
      sqlite3_reset(s);
      (void)Exec(db, path_, "ROLLBACK;");
      return e;
    }
    sqlite3_reset(s);
  }
  return Exec(db, path_, "COMMIT;");
}

// Indexes on the headline columns and status, after the rows, in one transaction (IF NOT
// EXISTS: a database begun by an older build, which made them before the rows, has them).
Status Store::Finish(const std::vector<HeadlineColumn>& cols) {
  std::string sql = "BEGIN; CREATE INDEX IF NOT EXISTS results_status ON results(status);";
  for (const HeadlineColumn& c : cols) {
    // Partial: the rows a query can pick (--pareto and --top ask for IS NOT NULL), not the
    // errors, which are most rows of many sweeps.
    sql += "CREATE INDEX IF NOT EXISTS results_" + c.name + " ON results(" + c.name + ") WHERE " +
           c.name + " IS NOT NULL;";
  }
  sql += "COMMIT;";
  Status s = Exec(db_.get(), path_, sql);
  if (!s.ok()) (void)Exec(db_.get(), path_, "ROLLBACK;");
  return s;
}

StatusOr<std::pair<uint64_t, uint64_t>> Store::Counts() {
  // Counted on the status index (Finish made it), not by a scan of the whole table.
  uint64_t n[2] = {0, 0};
  const char* status[2] = {"ok", "error"};
  NDT_ASSIGN_OR_RETURN(Stmt s,
                       Prepare(db_.get(), path_, "SELECT COUNT(*) FROM results WHERE status = ?"));
  for (int i = 0; i < 2; ++i) {
    sqlite3_bind_text(s.get(), 1, status[i], -1, SQLITE_STATIC);
    if (sqlite3_step(s.get()) != SQLITE_ROW) return DbError(db_.get(), path_, "cannot count");
    n[i] = static_cast<uint64_t>(sqlite3_column_int64(s.get(), 0));
    sqlite3_reset(s.get());
  }
  return std::pair<uint64_t, uint64_t>(n[0], n[1]);
}

StatusOr<uint64_t> Store::Warned() {
  NDT_ASSIGN_OR_RETURN(
      Stmt s, Prepare(db_.get(), path_, "SELECT COUNT(*) FROM results WHERE warnings > 0"));
  if (sqlite3_step(s.get()) != SQLITE_ROW) return DbError(db_.get(), path_, "cannot count");
  return static_cast<uint64_t>(sqlite3_column_int64(s.get(), 0));
}

}  // namespace sweep_detail

bool ParseSweepStore(const std::string& s, SweepStore* out) {
  if (s == "full") {
    *out = SweepStore::kFull;
  } else if (s == "summary") {
    *out = SweepStore::kSummary;
  } else {
    return false;
  }
  return true;
}

}  // namespace ndt
