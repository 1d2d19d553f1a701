#include "cli/cli.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "cmd/command.h"
#include "report/html.h"
#include "web/server.h"

namespace ndt {
namespace {

// Commands with a second word ("sku list") hang under a group; a group alone is an error that
// names its subcommands.
struct Group {
  const char* name;
  const char* help;
  const char* missing;  // the error when no subcommand is given
};
const Group kGroups[] = {
    {"sku", "List and show Azure GPU VM sizes (the hardware catalog)",
     "sku needs a subcommand: 'sku list' or 'sku show NAME'"},
    {"model", "List and show transformer model presets",
     "model needs a subcommand: 'model list' or 'model show NAME'"},
    {"plan", "Search VM sizes and strategies: for training (plan train) or serving (plan infer)",
     "plan needs a subcommand: 'plan train --model M --gbs B ...' or 'plan infer --model M "
     "...'"},
};

// Every floating-point flag must be a finite number: "inf", "nan" or 1e999 would run the model
// on a value no hardware or workload has (and some loops never end on them).
void RequireFinite(CLI::App* app) {
  CLI::Validator finite(
      [](std::string& v) {
        double x = std::strtod(v.c_str(), nullptr);
        return std::isfinite(x) ? std::string() : "'" + v + "' is not a finite number";
      },
      "");
  for (CLI::Option* o : app->get_options()) {
    if (o->get_type_name() == "FLOAT") o->check(finite);
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) RequireFinite(sub);
}

// An integer flag must be a whole decimal number its field holds: CLI11 alone saturates
// "99999999999999999999" to the type's maximum and wraps "-1" into a uint64_t, so a typo would
// run as 2^63 - 1 or a seed of 2^64 - 1.
template <typename T>
CLI::Validator StrictInteger() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const char* b = v.data();
        const char* e = b + v.size();
        if (b != e && *b == '+') ++b;
        T x{};
        auto [p, ec] = std::from_chars(b, e, x);
        if (ec == std::errc() && p == e && b != e) return "";
        // An unsigned field (a seed) cannot hold "-1": say so ("not a whole number" misled).
        if (std::is_unsigned_v<T> && b != e && *b == '-') {
          return "'" + v + "' is negative; it takes a whole number >= 0";
        }
        if (ec == std::errc::result_out_of_range) {
          return "'" + v + "' is out of range (" + std::to_string(std::numeric_limits<T>::min()) +
                 ".." + std::to_string(std::numeric_limits<T>::max()) + ")";
        }
        return "'" + v + "' is not a whole number";
      },
      "");
}

// A flag's value (--sp=false) must be one CLI11 reads as true or false: its own reading threw
// std::invalid_argument past the parser for "--sp=maybe" (CLI11 2.1), which aborted the run.
CLI::Validator FlagValue() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          (void)CLI::detail::to_flag_value(v);
          return "";
        } catch (const std::exception&) {
          return "'" + v + "' is not true or false";
        }
      },
      "");
}

// One option of the registry as a CLI11 flag bound to its field.
void AddCliOption(CLI::App* sub, Option& o) {
  const std::string flag = o.positional ? o.name : "--" + o.name;
  CLI::Option* added = std::visit(
      [&](auto* p) -> CLI::Option* {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, bool>) {
          return sub->add_flag(flag, *p, o.help);
        } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
          // `--flag` sets true; `--flag=false` (CLI11 passes a negative count) sets false, so a
          // knob a --stack turns on can be turned off from the command line.
          return sub->add_flag_function(
              flag, [p](std::int64_t n) { *p = n > 0; }, o.help);
        } else if constexpr (std::is_same_v<T, std::optional<int>> ||
                             std::is_same_v<T, std::optional<int64_t>> ||
                             std::is_same_v<T, std::optional<double>> ||
                             std::is_same_v<T, std::optional<std::string>>) {
          using V = typename T::value_type;
          return sub->add_option_function<V>(
              flag, [p](const V& v) { *p = v; }, o.help);
        } else {
          return sub->add_option(flag, *p, o.help);
        }
      },
      o.field);
  if (o.required) added->required();
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) {
          added->check(FlagValue());
        } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t> ||
                             std::is_same_v<T, uint64_t>) {
          added->check(StrictInteger<T>());
        } else if constexpr (std::is_same_v<T, std::optional<int>> ||
                             std::is_same_v<T, std::optional<int64_t>>) {
          added->check(StrictInteger<typename T::value_type>());
        }
      },
      o.field);
}

