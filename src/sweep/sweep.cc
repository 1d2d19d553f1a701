// File: sweep/sweep.cc
// The store (SQLite), the runner (OpenMP threads, MPI ranks) and the queries of sweep.h.
#include "sweep/sweep.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef NDT_HAVE_MPI
#include <mpi.h>
#endif

namespace ndt {
namespace {

// ---- SQLite ---------------------------------------------------------------------------------

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

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
  sqlite3* raw = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
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

const char* StoreName(SweepStore s) { return s == SweepStore::kFull ? "full" : "summary"; }

// The database of one sweep, written by one process.
class Store {
 public:
  static StatusOr<std::unique_ptr<Store>> Open(const std::string& path, const SweepSpec& spec,
                                               const std::vector<HeadlineColumn>& cols,
                                               SweepStore mode, bool resume) {
    const bool exists = std::filesystem::exists(path);
    if (exists && !resume) {
      return Status::InvalidInput(path + " exists: use --resume to finish it, or remove it");
    }
    auto st = std::unique_ptr<Store>(new Store);
    st->path_ = path;
    st->ncols_ = cols.size();
    NDT_ASSIGN_OR_RETURN(st->db_, OpenDb(path, true));
    sqlite3* db = st->db_.get();
    // A larger page cache and fewer checkpoints: the same commits, less re-reading and copying.
    NDT_RETURN_IF_ERROR(Exec(db, path,
                             "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                             "PRAGMA cache_size=-65536; PRAGMA wal_autocheckpoint=8192; "
                             "PRAGMA temp_store=MEMORY;"));
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
      sql += ");";
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
    std::string ins = "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?";
    for (size_t i = 0; i < cols.size(); ++i) ins += ", ?";
    ins += ")";
    NDT_ASSIGN_OR_RETURN(st->insert_, Prepare(db, path, ins));
    return st;
  }

  // The ids already stored, as a bitmap over [0, points).
  StatusOr<std::vector<bool>> Done(uint64_t points) {
    std::vector<bool> done(points, false);
    NDT_ASSIGN_OR_RETURN(Stmt s, Prepare(db_.get(), path_, "SELECT id FROM results"));
    while (sqlite3_step(s.get()) == SQLITE_ROW) {
      const int64_t id = sqlite3_column_int64(s.get(), 0);
      if (id >= 0 && static_cast<uint64_t>(id) < points) done[id] = true;
    }
    return done;
  }

