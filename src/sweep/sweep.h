// File: sweep/sweep.h
// Sweeps: one registry command run over a user's space of flag values, every point one row of a
// SQLite database (issue 21). The pieces, each usable alone:
//   - the spec (YAML): the command, its fixed flags, a grid (cartesian product) and a zip (lists
//     varied together), and the fidelity; every key an option of the command;
//   - the enumeration: point `id` in [0, points) is a mixed-radix number whose digits are, most
//     significant first, the grid keys in the spec's order, then the zip index (so the last grid
//     key varies fastest before the zip, like nested loops written in the spec's order);
//   - the store: table results(id, params, status, error, result, <headline columns>, warnings,
//     warning_list) in WAL mode, committed in batches, so a killed run loses at most the batch in
//     flight and --resume finishes the missing ids; `warnings` counts the point's warnings (what
//     the command alone prints as "ndtwin: warning: ..."), `warning_list` holds them as a JSON
//     array (NULL when none);
//   - the runner: OpenMP threads over a batch of ids, rows written in id order; with MPI (built
//     with NDT_MPI and launched by mpirun or srun), rank 0 hands out batches and writes the
//     database while the other ranks evaluate. Every row depends on its id alone, so the table
//     is the same for 1 thread, N threads and N ranks;
//   - the queries: the Pareto frontier over two or three headline columns, the top K by one.
// The library never knows a command: the caller passes the option names and a function that
// runs one point (cmd/sweep.cc binds them to the registry's RunJson).
#ifndef NDTWIN_SWEEP_SWEEP_H_
#define NDTWIN_SWEEP_SWEEP_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// The largest space a spec may describe.
constexpr uint64_t kMaxSweepPoints = 1000000000;

struct SweepAxis {
  std::string key;           // the option, dashed ("tp-overlap")
  std::vector<Json> values;  // non-empty
};

struct SweepSpec {
  std::string command;          // "train", "plan train"
  Json fixed = Json::object();  // option -> value, the spec's order (fidelity folded in)
  std::vector<SweepAxis> grid;  // the spec's order
  std::vector<SweepAxis> zip;   // all of one length
  uint64_t points = 0;
  // The spec as canonical JSON (what the database records, and --resume compares).
  Json ToJson() const;
};

// The options a command takes (dashed names), or kNotFound for an unknown command.
using OptionNamesFn = std::function<StatusOr<std::vector<std::string>>(const std::string& command)>;

// Parses a spec. Errors are one kInvalidInput line naming the key ("sweep spec: grid.tpp: not
// an option of train; valid: ..."): unknown top-level keys, unknown options, a key given twice,
// an empty list, zip lists of different lengths, a space over kMaxSweepPoints.
StatusOr<SweepSpec> ParseSweepSpec(const std::string& yaml_text, const OptionNamesFn& options_of);

// The flags of point `id` (REQUIRES: id < spec.points): fixed, then grid, then zip keys.
Json SweepPoint(const SweepSpec& spec, uint64_t id);
// A point as canonical JSON: keys sorted, no spaces.
std::string CanonicalJson(const Json& j);

// CanonicalJson(SweepPoint(spec, id)) without building either document: each key's text is
// rendered once, a point only joins them (what a sweep stores as params).
class SweepParams {
 public:
  explicit SweepParams(const SweepSpec& spec);
  std::string Of(uint64_t id) const;
  // The index into each grid axis (the spec's order), then the zip index: SweepPoint's digits.
  void Digits(uint64_t id, std::vector<size_t>* digits) const;

 private:
  struct Part {
    std::string head;  // "\"key\":" or the whole "\"key\":value" of a fixed key
    int axis = -1;     // -1: fixed; else the grid axis, or grid.size() + zip axis
  };
  std::vector<Part> parts_;                     // sorted by key
  std::vector<std::vector<std::string>> text_;  // per axis (grid, then zip): each value's text
  std::vector<uint64_t> radix_;                 // per grid axis
  uint64_t zip_n_ = 0;
};

// A headline column: a number taken from the command's JSON by a JSON pointer, and which way is
// better (for --pareto and --top).
struct HeadlineColumn {
  std::string name;     // the SQLite column: "step_time_s"
  std::string pointer;  // in the command's JSON: "/memory/peak_bytes_per_gpu"
  bool maximize = false;
};
// The columns of a command (empty for commands without a mapping). See README "Sweeps".
std::vector<HeadlineColumn> HeadlineColumns(const std::string& command);
// The headline columns `names` of `command`, in that order, or one kInvalidInput line naming
// `flag` and the first name that is not one ("--by: 'speed' is not a column of a train sweep;
// use one of: ..."). `ndtwin sweep` checks --pareto and --by with it before running any point.
StatusOr<std::vector<HeadlineColumn>> FindHeadlineColumns(const std::string& command,
                                                          const std::vector<std::string>& names,
                                                          const std::string& flag);