// A command's request, bound to its CLI11 subcommand.
struct Bound {
  const Command* cmd;
  std::unique_ptr<CommandRequest> request;
  OptionList options;
  CLI::App* app;
};

}  // namespace

// One line, whatever a message carries (a YAML or JSON parser's text may hold line breaks).
std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

// The error: the last line on stderr, with nothing on stdout (stdout is written only after
// a command succeeds).
int Fail(const Status& s) {
  std::fflush(stderr);
  std::fprintf(stderr, "ndtwin: error: %s\n", OneLine(s.message()).c_str());
  return s.exit_code();
}

void Warn(const std::string& msg) {
  std::fprintf(stderr, "ndtwin: warning: %s\n", OneLine(msg).c_str());
}

// Diagnostics straight to stderr, in the order the command emits them.
class StderrDiagnostics : public Diagnostics {
 public:
  void Warn(const std::string& msg) override {
    ndt::Warn(msg);
    warnings.push_back(msg);  // for the --report page
  }
  explicit StderrDiagnostics(bool progress) : progress_(progress) {}
  void Note(const std::string& line) override { std::fprintf(stderr, "%s\n", line.c_str()); }
  void Progress(const std::string& line) override {
    if (progress_) std::fprintf(stderr, "%s\n", line.c_str());
  }

 private:
  bool progress_;
};