  // One transaction per batch: a kill loses at most the batch being written.
  Status Write(const std::vector<SweepRow>& rows) {
    sqlite3* db = db_.get();
    NDT_RETURN_IF_ERROR(Exec(db, path_, "BEGIN;"));
    sqlite3_stmt* s = insert_.get();
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

  // Indexes on the headline columns and status (built once, at the end: faster than updating
  // them on every insert).
  Status Finish(const std::vector<HeadlineColumn>& cols) {
    std::string sql = "CREATE INDEX IF NOT EXISTS results_status ON results(status);";
    for (const HeadlineColumn& c : cols) {
      // Partial: the rows a query can pick (--pareto and --top ask for IS NOT NULL), not the
      // errors, which are most rows of many sweeps.
      sql += "CREATE INDEX IF NOT EXISTS results_" + c.name + " ON results(" + c.name + ") WHERE " +
             c.name + " IS NOT NULL;";
    }
    return Exec(db_.get(), path_, sql);
  }

  StatusOr<std::pair<uint64_t, uint64_t>> Counts() {
    NDT_ASSIGN_OR_RETURN(
        Stmt s,
        Prepare(db_.get(), path_, "SELECT SUM(status = 'ok'), SUM(status = 'error') FROM results"));
    if (sqlite3_step(s.get()) != SQLITE_ROW) return DbError(db_.get(), path_, "cannot count");
    return std::pair<uint64_t, uint64_t>(sqlite3_column_int64(s.get(), 0),
                                         sqlite3_column_int64(s.get(), 1));
  }

 private:
  std::string path_;
  size_t ncols_ = 0;
  Db db_;
  Stmt insert_;
};

// A number at a JSON pointer; "-" as the last array index means the last element.
std::optional<double> Lookup(const Json& j, const std::string& pointer) {
  const Json* at = &j;
  size_t i = 1;
  while (i <= pointer.size()) {
    size_t k = pointer.find('/', i);
    if (k == std::string::npos) k = pointer.size();
    const std::string tok = pointer.substr(i, k - i);
    i = k + 1;
    if (at->is_object()) {
      auto it = at->find(tok);
      if (it == at->end()) return std::nullopt;
      at = &*it;
    } else if (at->is_array()) {
      if (at->empty()) return std::nullopt;
      if (tok == "-") {
        at = &at->back();
      } else {
        const size_t n = std::strtoul(tok.c_str(), nullptr, 10);
        if (n >= at->size()) return std::nullopt;
        at = &(*at)[n];
      }
    } else {
      return std::nullopt;
    }
  }
  if (!at->is_number()) return std::nullopt;
  const double v = at->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

// ---- Rows over MPI --------------------------------------------------------------------------

void PutU64(std::string* b, uint64_t v) { b->append(reinterpret_cast<const char*>(&v), 8); }
void PutStr(std::string* b, const std::string& s) {
  PutU64(b, s.size());
  b->append(s);
}
uint64_t GetU64(const std::string& b, size_t* at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + *at, 8);
  *at += 8;
  return v;
}
std::string GetStr(const std::string& b, size_t* at) {
  const uint64_t n = GetU64(b, at);
  std::string s = b.substr(*at, n);
  *at += n;
  return s;
}

[[maybe_unused]] std::string Pack(const std::vector<SweepRow>& rows) {
  std::string b;
  PutU64(&b, rows.size());
  for (const SweepRow& r : rows) {
    PutU64(&b, r.id);
    PutU64(&b, r.ok ? 1 : 0);
    PutStr(&b, r.params);
    PutStr(&b, r.error);
    PutStr(&b, r.result);
    PutU64(&b, r.values.size());
    for (const std::optional<double>& v : r.values) {
      PutU64(&b, v.has_value() ? 1 : 0);
      double d = v.value_or(0);
      b.append(reinterpret_cast<const char*>(&d), 8);
    }
  }
  return b;
}

[[maybe_unused]] std::vector<SweepRow> Unpack(const std::string& b) {
  size_t at = 0;
  std::vector<SweepRow> rows(GetU64(b, &at));
  for (SweepRow& r : rows) {
    r.id = GetU64(b, &at);
    r.ok = GetU64(b, &at) != 0;
    r.params = GetStr(b, &at);
    r.error = GetStr(b, &at);
    r.result = GetStr(b, &at);
    r.values.resize(GetU64(b, &at));
    for (std::optional<double>& v : r.values) {
      const bool has = GetU64(b, &at) != 0;
      double d = 0;
      std::memcpy(&d, b.data() + at, 8);
      at += 8;
      if (has) v = d;
    }
  }
  return rows;
}

int Threads(int requested) {
#ifdef _OPENMP
  return requested > 0 ? requested : omp_get_num_procs();
#else
  (void)requested;
  return 1;
#endif
}

// A PointFn as a runner: the point's flags as JSON, then the function.
class FnRunner : public PointRunner {
 public:
  FnRunner(const SweepSpec& spec, const PointFn& fn) : spec_(spec), fn_(fn) {}
  StatusOr<Json> Run(uint64_t id) override { return fn_(SweepPoint(spec_, id)); }

