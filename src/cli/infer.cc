// Placeholder until the 'infer' command lands; its owner replaces this file.
#include "cli/commands.h"

namespace ndt {

CommandRun SetupInfer(CLI::App* /*sub*/) {
  return [](const GlobalOptions&) -> Status {
    return Status::Internal("'infer' is not built yet");
  };
}

}  // namespace ndt