// One evaluated point.
struct SweepRow {
  uint64_t id = 0;
  std::string params;  // CanonicalJson(SweepPoint(spec, id))
  bool ok = false;
  std::string error;   // the command's one-line message when !ok
  std::string result;  // the command's --json document (dump(2)); empty in summary mode
  std::vector<std::optional<double>> values;  // per headline column; nullopt: absent/not finite
  std::vector<std::string> warnings;          // the command's, in the order it gave them
};

// Runs one point: the command's JSON document, or its error. Must be safe to call from several
// threads at once. (No warnings: a runner gives them, PointRunner.)
using PointFn = std::function<StatusOr<Json>(const Json& args)>;

enum class SweepStore { kFull, kSummary };
bool ParseSweepStore(const std::string& s, SweepStore* out);

SweepRow EvaluatePoint(const SweepSpec& spec, uint64_t id, const PointFn& fn,
                       const std::vector<HeadlineColumn>& columns, SweepStore store);

// Runs the points one thread is given (RunSweep makes one per thread, so it may keep state from
// point to point: a bound request, a cache).
class PointRunner {
 public:
  virtual ~PointRunner() = default;
  // The command's JSON document for point `id` of the spec (its flags: SweepPoint), or its error;
  // its warnings appended to *warnings (REQUIRES: not null), in the order the command gave them
  // (a point's alone: the same on any thread or rank).
  virtual StatusOr<Json> Run(uint64_t id, std::vector<std::string>* warnings) = 0;
  // With --store summary, a command may give the headline values without building its document:
  // true and *values (per column, nullopt where the document has no finite number) or *error,
  // and *warnings; each exactly what Run's document (or error) and warnings give. false: not
  // provided; Run is used.
  virtual bool Summary(uint64_t id, std::vector<std::optional<double>>* values, Status* error,
                       std::vector<std::string>* warnings) {
    (void)id;
    (void)values;
    (void)error;
    (void)warnings;
    return false;
  }
};
using RunnerFactory = std::function<std::unique_ptr<PointRunner>()>;

struct SweepOptions {
  int threads = 0;  // OpenMP threads; 0: all cores
  SweepStore store = SweepStore::kFull;
  bool resume = false;
  uint64_t batch = 0;  // points per commit; 0: 2,048 per thread
  // Called after each committed batch with (done, total) on the writing process.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Test hook: stop (as if killed) after this many batches were committed; 0: never.
  uint64_t stop_after_batches = 0;
};

struct SweepStats {
  uint64_t points = 0;          // in the space
  uint64_t resumed = 0;         // already in the database when this run began
  uint64_t evaluated = 0;       // by this run
  uint64_t ok = 0, errors = 0;  // in the whole table at the end
  uint64_t warned = 0;          // of those, points with warnings
  int threads = 1;
  int ranks = 1;
  bool writer = true;  // false on MPI ranks other than 0: they print nothing
  double seconds = 0;
};

// Runs the sweep into the database at `path` (created; with options.resume it must hold the same
// spec and store mode, and only the missing ids run). Without resume an existing file is an
// error.
StatusOr<SweepStats> RunSweep(const SweepSpec& spec, const PointFn& fn, const std::string& path,
                              const SweepOptions& options);
// The same with a runner per thread (`make` is called once per thread, on the calling thread).
StatusOr<SweepStats> RunSweep(const SweepSpec& spec, const RunnerFactory& make,
                              const std::string& path, const SweepOptions& options);

// A row of a query: id, params and the asked columns.
struct SweepPick {
  uint64_t id = 0;
  std::string params;
  std::vector<double> values;
  std::vector<std::string> warnings;  // the point's (SweepRow::warnings)
};

// The Pareto frontier of points (better per `maximize`): a point is on it when no other point is
// at least as good in every value and better in one. Returned sorted by the first value (best
// first), then the next values, then id.
std::vector<SweepPick> ParetoFrontier(std::vector<SweepPick> points,
                                      const std::vector<bool>& maximize);

// Reads the ok rows with all `columns` present from the database and returns their frontier.
// Columns must be headline columns of the spec's command (kInvalidInput naming the one that is
// not).
StatusOr<std::vector<SweepPick>> QueryPareto(const std::string& path,
                                             const std::vector<std::string>& columns);
// The best k ok rows by `column` (its better direction), ties by id.
StatusOr<std::vector<SweepPick>> QueryTop(const std::string& path, const std::string& column,
                                          int k);

}  // namespace ndt

#endif  // NDTWIN_SWEEP_SWEEP_H_