 private:
  const SweepSpec& spec_;
  const PointFn& fn_;
};

SweepRow Evaluate(PointRunner& runner, const SweepParams& params, uint64_t id,
                  const std::vector<HeadlineColumn>& columns, SweepStore store) {
  SweepRow r;
  r.id = id;
  r.params = params.Of(id);
  r.values.resize(columns.size());
  Status error;
  if (store == SweepStore::kSummary && runner.Summary(id, &r.values, &error)) {
    r.ok = error.ok();
    if (!r.ok) {
      r.error = error.message();
      std::fill(r.values.begin(), r.values.end(), std::nullopt);
    }
    return r;
  }
  StatusOr<Json> out = runner.Run(id);
  if (!out.ok()) {
    r.error = out.status().message();
    return r;
  }
  r.ok = true;
  if (store == SweepStore::kFull) r.result = out->dump(2);
  for (size_t c = 0; c < columns.size(); ++c) r.values[c] = Lookup(*out, columns[c].pointer);
  return r;
}

// Evaluates ids on `threads` threads (runner k on thread k) into rows in the ids' order.
std::vector<SweepRow> EvaluateBatch(const SweepParams& params, const std::vector<uint64_t>& ids,
                                    std::vector<std::unique_ptr<PointRunner>>& runners,
                                    const std::vector<HeadlineColumn>& cols, SweepStore store,
                                    int threads) {
  std::vector<SweepRow> rows(ids.size());
  const int64_t n = static_cast<int64_t>(ids.size());
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) {
#ifdef _OPENMP
    PointRunner& runner = *runners[omp_get_thread_num()];
#else
    PointRunner& runner = *runners[0];
#endif
    rows[i] = Evaluate(runner, params, ids[i], cols, store);
  }
  (void)threads;
  return rows;
}

// The next batch of missing ids from *next on.
std::vector<uint64_t> NextBatch(const std::vector<bool>& done, uint64_t batch, uint64_t* next) {
  std::vector<uint64_t> ids;
  while (*next < done.size() && ids.size() < batch) {
    if (!done[*next]) ids.push_back(*next);
    ++*next;
  }
  return ids;
}

#ifdef NDT_HAVE_MPI
// Launched by mpirun or srun with more than one process.
bool UnderMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(v) != nullptr) return true;
  }
  return false;
}

constexpr int kTagResult = 1, kTagWork = 2;