// CLI11's wording where a user would not read it: a repeated option ("--zero: At Most 1 required
// but received 2") and arguments no option takes, which CLI11 lists last-typed first ("3
// --gpus-per-vm" for "--gpus-per-vm 3").
std::string ParseErrorText(const CLI::ParseError& e, int argc, char** argv) {
  std::string what = e.what();
  const std::string repeated = ": At Most 1 required but received ";
  if (size_t at = what.find(repeated); at != std::string::npos) {
    return what.substr(0, at) + " is given " + what.substr(at + repeated.size()) +
           " times; give it once";
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return what;
  size_t colon = what.find(": ");
  if (colon == std::string::npos) return what;
  std::vector<std::string> extras;
  for (size_t i = colon + 2; i < what.size();) {
    size_t end = what.find(' ', i);
    if (end == std::string::npos) end = what.size();
    if (end > i) extras.push_back(what.substr(i, end - i));
    i = end + 1;
  }
  std::string typed;  // the extras in the order they were typed
  for (int i = 1; i < argc; ++i) {
    auto it = std::find(extras.begin(), extras.end(), argv[i]);
    if (it == extras.end()) continue;
    typed += (typed.empty() ? "" : " ") + *it;
    extras.erase(it);
  }
  if (typed.empty()) return what;
  return typed[0] == '-'
             ? "unknown option or its value: " + typed + " (the command has no such option)"
             : "unexpected argument(s): " + typed;
}

int RunCli(int argc, char** argv) {
  CLI::App app{"ndtwin: a digital twin of Azure ND/NG GPU supercomputers"};
  app.require_subcommand(1);
  bool json = false;
  std::string data_dir;
  std::optional<std::string> report;
  app.add_flag("--json", json, "Print results as JSON");
  app.add_option_function<std::string>(
      "--report", [&report](const std::string& v) { report = v; },
      "Also write a self-contained HTML report (inputs, results, charts) to FILE");
  app.add_option("--hw-data", data_dir, "Hardware data directory (default: the built-in data/)");
  app.set_version_flag("--version", std::string("ndtwin ") + NDT_VERSION);
  std::vector<std::unique_ptr<Bound>> bound;
  std::map<std::string, CLI::App*> groups;
  std::vector<std::string> top_names;  // in the order of --help
  // The registry, then the door-only commands (serve: a server is not something the API runs).
  std::vector<const Command*> commands;
  for (const Command& c : Registry()) commands.push_back(&c);
  commands.push_back(&ServeCommand());
  for (const Command* cp : commands) {
    const Command& c = *cp;
    CLI::App* parent = &app;
    std::string leaf = c.name;
    if (const size_t sp = c.name.find(' '); sp != std::string::npos) {
      const std::string g = c.name.substr(0, sp);
      leaf = c.name.substr(sp + 1);
      if (groups.count(g) == 0) {
        const char* help = "";
        for (const Group& x : kGroups) {
          if (g == x.name) help = x.help;
        }
        groups[g] = app.add_subcommand(g, help);
        groups[g]->fallthrough();
        top_names.push_back(g);
      }
      parent = groups[g];
    } else {
      top_names.push_back(c.name);
    }
    auto b = std::make_unique<Bound>();
    b->cmd = &c;
    b->request = c.new_request();
    b->request->Declare(&b->options);
    b->app = parent->add_subcommand(leaf, c.help);
    b->app->fallthrough();
    for (Option& o : b->options.options()) AddCliOption(b->app, o);
    bound.push_back(std::move(b));
  }
  RequireFinite(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the subcommand's own help when one was named; name the commands when none was.
    // The command is the first word naming one ("plan train --model x": "plan train", not
    // "train"), with its second word where it is a group.
    std::string cmd, names;
    for (const std::string& name : top_names) names += (names.empty() ? "" : ", ") + name;
    for (int i = 1; i < argc && cmd.empty(); ++i) {
      if (std::find(top_names.begin(), top_names.end(), argv[i]) == top_names.end()) continue;
      cmd = argv[i];
      if (groups.count(cmd) > 0 && i + 1 < argc && FindCommand(cmd + " " + argv[i + 1])) {
        cmd += std::string(" ") + argv[i + 1];
      }
    }
    std::string what = ParseErrorText(e, argc, argv);
    if (cmd.empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      std::string first;
      for (int i = 1; i < argc && first.empty(); ++i) {
        const bool value_of_global = i > 1 && argv[i - 1] == std::string("--hw-data");
        if (argv[i][0] != '-' && !value_of_global) first = argv[i];
      }
      what = first.empty() ? "give a command: " + names
                           : "unknown command '" + first + "'; use one of: " + names;
    }
    std::fprintf(stderr, "ndtwin: error: %s (see: ndtwin %s--help)\n", OneLine(what).c_str(),
                 cmd.empty() ? "" : (cmd + " ").c_str());
    return 2;
  }
  Bound* chosen = nullptr;
  for (const auto& b : bound) {
    if (b->app->parsed()) chosen = b.get();
  }
  if (chosen == nullptr) {
    for (const Group& g : kGroups) {
      if (groups.count(g.name) > 0 && groups[g.name]->parsed()) {
        return Fail(Status::InvalidInput(g.missing));
      }
    }
    return 2;
  }
  // The declared ranges, before any value reaches the command (the same check as RunJson's).
  if (Status s = CheckRanges(chosen->options); !s.ok()) return Fail(s);
  if (report.has_value()) EnableReportOptions(&chosen->options);  // the charts' data (timeline)
  StatusOr<Context> ctx = Context::Load(data_dir);
  if (!ctx.ok()) return Fail(ctx.status());
  // Progress only where a person watches: stderr a terminal, and not --json (never when piped).
  StderrDiagnostics diag(!json && isatty(fileno(stderr)) != 0);
  StatusOr<CommandOutput> out = Status::Internal("not run");
  try {
    out = chosen->cmd->run(*ctx, *chosen->request, &diag);
  } catch (const std::bad_alloc&) {
    // Every command refuses up front what would exceed its budget; reaching this is our bug.
    return Fail(
        Status::Internal("out of memory; this input should have been refused up front "
                         "(please report it with the command line)"));
  }
  if (!out.ok()) return Fail(out.status());
  if (report.has_value()) {
    const Status st = WriteReport(
        *report,
        ReportHtml(chosen->cmd->name, OptionValues(chosen->options), out->json, diag.warnings));
    if (!st.ok()) return Fail(st);
  }
  if (json && !out->json.is_null()) {  // null: an MPI worker of sweep (rank 0 prints)
    // Text from files (a model's name) may not be UTF-8: replaced, never a throw.
    const std::string doc =
        out->json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    std::printf("%s\n", doc.c_str());
  } else {
    std::fputs(out->text.c_str(), stdout);
  }
  return 0;
}

}  // namespace ndt
