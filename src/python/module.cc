// File: python/module.cc
// ndtwin._core: the Python door over the registry of commands (cmd/command.h). It exposes the
// commands with their options (name, help, type, default, required) and call(name, json_args),
// which runs RunJson on a Context loaded once per data directory, with the GIL released and
// the options spelled the Python way ("tp=" for "--tp"). The Python package (python/ndtwin/)
// turns the registry into functions and results; nothing here knows a command.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "hw/catalog.h"

namespace py = pybind11;

namespace ndt {
namespace {

// "min-bytes" -> "min_bytes=": how Python spells an option in messages.
std::string PythonSpelling(const std::string& option) {
  std::string s = option;
  for (char& c : s) {
    if (c == '-') c = '_';
  }
  return s + "=";
}

// The Contexts loaded so far, one per data directory ("" = the CLI's default). Loaded on first
// use and then shared read-only by every call (a Context is thread-safe once loaded).
class Contexts {
 public:
  StatusOr<std::shared_ptr<const Context>> Get(const std::string& data_dir) {
    const std::string dir = data_dir.empty() ? Catalog::DefaultDataDir() : data_dir;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = loaded_.find(dir);
    if (it != loaded_.end()) return it->second;
    StatusOr<Context> ctx = Context::Load(dir);
    if (!ctx.ok()) return ctx.status();
    auto shared = std::make_shared<const Context>(std::move(*ctx));
    loaded_[dir] = shared;
    return shared;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Context>> loaded_;
};

Contexts& TheContexts() {
  static Contexts* contexts = new Contexts();  // never destroyed: calls may outlive exit order
  return *contexts;
}

// The registry as JSON: [{name, help, options: [{name, help, type, default, required,
// positional, local_file}]}], in Registry() order.
std::string RegistryJson() {
  Json out = Json::array();
  for (const Command& c : Registry()) {
    std::unique_ptr<CommandRequest> req = c.new_request();
    OptionList options;
    req->Declare(&options);
    const Json defaults = OptionValues(options);
    Json opts = Json::array();
    for (const Option& o : options.options()) {
      opts.push_back(Json{{"name", o.name},
                          {"help", o.help},
                          {"type", o.type_name()},
                          {"default", defaults[o.name]},
                          {"required", o.required},
                          {"positional", o.positional},
                          {"local_file", o.local_file}});
    }
    out.push_back(Json{{"name", c.name}, {"help", c.help}, {"options", opts}});
  }
  return out.dump();
}

// The reason of a failed call, as Python's ndtwin.Error.code: "invalid_input", "not_found", ...
const char* CodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidInput:
      return "invalid_input";
    case StatusCode::kNotFound:
      return "not_found";
    case StatusCode::kInfeasible:
      return "infeasible";
    case StatusCode::kDoesNotFit:
      return "does_not_fit";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kSloUnmet:
      return "slo_unmet";
    case StatusCode::kInternal:
      return "internal";
  }
  return "internal";
}

// What call() returns to Python: (code, json_or_message, warnings, progress, notes). code "ok":
// the second field is the --json document dumped as the CLI dumps it (indent 2, no trailing
// newline); otherwise it is the one-line error and code names the reason (CodeName). notes: the
// lines the CLI always prints on stderr ("plan: note: ..."), which no --json document carries.
using CallResult = std::tuple<std::string, std::string, std::vector<std::string>,
                              std::vector<std::string>, std::vector<std::string>>;

CallResult Fail(const Status& s, const Diagnostics& diag) {
  return {CodeName(s.code()), s.message(), diag.warnings, diag.progress, diag.notes};
}

CallResult Call(const std::string& name, const std::string& args_json,
                const std::string& data_dir) {
  Diagnostics diag;
  const Command* cmd = FindCommand(name);
  if (cmd == nullptr) return Fail(Status::InvalidInput("unknown command '" + name + "'"), diag);
  try {
    const Json args = Json::parse(args_json);
    StatusOr<std::shared_ptr<const Context>> ctx = TheContexts().Get(data_dir);
    if (!ctx.ok()) return Fail(ctx.status(), diag);
    StatusOr<CommandOutput> out = RunJson(*cmd, **ctx, args, &diag, PythonSpelling);
    if (!out.ok()) return Fail(out.status(), diag);
    return {"ok", out->json.dump(2), diag.warnings, diag.progress, diag.notes};
  } catch (const std::exception& e) {
    return Fail(Status::Internal(name + ": " + e.what()), diag);
  }
}

// The C++ side alone, for measuring the Python door's overhead (BENCHMARKS.md): runs the
// command `repeat` times as call() does (parse, RunJson, dump) and returns the mean seconds.
double TimeCall(const std::string& name, const std::string& args_json, const std::string& data_dir,
                int repeat) {
  const Command* cmd = FindCommand(name);
  if (cmd == nullptr || repeat < 1) return -1;
  StatusOr<std::shared_ptr<const Context>> ctx = TheContexts().Get(data_dir);
  if (!ctx.ok()) return -1;
  const auto start = std::chrono::steady_clock::now();
  size_t bytes = 0;
  for (int i = 0; i < repeat; ++i) {
    Diagnostics diag;
    StatusOr<CommandOutput> out = RunJson(*cmd, **ctx, Json::parse(args_json), &diag);
    if (!out.ok()) return -1;
    bytes += out->json.dump(2).size();
  }
  const std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
  return bytes > 0 ? s.count() / repeat : -1;
}

}  // namespace
}  // namespace ndt

PYBIND11_MODULE(_core, m) {
  m.doc() = "ndtwin's C++ core: the registry of commands and a JSON call into it";
  m.attr("__version__") = NDT_VERSION;
  m.def("registry_json", &ndt::RegistryJson,
        "The commands and their options as a JSON string (Registry() order)");
  m.def("default_data_dir", &ndt::Catalog::DefaultDataDir,
        "The data directory the CLI uses without --hw-data ($NDTWIN_DATA or the built-in data/)");
  m.def("call", &ndt::Call, py::arg("name"), py::arg("args_json"), py::arg("data_dir") = "",
        py::call_guard<py::gil_scoped_release>(),
        "Runs a command from a JSON object of options; returns (code, json_or_message, "
        "warnings, progress, notes)");
  m.def("time_call", &ndt::TimeCall, py::arg("name"), py::arg("args_json"),
        py::arg("data_dir") = "", py::arg("repeat") = 1, py::call_guard<py::gil_scoped_release>(),
        "Mean seconds of the C++ side of call() (parse, RunJson, dump) over `repeat` runs");
}
