// File: cmd/sweep.cc
// `ndtwin sweep SPEC.yaml --out FILE.sqlite`: runs a registry command over the space a spec
// describes into SQLite (sweep/sweep.h), then prints a summary, the Pareto frontier (--pareto)
// and the best rows (--top K --by COLUMN). Each point is RunJson of the spec's command, so a row's
// result is exactly that command's --json document. Under mpirun/srun only rank 0 prints.
#include "sweep/sweep.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "cmd/train_job.h"
#include "fleet/fleet.h"
#include "report/sweep_render.h"

namespace ndt {
namespace {

// ---- Points without per-point JSON -----------------------------------------------------------
// A sweep's points differ only in the spec's grid and zip keys. Each thread binds the fixed keys
// once into its own request and, per point, only the varied ones (restoring each first, so a
// null value means the default as in BindJson), then checks the ranges. Where the result could
// differ from binding the whole point (a fixed key that does not bind, a required option left
// null), the point takes the general path: RunJson of SweepPoint.

// A field's value, to restore before a point binds it.
using FieldValue =
    std::variant<int, int64_t, uint64_t, double, std::string, bool, std::vector<std::string>,
                 std::optional<int>, std::optional<int64_t>, std::optional<double>,
                 std::optional<std::string>, std::optional<bool>>;

FieldValue Snapshot(const OptionField& f) {
  return std::visit([](auto* p) { return FieldValue(*p); }, f);
}
void Restore(const FieldValue& v, const OptionField& f) {
  std::visit([&](auto* p) { *p = std::get<std::remove_pointer_t<decltype(p)>>(v); }, f);
}

class BoundRequest {
 public:
  BoundRequest(const Command& cmd, std::unique_ptr<CommandRequest> req, const SweepSpec& spec,
               const SweepParams& params)
      : cmd_(cmd), req_(std::move(req)), params_(params) {
    req_->Declare(&options_);
    std::vector<std::string> required;
    for (Option& o : options_.options()) {
      if (o.required) required.push_back(o.name);
      o.required = false;  // checked below, against fixed and the point's values
    }
    general_ = !BindJson(spec.fixed, &options_, cmd.name).ok();
    std::vector<const SweepAxis*> axes;
    for (const SweepAxis& a : spec.grid) axes.push_back(&a);
    for (const SweepAxis& a : spec.zip) axes.push_back(&a);
    for (const SweepAxis* a : axes) {
      Axis x;
      Option* o = options_.Find(a->key);
      if (o == nullptr) {
        general_ = true;
        break;
      }
      x.field = o->field;
      x.initial = Snapshot(o->field);
      // Each value bound once here: a point restores the field to what binding it gave (the
      // same as binding it again: BindJson of {key: value} sets only that field).
      for (const Json& v : a->values) {
        x.null.push_back(v.is_null());
        Status s;
        if (!v.is_null()) s = BindJson(Json::object({{a->key, v}}), &options_, cmd.name);
        x.bound.push_back(Snapshot(o->field));
        x.status.push_back(s);
        Restore(x.initial, x.field);
      }
      axes_.push_back(std::move(x));
    }
    for (const std::string& r : required) {
      auto fixed = spec.fixed.find(r);
      if (fixed != spec.fixed.end() && !fixed->is_null()) continue;
      int axis = -1;
      for (size_t k = 0; k < axes.size(); ++k) {
        if (axes[k]->key == r) axis = static_cast<int>(k);
      }
      if (axis < 0) general_ = true;  // every point lacks it: the general path says so
      required_axes_.push_back(axis);
    }
  }

  // Binds point `id`; false: take the general path (RunJson of the whole point).
  bool Bind(uint64_t id, Status* error) {
    if (general_) return false;
    params_.Digits(id, &digits_);
    for (int a : required_axes_) {
      if (axes_[a].null[digits_[a]]) return false;
    }
    *error = Status::Ok();
    for (size_t k = 0; k < axes_.size(); ++k) {
      const Axis& a = axes_[k];
      const size_t d = digits_[k];
      if (!a.status[d].ok()) {
        *error = a.status[d];
        return true;
      }
      Restore(a.bound[d], a.field);
    }
    *error = CheckRanges(options_);
    return true;
  }
  const CommandRequest& request() const { return *req_; }
  template <typename T>
  const T& as() const {
    return static_cast<const T&>(*req_);
  }

