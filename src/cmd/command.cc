#include "cmd/command.h"

#include "cmd/registry.h"

namespace ndt {

const std::vector<Command>& Registry() {
  // The order of `ndtwin --help` (ninja's kTools): catalog, cluster, network, models, workloads.
  static const std::vector<Command> kRegistry = {
      SkuListCommand(),   SkuShowCommand(),   TopoCommand(),     CollectiveCommand(),
      ModelListCommand(), ModelShowCommand(), TrainCommand(),    InferCommand(),
      PlanTrainCommand(), PlanInferCommand(), ValidateCommand(),
  };
  return kRegistry;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : Registry()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

StatusOr<CommandOutput> RunJson(const Command& cmd, const Context& ctx, const Json& args,
                                Diagnostics* diag) {
  std::unique_ptr<CommandRequest> req = cmd.new_request();
  OptionList options;
  req->Declare(&options);
  NDT_RETURN_IF_ERROR(BindJson(args, &options, cmd.name));
  return cmd.run(ctx, *req, diag);
}

}  // namespace ndt
