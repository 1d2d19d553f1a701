// File: cmd/sweep.cc
// `ndtwin sweep SPEC.yaml --out FILE.sqlite`: runs a registry command over the space a spec
// describes into SQLite (sweep/sweep.h), then prints a summary, the Pareto frontier (--pareto)
// and the best rows (--top K --by COLUMN). Each point is RunJson of the spec's command, so a row's
// result is exactly that command's --json document. Under mpirun/srun only rank 0 prints.
#include "sweep/sweep.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cmd/command.h"
#include "cmd/registry.h"
#include "report/sweep_render.h"

namespace ndt {
namespace {

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
    o->Add("threads", &threads, "OpenMP threads per process (default: all cores)");
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
  if (f.threads < 0) return Status::InvalidInput("--threads must be >= 0 (0: all cores)");
  const std::vector<std::string> pareto = Split(f.pareto);
  if (!f.pareto.empty() && (pareto.size() < 2 || pareto.size() > 3)) {
    return Status::InvalidInput("--pareto takes two or three columns (e.g. step_time_s,cost_usd)");
  }
  if ((f.top > 0) != !f.by.empty() || f.top < 0) {
    return Status::InvalidInput("--top K and --by COLUMN go together (K >= 1)");
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
      if (!x.local_file) names.push_back(x.name);  // no point writes or reads files
    }
    return names;
  };
  NDT_ASSIGN_OR_RETURN(SweepSpec spec, ParseSweepSpec(text.str(), options_of));
  const Command* cmd = FindCommand(spec.command);
  const PointFn fn = [cmd, &ctx](const Json& args) -> StatusOr<Json> {
    Diagnostics d;  // a point's warnings are not kept
    NDT_ASSIGN_OR_RETURN(CommandOutput out, RunJson(*cmd, ctx, args, &d));
    return std::move(out.json);
  };
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
  NDT_ASSIGN_OR_RETURN(SweepStats st, RunSweep(spec, fn, f.out, opt));
  if (!st.writer) return CommandOutput{Json(), ""};  // an MPI worker: rank 0 reports
  // The time and rate go to a terminal's stderr only, as the progress bar: stdout, --json and logs
  // stay the same from run to run.
  char rate[160];
  std::snprintf(rate, sizeof rate, "sweep: %llu points in %.2f s, %.0f points/s",
                static_cast<unsigned long long>(st.evaluated), st.seconds,
                st.seconds > 0 ? static_cast<double>(st.evaluated) / st.seconds : 0.0);
  if (tty) diag->Progress(rate);
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