 private:
  struct Axis {
    OptionField field;
    FieldValue initial;
    std::vector<FieldValue> bound;  // per value: the field after binding it (initial if null)
    std::vector<Status> status;     // per value: BindJson's
    std::vector<bool> null;
  };
  const Command& cmd_;
  std::unique_ptr<CommandRequest> req_;
  const SweepParams& params_;
  OptionList options_;
  std::vector<Axis> axes_;
  std::vector<int> required_axes_;
  std::vector<size_t> digits_;
  bool general_ = false;
};

// The general runner: the command's own request, bound as above, run as RunJson runs it.
class CommandRunner : public PointRunner {
 public:
  CommandRunner(const Command& cmd, const Context& ctx, const SweepSpec& spec,
                const SweepParams& params)
      : cmd_(cmd), ctx_(ctx), spec_(spec), bound_(cmd, cmd.new_request(), spec, params) {}
  StatusOr<Json> Run(uint64_t id, std::vector<std::string>* warnings) override {
    Diagnostics d;  // the point's warnings go to its row; notes and progress are not kept
    StatusOr<Json> out = RunPoint(id, &d);
    warnings->insert(warnings->end(), d.warnings.begin(), d.warnings.end());
    return out;
  }

 private:
  StatusOr<Json> RunPoint(uint64_t id, Diagnostics* d) {
    Status bind;
    if (!bound_.Bind(id, &bind)) {
      NDT_ASSIGN_OR_RETURN(CommandOutput out, RunJson(cmd_, ctx_, SweepPoint(spec_, id), d));
      return std::move(out.json);
    }
    NDT_RETURN_IF_ERROR(bind);
    NDT_ASSIGN_OR_RETURN(CommandOutput out, cmd_.run(ctx_, bound_.request(), d));
    return std::move(out.json);
  }

 private:
  const Command& cmd_;
  const Context& ctx_;
  const SweepSpec& spec_;
  BoundRequest bound_;
};

// ---- train --store summary: the headline numbers without the document --------------------------

// What the runners of one sweep share: the models and clusters (TrainJobCache) and the Contexts
// with --price-per-hour applied, one per distinct list.
class SweepShared {
 public:
  explicit SweepShared(const Context& ctx) : ctx_(ctx) {}
  TrainJobCache cache;
  StatusOr<const Context*> Priced(const PriceArgs& prices) {
    if (prices.prices.empty()) return &ctx_;
    std::string key;
    for (const std::string& p : prices.prices) key += p + '\n';
    std::lock_guard<std::mutex> lock(mu_);
    auto it = priced_.find(key);
    if (it == priced_.end()) {
      Entry e;
      std::optional<Context> holder;
      StatusOr<const Context*> c = prices.Apply(ctx_, &holder);
      if (!c.ok()) {
        e.status = c.status();
      } else {
        e.ctx = std::make_unique<Context>(std::move(*holder));
      }
      it = priced_.emplace(key, std::move(e)).first;
    }
    if (!it->second.status.ok()) return it->second.status;
    return it->second.ctx.get();
  }

 private:
  struct Entry {
    Status status;
    std::unique_ptr<Context> ctx;
  };
  const Context& ctx_;
  std::mutex mu_;
  std::map<std::string, Entry> priced_;
};

// The headline columns of train (sweep/spec.cc HeadlineColumns("train")) from its report: the
// numbers train's --json document holds at those places (cmd/train.cc), nullopt where it has
// none or a number that is not finite.
std::vector<std::optional<double>> TrainHeadline(const SimulatedTrainJob& run) {
  const TrainReport& r = run.report;
  const TrainJob& job = run.job;
  auto finite = [](double v) -> std::optional<double> {
    if (!std::isfinite(v)) return std::nullopt;
    return v;
  };
  std::vector<std::optional<double>> v = {
      finite(r.sim.step_time_s),      finite(r.tokens_per_s), finite(r.mfu),
      finite(r.memory.total_bytes()), std::nullopt,           std::nullopt};
  if (job.tokens > 0) {
    v[4] = finite(r.time_to_train_s);
    if (job.vm_usd_per_hour > 0) v[5] = finite(r.cost_usd);
  }
  return v;
}

// `train` points, bound as above and simulated with the shared cache. --store summary takes the
// headline numbers from the report, following the steps of RunTrain (cmd/train.cc) that can fail
// or that the columns depend on: the prices, the simulation, the placement. --store full renders
// the document with train's own code (TrainJobJson) after the same prices.
class TrainRunner : public CommandRunner {
 public:
  TrainRunner(const Command& cmd, const Context& ctx, const SweepSpec& spec,
              const SweepParams& params, SweepShared* shared)
      : CommandRunner(cmd, ctx, spec, params),
        shared_(shared),
        typed_(cmd, std::make_unique<TrainPointRequest>(), spec, params) {}
  StatusOr<Json> Run(uint64_t id, std::vector<std::string>* warnings) override {
    Status bind;
    if (!typed_.Bind(id, &bind)) return CommandRunner::Run(id, warnings);
    NDT_RETURN_IF_ERROR(bind);
    Diagnostics d;  // the point's warnings go to its row
    StatusOr<Json> out = Document(typed_.as<TrainPointRequest>(), &d);
    warnings->insert(warnings->end(), d.warnings.begin(), d.warnings.end());
    return out;
  }
  bool Summary(uint64_t id, std::vector<std::optional<double>>* values, Status* error,
               std::vector<std::string>* warnings) override {
    Status bind;
    if (!typed_.Bind(id, &bind)) return false;
    Diagnostics d;
    *error = Point(typed_.as<TrainPointRequest>(), bind, values, &d);
    warnings->insert(warnings->end(), d.warnings.begin(), d.warnings.end());
    return true;
  }

