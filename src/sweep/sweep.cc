// File: sweep/sweep.cc
// The runner of sweep.h (OpenMP threads, MPI ranks); the store is store.cc, the queries query.cc.
#include "sweep/sweep.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef NDT_HAVE_MPI
#include <mpi.h>
#endif

#include "sweep/store.h"

namespace ndt {
namespace {

using sweep_detail::Store;

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
    PutU64(&b, r.warnings.size());
    for (const std::string& w : r.warnings) PutStr(&b, w);
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
    r.warnings.resize(GetU64(b, &at));
    for (std::string& w : r.warnings) w = GetStr(b, &at);
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
  StatusOr<Json> Run(uint64_t id, std::vector<std::string>* warnings) override {
    (void)warnings;
    return fn_(SweepPoint(spec_, id));
  }

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
  if (store == SweepStore::kSummary && runner.Summary(id, &r.values, &error, &r.warnings)) {
    r.ok = error.ok();
    if (!r.ok) {
      r.error = error.message();
      std::fill(r.values.begin(), r.values.end(), std::nullopt);
    }
    return r;
  }
  r.warnings.clear();
  StatusOr<Json> out = runner.Run(id, &r.warnings);
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

// Commits batches on its own thread, in the order given, while the caller's threads evaluate the
// next one: the evaluating threads neither wait for SQLite nor spin in OpenMP while it writes
// (issue 21: a quarter of the CPU of a 2-thread sweep). One batch waits at most.
class Writer {
 public:
  // `commit` returns false to stop (an error, or the test hook).
  explicit Writer(std::function<bool(const std::vector<SweepRow>&)> commit)
      : commit_(std::move(commit)), thread_([this] { Loop(); }) {}
  ~Writer() { Close(); }
  // Queues a batch; false when the writer has stopped (the batch is dropped).
  bool Push(std::vector<SweepRow> rows) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return queue_.empty() || stopped_; });
    if (stopped_) return false;
    queue_.push_back(std::move(rows));
    cv_.notify_all();
    return true;
  }
  // Writes what is queued and ends the thread.
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    for (;;) {
      std::vector<SweepRow> rows;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || closed_; });
        if (queue_.empty()) return;
        rows = std::move(queue_.front());
        queue_.pop_front();
      }
      cv_.notify_all();
      if (!commit_(rows)) {
        std::lock_guard<std::mutex> lock(mu_);
        stopped_ = true;
        queue_.clear();
        cv_.notify_all();
        return;
      }
    }
  }

  std::function<bool(const std::vector<SweepRow>&)> commit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<SweepRow>> queue_;
  bool closed_ = false, stopped_ = false;
  std::thread thread_;  // last: started once the rest is built
};

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
    for (const SweepRow& r : rows) stats.warned += r.warnings.empty() ? 0 : 1;
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
    Writer writer(commit);
    for (;;) {
      const std::vector<uint64_t> ids = NextBatch(done, batch, &next);
      if (ids.empty()) break;
      if (!writer.Push(EvaluateBatch(params, ids, runners, cols, options.store, stats.threads))) {
        break;
      }
    }
    writer.Close();
  }
  NDT_RETURN_IF_ERROR(status);
  NDT_RETURN_IF_ERROR((*opened)->Finish(cols));
  NDT_ASSIGN_OR_RETURN(auto counts, (*opened)->Counts());
  stats.ok = counts.first;
  stats.errors = counts.second;
  // Counted as the rows were written; a resumed run's earlier rows need the table (one scan).
  if (stats.resumed > 0) {
    NDT_ASSIGN_OR_RETURN(stats.warned, (*opened)->Warned());
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return stats;
}

}  // namespace ndt
