// Placeholder until the 'collective' command lands; its owner replaces this file.
#include "cli/commands.h"

namespace ndt {

CommandRun SetupCollective(CLI::App* /*sub*/) {
  return [](const GlobalOptions&) -> Status {
    return Status::Internal("'collective' is not built yet");
  };
}

}  // namespace ndt
