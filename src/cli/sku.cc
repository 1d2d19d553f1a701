// Placeholder until the 'sku' command lands; its owner replaces this file.
#include "cli/commands.h"

namespace ndt {

CommandRun SetupSku(CLI::App* /*sub*/) {
  return [](const GlobalOptions&) -> Status {
    return Status::Internal("'sku' is not built yet");
  };
}

}  // namespace ndt
