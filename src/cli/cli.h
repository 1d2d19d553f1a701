// File: cli/cli.h
// The ndtwin command line: one door over the registry of commands (cmd/command.h). It turns
// each command's options into flags, parses, loads the data once (cmd/context.h), runs the
// command and prints its text or --json document. Results go to stdout; progress and warnings
// to stderr; an error is one line "ndtwin: error: ..." on stderr with exit code 2 (user error)
// or 1 (our bug).
#ifndef NDTWIN_CLI_CLI_H_
#define NDTWIN_CLI_CLI_H_

#include <CLI/CLI.hpp>
#include <string>

namespace ndt {

int RunCli(int argc, char** argv);

// Writes a warning line "ndtwin: warning: ..." to stderr.
void Warn(const std::string& msg);

}  // namespace ndt

#endif  // NDTWIN_CLI_CLI_H_
