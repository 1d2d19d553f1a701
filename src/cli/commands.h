// File: cli/commands.h
// The setup function of each subcommand (see cli/cli.h), one per cli/<name>.cc.
#ifndef NDTWIN_CLI_COMMANDS_H_
#define NDTWIN_CLI_COMMANDS_H_

#include "cli/cli.h"

namespace ndt {

CommandRun SetupSku(CLI::App* sub);         // cli/sku.cc
CommandRun SetupTopo(CLI::App* sub);        // cli/topo.cc
CommandRun SetupCollective(CLI::App* sub);  // cli/collective.cc
CommandRun SetupModel(CLI::App* sub);       // cli/model.cc
CommandRun SetupTrain(CLI::App* sub);       // cli/train.cc
CommandRun SetupInfer(CLI::App* sub);       // cli/infer.cc
CommandRun SetupPlan(CLI::App* sub);        // cli/plan.cc
CommandRun SetupValidate(CLI::App* sub);    // cli/validate.cc

}  // namespace ndt

#endif  // NDTWIN_CLI_COMMANDS_H_
