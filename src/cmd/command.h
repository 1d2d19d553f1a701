// File: cmd/command.h
// The registry of commands: every capability of ndtwin (sku list, train, plan infer, ...) is one
// entry, {name, help, a request with its options, Run}. Run takes the loaded data (Context) and
// the request, and returns the command's JSON document and its text rendering, or a Status.
// The doors (the CLI, and later Python, the web API, reports and sweeps) loop over Registry();
// none computes anything of its own. A new command is one entry here plus its library code.
//
// Thread safety: Run is safe to call from several threads at once on a shared const Context;
// each call gets its own request and Diagnostics.
#ifndef NDTWIN_CMD_COMMAND_H_
#define NDTWIN_CMD_COMMAND_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/options.h"
#include "core/status.h"

namespace ndt {

// Where a command's warnings, notes and progress lines go while it runs (stderr for the CLI).
// The default keeps them for the caller.
class Diagnostics {
 public:
  virtual ~Diagnostics() = default;
  // A warning: the CLI prints "ndtwin: warning: <msg>".
  virtual void Warn(const std::string& msg) { warnings.push_back(msg); }
  // A note printed as is ("plan: note: ..."): what was skipped or assumed; never part of the
  // result. The CLI always prints it.
  virtual void Note(const std::string& line) { notes.push_back(line); }
  // A progress line printed as is ("plan: simulating the best 40 ..."), for runs of several
  // seconds: the CLI shows it only when stderr is a terminal and --json is not given, so piped
  // and scripted output never carries it.
  virtual void Progress(const std::string& line) { progress.push_back(line); }

  std::vector<std::string> warnings;
  std::vector<std::string> notes;
  std::vector<std::string> progress;
};

// What a command returns: its --json document and the text the CLI prints without --json.
struct CommandOutput {
  Json json;
  std::string text;
};

// A request: plain values with defaults, and the list of its options.
class CommandRequest {
 public:
  virtual ~CommandRequest() = default;
  virtual void Declare(OptionList* options) = 0;
};

struct Command {
  std::string name;  // "train", "plan train", "sku show"
  std::string help;
  std::function<std::unique_ptr<CommandRequest>()> new_request;
  std::function<StatusOr<CommandOutput>(const Context&, const CommandRequest&, Diagnostics*)> run;
};

// Makes a registry entry from a request type and a function
// StatusOr<CommandOutput> fn(const Context&, const Req&, Diagnostics*).
template <typename Req, typename Fn>
Command MakeCommand(std::string name, std::string help, Fn fn) {
  Command c;
  c.name = std::move(name);
  c.help = std::move(help);
  c.new_request = [] { return std::make_unique<Req>(); };
  c.run = [fn](const Context& ctx, const CommandRequest& r, Diagnostics* d) {
    return fn(ctx, static_cast<const Req&>(r), d);
  };
  return c;
}

// Every command, in the order `ndtwin --help` lists them.
const std::vector<Command>& Registry();
// The command named `name` ("plan train"), or nullptr.
const Command* FindCommand(const std::string& name);

// How a door spells an option in messages: the CLI's "--tp" (the spelling the library's messages
// use), Python's "tp=", a web form's field name.
using OptionSpelling = std::function<std::string(const std::string& option)>;

// Rewrites each "--name" of a declared option in `text` into the door's spelling (a "--name"
// that is a prefix of a longer word, or not an option of the command, is left alone).
std::string Respell(const std::string& text, const OptionList& options,
                    const OptionSpelling& spell);

// Runs a command from a JSON object of options (the web API's and Python's path): binds the
// options (errors name the option), then runs. With `spell`, the error's message and the
// warnings name options in the door's spelling; the code is kept.
StatusOr<CommandOutput> RunJson(const Command& cmd, const Context& ctx, const Json& args,
                                Diagnostics* diag, const OptionSpelling& spell = {});

}  // namespace ndt

#endif  // NDTWIN_CMD_COMMAND_H_