 private:
  StatusOr<Json> Document(const TrainPointRequest& f, Diagnostics* d) {
    NDT_ASSIGN_OR_RETURN(const Context* ctx, shared_->Priced(f.job.prices));
    return TrainJobJson(*ctx, f.job, d, &shared_->cache);
  }
  // The same warnings as the document's path: SimulateTrainJob gives them all (TrainJobJson adds
  // none of its own).
  Status Point(const TrainPointRequest& f, const Status& bind,
               std::vector<std::optional<double>>* values, Diagnostics* d) {
    NDT_RETURN_IF_ERROR(bind);
    NDT_ASSIGN_OR_RETURN(const Context* ctx, shared_->Priced(f.job.prices));
    NDT_ASSIGN_OR_RETURN(SimulatedTrainJob run,
                         SimulateTrainJob(*ctx, f.job, false, d, &shared_->cache));
    const int vms = run.job.num_gpus / run.job.gpus_per_vm;
    NDT_RETURN_IF_ERROR(PlanPlacement(ctx->fleet.placement, *run.sku, vms, 0, false).status());
    *values = TrainHeadline(run);
    return Status::Ok();
  }

  SweepShared* shared_;
  BoundRequest typed_;
};

// The runners of a sweep: the typed train path where it applies, else the general one.
RunnerFactory Runners(const Command& cmd, const Context& ctx, const SweepSpec& spec,
                      const SweepParams& params, SweepShared* shared) {
  bool typed = false;
  if (cmd.name == "train") {
    TrainPointRequest mine;
    typed = SameOptions(mine, *cmd.new_request());
  }
  return [&cmd, &ctx, &spec, &params, shared, typed]() -> std::unique_ptr<PointRunner> {
    if (typed) return std::make_unique<TrainRunner>(cmd, ctx, spec, params, shared);
    return std::make_unique<CommandRunner>(cmd, ctx, spec, params);
  };
}

// ---- The command ----------------------------------------------------------------------------

struct SweepRequest : CommandRequest {
  std::string spec;
  std::string out;
  bool resume = false;
  int threads = 0;
  std::string store = "full";
  std::string pareto;
  int top = 0;
  std::string by;

