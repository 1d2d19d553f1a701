// Placeholder until the 'train' command lands; its owner replaces this file.
#include "cli/commands.h"

namespace ndt {

CommandRun SetupTrain(CLI::App* /*sub*/) {
  return [](const GlobalOptions&) -> Status {
    return Status::Internal("'train' is not built yet");
  };
}

}  // namespace ndt
