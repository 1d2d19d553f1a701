// File: cli/model_flags.h
// The model flags every workload command takes (train, infer, plan): a preset or YAML file
// (--model), a YAML file (--model-file), a Hugging Face config (--hf-config), or inline
// (--layers --hidden --heads --kv-heads --ffn --vocab --seq --arch); exactly one of the four.
// --seq also overrides the sequence length of a preset, file or config (training at 8k, say).
#ifndef NDTWIN_CLI_MODEL_FLAGS_H_
#define NDTWIN_CLI_MODEL_FLAGS_H_

#include <string>
#include <utility>
#include <vector>

#include "cli/cli.h"
#include "core/status.h"
#include "model/transformer.h"

namespace ndt {

struct ModelFlags {
  std::string model, model_file, hf_config;
  InlineModelArgs inline_model;
  // The inline size flags as parsed, to tell "given" from "left at its default".
  std::vector<std::pair<CLI::Option*, const int64_t*>> size_flags;
  CLI::Option* seq_flag = nullptr;
  CLI::Option* arch_flag = nullptr;
};

void AddModelFlags(CLI::App* sub, ModelFlags* f);

// The model the flags name; kInvalidInput unless exactly one way is given.
StatusOr<TransformerSpec> ResolveModel(const ModelFlags& f, const std::string& data_dir);

}  // namespace ndt

#endif  // NDTWIN_CLI_MODEL_FLAGS_H_