  void Declare(OptionList* o) override {
    o->Add("spec", &spec, "The sweep spec (YAML: command, fixed, grid, zip, fidelity)")
        .Required()
        .Positional()
        .LocalFile();
    o->Add("out", &out, "The SQLite database to write (FILE.sqlite)").Required().LocalFile();
    o->Add("resume", &resume, "Finish the missing points of an interrupted --out");
    o->Add("threads", &threads, "OpenMP threads per process (default: all cores)")
        .Range(0, kMaxThreads, "0 or omitted for all cores");
    o->Add("store", &store, "full (the whole --json document per row; default) | summary");
    o->Add("pareto", &pareto, "Print the Pareto frontier over 2 or 3 columns (a,b[,c])");
    o->Add("top", &top, "Print the best K rows (with --by)");
    o->Add("by", &by, "The column --top ranks by");
  }
};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string x;
  while (std::getline(in, x, ',')) {
    if (!x.empty()) out.push_back(x);
  }
  return out;
}

StatusOr<CommandOutput> RunSweepCommand(const Context& ctx, const SweepRequest& f,
                                        Diagnostics* diag) {
  SweepStore store;
  if (!ParseSweepStore(f.store, &store)) {
    return Status::InvalidInput("--store '" + f.store + "'; use full or summary");
  }
  const std::vector<std::string> pareto = Split(f.pareto);
  if (!f.pareto.empty() && (pareto.size() < 2 || pareto.size() > 3)) {
    return Status::InvalidInput("--pareto takes two or three columns (e.g. step_time_s,cost_usd)");
  }
  if ((f.top > 0) != !f.by.empty() || f.top < 0) {
    return Status::InvalidInput("--top K and --by COLUMN go together (K >= 1)");
  }
  // A folder opens as a stream that reads nothing: it was "must be a mapping".
  std::error_code ec;
  if (std::filesystem::is_directory(f.spec, ec)) {
    return Status::InvalidInput("--spec: '" + f.spec +
                                "' is a directory; give the sweep's YAML file");
  }
  std::ifstream in(f.spec);
  if (!in) return Status::NotFound("--spec: cannot read '" + f.spec + "'");
  std::stringstream text;
  text << in.rdbuf();
  const OptionNamesFn options_of =
      [](const std::string& name) -> StatusOr<std::vector<std::string>> {
    const Command* c = FindCommand(name);
    if (c == nullptr) {
      std::string valid;
      for (const Command& x : Registry()) {
        if (x.name != "sweep") valid += (valid.empty() ? "" : ", ") + x.name;
      }
      return Status::NotFound("unknown command '" + name + "'; use one of: " + valid);
    }
    std::unique_ptr<CommandRequest> req = c->new_request();
    OptionList o;
    req->Declare(&o);
    std::vector<std::string> names;
    for (const Option& x : o.options()) {
      // No point writes or reads files, and a sweep stores no report's chart data.
      if (!x.local_file && !x.for_report) names.push_back(x.name);
    }
    return names;
  };
  NDT_ASSIGN_OR_RETURN(SweepSpec spec, ParseSweepSpec(text.str(), options_of));
  // The columns asked for, before any point runs: a name that is not one was an error only after
  // the whole sweep had run (and written --out, so the same command then refused to start).
  if (!pareto.empty()) {
    NDT_RETURN_IF_ERROR(FindHeadlineColumns(spec.command, pareto, "--pareto").status());
  }
  if (f.top > 0) NDT_RETURN_IF_ERROR(FindHeadlineColumns(spec.command, {f.by}, "--by").status());
  const Command* cmd = FindCommand(spec.command);
  const SweepParams params(spec);
  SweepShared shared(ctx);
  const RunnerFactory runners = Runners(*cmd, ctx, spec, params, &shared);
  SweepOptions opt;
  opt.threads = f.threads;
  opt.store = store;
  opt.resume = f.resume;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t first = 0;
  bool started = false;
  if (tty) {
    opt.progress = [&](uint64_t done, uint64_t total) {
      if (!started) {
        started = true;
        first = done;
      }
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const double rate = s > 0 ? static_cast<double>(done - first) / s : 0;
      const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0;
      std::fprintf(stderr, "\rsweep: %llu/%llu (%.1f%%), %.0f points/s, ETA %.0f s   ",
                   static_cast<unsigned long long>(done), static_cast<unsigned long long>(total),
                   100.0 * static_cast<double>(done) / static_cast<double>(total), rate, eta);
      if (done == total) std::fprintf(stderr, "\n");
    };
  }
  NDT_ASSIGN_OR_RETURN(SweepStats st, RunSweep(spec, runners, f.out, opt));
  if (!st.writer) return CommandOutput{Json(), ""};  // an MPI worker: rank 0 reports
  // The time and rate go to a terminal's stderr only, as the progress bar: stdout, --json and logs
  // stay the same from run to run.
  char rate[160];
  std::snprintf(rate, sizeof rate, "sweep: %llu points in %.2f s, %.0f points/s",
                static_cast<unsigned long long>(st.evaluated), st.seconds,
                st.seconds > 0 ? static_cast<double>(st.evaluated) / st.seconds : 0.0);
  if (tty) diag->Progress(rate);
  if (st.warned > 0) {
    diag->Note(
        fmt::format("sweep: {} of {} points have warnings; see the warnings column (their "
                    "text: warning_list in {})",
                    st.warned, st.points, f.out));
  }
  std::vector<SweepPick> front, best;
  if (!pareto.empty()) {
    NDT_ASSIGN_OR_RETURN(front, QueryPareto(f.out, pareto));
  }
  if (f.top > 0) {
    NDT_ASSIGN_OR_RETURN(best, QueryTop(f.out, f.by, f.top));
  }
  const SweepView v{spec, f.out, f.store, st, pareto, f.pareto, front, f.top, f.by, best};
  return CommandOutput{SweepJson(v), SweepText(v)};
}

}  // namespace

Command SweepCommand() {
  return MakeCommand<SweepRequest>(
      "sweep", "Run a command over a space of flags into SQLite; Pareto frontier and top K",
      RunSweepCommand);
}

}  // namespace ndt