void SendString(const std::string& s, int to, int tag) {
  MPI_Send(s.data(), static_cast<int>(s.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}
std::string RecvString(int from, int tag, int* source) {
  MPI_Status st;
  MPI_Probe(from, tag, MPI_COMM_WORLD, &st);
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  std::string s(n, '\0');
  MPI_Recv(s.data(), n, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (source != nullptr) *source = st.MPI_SOURCE;
  return s;
}
#endif

}  // namespace

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

SweepRow EvaluatePoint(const SweepSpec& spec, uint64_t id, const PointFn& fn,
                       const std::vector<HeadlineColumn>& columns, SweepStore store) {
  SweepRow r;
  r.id = id;
  const Json args = SweepPoint(spec, id);
  r.params = CanonicalJson(args);
  StatusOr<Json> out = fn(args);
  r.values.resize(columns.size());
  if (!out.ok()) {
    r.error = out.status().message();
    return r;
  }
  r.ok = true;
  if (store == SweepStore::kFull) r.result = out->dump(2);
  for (size_t c = 0; c < columns.size(); ++c) r.values[c] = Lookup(*out, columns[c].pointer);
  return r;
}

StatusOr<SweepStats> RunSweep(const SweepSpec& spec, const PointFn& fn, const std::string& path,
                              const SweepOptions& options) {
  return RunSweep(
      spec, [&]() -> std::unique_ptr<PointRunner> { return std::make_unique<FnRunner>(spec, fn); },
      path, options);
}

StatusOr<SweepStats> RunSweep(const SweepSpec& spec, const RunnerFactory& make,
                              const std::string& path, const SweepOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  SweepStats stats;
  stats.points = spec.points;
  stats.threads = Threads(options.threads);
  const std::vector<HeadlineColumn> cols = HeadlineColumns(spec.command);
  const SweepParams params(spec);
  std::vector<std::unique_ptr<PointRunner>> runners;
  for (int t = 0; t < stats.threads; ++t) runners.push_back(make());
  const uint64_t batch =
      options.batch > 0 ? options.batch : 2048 * static_cast<uint64_t>(stats.threads);
  [[maybe_unused]] int rank = 0;
  int ranks = 1;
#ifdef NDT_HAVE_MPI
  bool mpi = false;
  if (UnderMpi()) {
    int init = 0;
    MPI_Initialized(&init);
    if (!init) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    mpi = ranks > 1;
    if (!mpi) MPI_Finalize();
  }
  struct Finalize {
    bool on;
    ~Finalize() {
      if (on) MPI_Finalize();
    }
  } finalize{mpi};
  if (mpi && rank != 0) {
    // A worker: ask for work with the previous batch's rows until an empty batch comes.
    stats.writer = false;
    stats.ranks = ranks;
    std::string rows = Pack({});
    for (;;) {
      SendString(rows, 0, kTagResult);
      const std::string work = RecvString(0, kTagWork, nullptr);
      if (work.empty()) break;
      std::vector<uint64_t> ids(work.size() / 8);
      std::memcpy(ids.data(), work.data(), work.size());
      rows = Pack(EvaluateBatch(params, ids, runners, cols, options.store, stats.threads));
      stats.evaluated += ids.size();
    }
    return stats;
  }
#endif
  stats.ranks = ranks;
  StatusOr<std::unique_ptr<Store>> opened =
      Store::Open(path, spec, cols, options.store, options.resume);
  std::vector<bool> done;
  if (opened.ok()) {
    StatusOr<std::vector<bool>> d = (*opened)->Done(spec.points);
    if (!d.ok()) opened = d.status();
    if (d.ok()) done = std::move(*d);
  }
  if (!done.empty()) stats.resumed = std::count(done.begin(), done.end(), true);
  uint64_t next = 0, committed = stats.resumed, batches = 0;
  Status status;
  if (!opened.ok()) {
    status = opened.status();
    done.assign(0, false);  // no work: workers are told to stop
  }
  auto commit = [&](const std::vector<SweepRow>& rows) -> bool {
    if (!status.ok()) return false;
    status = (*opened)->Write(rows);
    committed += rows.size();
    stats.evaluated += rows.size();
    if (options.progress) options.progress(committed, spec.points);
    ++batches;
    return status.ok() &&
           !(options.stop_after_batches > 0 && batches >= options.stop_after_batches);
  };
#ifdef NDT_HAVE_MPI
  if (mpi) {
    // Rank 0 hands out batches to ranks 1..N-1 and writes what they send back.
    int active = ranks - 1;
    bool go = true;
    while (active > 0) {
      int from = 0;
      const std::vector<SweepRow> rows = Unpack(RecvString(MPI_ANY_SOURCE, kTagResult, &from));
      if (!rows.empty()) go = commit(rows) && go;
      std::vector<uint64_t> ids;
      if (go) ids = NextBatch(done, batch, &next);
      std::string work(ids.size() * 8, '\0');
      if (!ids.empty()) std::memcpy(work.data(), ids.data(), work.size());
      SendString(work, from, kTagWork);
      if (ids.empty()) --active;
    }
  } else
#endif
  {
    for (;;) {
      const std::vector<uint64_t> ids = NextBatch(done, batch, &next);
      if (ids.empty()) break;
      if (!commit(EvaluateBatch(params, ids, runners, cols, options.store, stats.threads))) break;
    }
  }
  NDT_RETURN_IF_ERROR(status);
  NDT_RETURN_IF_ERROR((*opened)->Finish(cols));
  NDT_ASSIGN_OR_RETURN(auto counts, (*opened)->Counts());
  stats.ok = counts.first;
  stats.errors = counts.second;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

// ---- Queries --------------------------------------------------------------------------------

std::vector<SweepPick> ParetoFrontier(std::vector<SweepPick> points,
                                      const std::vector<bool>& maximize) {
  const size_t d = maximize.size();
  // Everything as "lower is better".
  for (SweepPick& p : points) {
    for (size_t k = 0; k < d; ++k) {
      if (maximize[k]) p.values[k] = -p.values[k];
    }
  }
  std::sort(points.begin(), points.end(), [](const SweepPick& a, const SweepPick& b) {
    if (a.values != b.values) return a.values < b.values;
    return a.id < b.id;
  });
  // After the sort, anything that dominates a point comes before it.
  std::vector<SweepPick> front;
  for (SweepPick& p : points) {
    bool dominated = false;
    for (const SweepPick& f : front) {
      bool le = true, lt = false;
      for (size_t k = 0; k < d && le; ++k) {
        le = f.values[k] <= p.values[k];
        lt |= f.values[k] < p.values[k];
      }
      if (le && lt) {
        dominated = true;
        break;
      }
    }
    if (!dominated) front.push_back(std::move(p));
  }
  for (SweepPick& p : front) {
    for (size_t k = 0; k < d; ++k) {
      if (maximize[k]) p.values[k] = -p.values[k];
    }
  }
  return front;
}

namespace {

StatusOr<std::vector<HeadlineColumn>> PickColumns(sqlite3* db, const std::string& path,
                                                  const std::vector<std::string>& names,
                                                  const std::string& flag) {
  NDT_ASSIGN_OR_RETURN(std::string command, Meta(db, path, "command"));
  const std::vector<HeadlineColumn> all = HeadlineColumns(command);
  std::vector<HeadlineColumn> out;
  for (const std::string& n : names) {
    auto it =
        std::find_if(all.begin(), all.end(), [&](const HeadlineColumn& c) { return c.name == n; });
    if (it == all.end()) {
      std::string valid;
      for (const HeadlineColumn& c : all) valid += (valid.empty() ? "" : ", ") + c.name;
      return Status::InvalidInput(flag + ": '" + n + "' is not a column of a " + command +
                                  " sweep; use one of: " + (valid.empty() ? "(none)" : valid));
    }
    out.push_back(*it);
  }
  return out;
}

StatusOr<std::vector<SweepPick>> Select(sqlite3* db, const std::string& path,
                                        const std::vector<HeadlineColumn>& cols,
                                        const std::string& tail) {
  std::string sql = "SELECT id, params";
  std::string where = " FROM results WHERE status = 'ok'";
  for (const HeadlineColumn& c : cols) {
    sql += ", " + c.name;
    where += " AND " + c.name + " IS NOT NULL";
  }
  NDT_ASSIGN_OR_RETURN(Stmt s, Prepare(db, path, sql + where + tail));
  std::vector<SweepPick> out;
  while (sqlite3_step(s.get()) == SQLITE_ROW) {
    SweepPick p;
    p.id = sqlite3_column_int64(s.get(), 0);
    p.params = reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1));
    for (size_t k = 0; k < cols.size(); ++k) {
      p.values.push_back(sqlite3_column_double(s.get(), static_cast<int>(2 + k)));
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<SweepPick>> QueryPareto(const std::string& path,
                                             const std::vector<std::string>& columns) {
  if (columns.size() < 2 || columns.size() > 3) {
    return Status::InvalidInput("--pareto takes two or three columns (e.g. step_time_s,cost_usd)");
  }
  NDT_ASSIGN_OR_RETURN(Db db, OpenDb(path, false));
  NDT_ASSIGN_OR_RETURN(std::vector<HeadlineColumn> cols,
                       PickColumns(db.get(), path, columns, "--pareto"));
  NDT_ASSIGN_OR_RETURN(std::vector<SweepPick> all, Select(db.get(), path, cols, ""));
  std::vector<bool> maximize;
  for (const HeadlineColumn& c : cols) maximize.push_back(c.maximize);
  return ParetoFrontier(std::move(all), maximize);
}

StatusOr<std::vector<SweepPick>> QueryTop(const std::string& path, const std::string& column,
                                          int k) {
  if (k < 1) return Status::InvalidInput("--top must be >= 1");
  NDT_ASSIGN_OR_RETURN(Db db, OpenDb(path, false));
  NDT_ASSIGN_OR_RETURN(std::vector<HeadlineColumn> cols,
                       PickColumns(db.get(), path, {column}, "--by"));
  return Select(db.get(), path, cols,
                " ORDER BY " + column + (cols[0].maximize ? " DESC" : " ASC") + ", id LIMIT " +
                    std::to_string(k));
}

}  // namespace ndt
