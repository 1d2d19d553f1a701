// Placeholder until the 'topo' command lands; its owner replaces this file.
#include "cli/commands.h"

namespace ndt {

CommandRun SetupTopo(CLI::App* /*sub*/) {
  return [](const GlobalOptions&) -> Status {
    return Status::Internal("'topo' is not built yet");
  };
}

}  // namespace ndt
