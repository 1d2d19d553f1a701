// File: cmd/model.cc
// `ndtwin model list` and `ndtwin model show NAME|FILE.yaml [--hf-config config.json]`: the
// model presets of data/models/ (model/transformer.h) with derived numbers: parameters, FLOPs
// per token, KV-cache bytes per token. JSON schemas ndtwin.model_list/1 and ndtwin.model/1.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/registry.h"
#include "hw/catalog.h"
#include "model/transformer.h"
#include "report/model_render.h"

namespace ndt {
namespace {

struct ModelListOptions : CommandRequest {
  void Declare(OptionList*) override {}
};

struct ModelShowOptions : CommandRequest {
  std::string name;
  std::string hf_config;
  void Declare(OptionList* o) override {
    o->Add("name", &name, "Preset name (e.g. llama2-70b) or a model .yaml file")
        .Positional()
        .PresetOrFile();
    o->Add("hf-config", &hf_config, "A Hugging Face config.json instead of NAME").LocalFile();
  }
};

StatusOr<CommandOutput> RunList(const Context& ctx, const ModelListOptions&, Diagnostics*) {
  const std::string dir = ModelsDir(ctx.data_dir);
  NDT_ASSIGN_OR_RETURN(std::vector<TransformerSpec> models, LoadAllModels(dir));
  return CommandOutput{ModelListJson(models), ModelListText(models)};
}

CommandOutput ShowModel(const TransformerSpec& s) {
  return CommandOutput{ModelShowJson(s), ModelShowText(s)};
}

StatusOr<CommandOutput> RunShow(const Context& ctx, const ModelShowOptions& o, Diagnostics*) {
  if (!o.hf_config.empty()) {
    NDT_ASSIGN_OR_RETURN(TransformerSpec s, LoadHfConfigFile(o.hf_config));
    return ShowModel(s);
  }
  if (o.name.empty()) {
    return Status::InvalidInput("model show needs a NAME (see: ndtwin model list)");
  }
  NDT_ASSIGN_OR_RETURN(TransformerSpec s, LoadModel(o.name, ModelsDir(ctx.data_dir)));
  return ShowModel(s);
}

}  // namespace

Command ModelListCommand() {
  return MakeCommand<ModelListOptions>("model list", "List the model presets (data/models/)",
                                       RunList);
}

Command ModelShowCommand() {
  return MakeCommand<ModelShowOptions>("model show", "Every field of one model and derived numbers",
                                       RunShow);
}

}  // namespace ndt
