// File: cli/cli.h
// The ndtwin command line: one table of subcommands (cli/cli.cc), each in cli/<name>.cc.
// A command parses flags into an options struct, loads specs, calls one library function and
// renders text or --json. Results go to stdout; progress and warnings to stderr; an error is
// one line "ndtwin: error: ..." on stderr with exit code 2 (user error) or 1 (our bug).
#ifndef NDTWIN_CLI_CLI_H_
#define NDTWIN_CLI_CLI_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "core/status.h"

namespace ndt {

// Options every command shares.
struct GlobalOptions {
  bool json = false;
  std::string data_dir;  // empty: Catalog::DefaultDataDir()
};

// A command's setup adds its flags to `sub` and returns the function that runs it. The options
// live in the closure, so the returned function owns them.
using CommandRun = std::function<Status(const GlobalOptions&)>;
using CommandSetup = CommandRun (*)(CLI::App* sub);

struct CommandDef {
  const char* name;
  const char* help;
  CommandSetup setup;
};

int RunCli(int argc, char** argv);

// Writes a warning line "ndtwin: warning: ..." to stderr.
void Warn(const std::string& msg);

}  // namespace ndt

#endif  // NDTWIN_CLI_CLI_H_
