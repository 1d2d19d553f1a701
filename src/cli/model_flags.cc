// File: cli/model_flags.cc
#include "cli/model_flags.h"

namespace ndt {

void AddModelFlags(CLI::App* sub, ModelFlags* f) {
  sub->add_option("--model", f->model, "Model preset or YAML file (see: ndtwin model list)");
  sub->add_option("--model-file", f->model_file, "Model YAML file");
  sub->add_option("--hf-config", f->hf_config, "Hugging Face config.json");
  InlineModelArgs& m = f->inline_model;
  sub->add_option("--layers", m.layers, "Inline model: layers");
  sub->add_option("--hidden", m.hidden, "Inline model: hidden size");
  sub->add_option("--heads", m.heads, "Inline model: attention heads");
  sub->add_option("--kv-heads", m.kv_heads, "Inline model: K/V heads");
  sub->add_option("--ffn", m.ffn, "Inline model: MLP intermediate size");
  sub->add_option("--vocab", m.vocab, "Inline model: vocabulary");
  sub->add_option("--seq", m.seq, "Inline model: sequence length");
  sub->add_option("--arch", m.arch, "Inline model: gpt | llama");
}

StatusOr<TransformerSpec> ResolveModel(const ModelFlags& f, const std::string& data_dir) {
  const int given =
      !f.model.empty() + !f.model_file.empty() + !f.hf_config.empty() + (f.inline_model.layers > 0);
  if (given != 1) {
    return Status::InvalidInput(
        "give exactly one of --model NAME, --model-file FILE, --hf-config FILE or inline "
        "--layers/--hidden/--heads (see: ndtwin model list)");
  }
  if (!f.model.empty()) return LoadModel(f.model, ModelsDir(data_dir));
  if (!f.model_file.empty()) return LoadModelFile(f.model_file);
  if (!f.hf_config.empty()) return LoadHfConfigFile(f.hf_config);
  return BuildInlineModel(f.inline_model);
}

}  // namespace ndt
