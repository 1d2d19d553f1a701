// Placeholder until the 'model' command lands; its owner replaces this file.
#include "cli/commands.h"

namespace ndt {

CommandRun SetupModel(CLI::App* /*sub*/) {
  return [](const GlobalOptions&) -> Status {
    return Status::Internal("'model' is not built yet");
  };
}

}  // namespace ndt
