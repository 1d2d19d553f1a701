// File: cli/model_flags.cc
#include "cli/model_flags.h"

namespace ndt {

void AddModelFlags(CLI::App* sub, ModelFlags* f) {
  sub->add_option("--model", f->model, "Model preset or YAML file (see: ndtwin model list)");
  sub->add_option("--model-file", f->model_file, "Model YAML file");
  sub->add_option("--hf-config", f->hf_config, "Hugging Face config.json");
  InlineModelArgs& m = f->inline_model;
  auto size = [&](const char* name, int64_t* v, const char* help) {
    f->size_flags.emplace_back(sub->add_option(name, *v, help), v);
  };
  size("--layers", &m.layers, "Inline model: layers");
  size("--hidden", &m.hidden, "Inline model: hidden size");
  size("--heads", &m.heads, "Inline model: attention heads");
  size("--kv-heads", &m.kv_heads, "Inline model: K/V heads");
  size("--ffn", &m.ffn, "Inline model: MLP intermediate size");
  size("--vocab", &m.vocab, "Inline model: vocabulary");
  f->seq_flag =
      sub->add_option("--seq", m.seq, "Sequence length (inline model, or overrides a model's)");
  f->arch_flag = sub->add_option("--arch", m.arch, "Inline model: gpt | llama");
}

StatusOr<TransformerSpec> ResolveModel(const ModelFlags& f, const std::string& data_dir) {
  bool inline_given = f.arch_flag != nullptr && f.arch_flag->count() > 0;
  for (const auto& [opt, v] : f.size_flags) {
    if (opt->count() == 0) continue;
    inline_given = true;
    if (*v < 1) {
      return Status::InvalidInput(opt->get_name() + " must be >= 1 (got " + std::to_string(*v) +
                                  "); omit it for the default");
    }
  }
  const bool seq_given = f.seq_flag != nullptr && f.seq_flag->count() > 0;
  if (seq_given && f.inline_model.seq < 1) {
    return Status::InvalidInput("--seq must be >= 1 (got " + std::to_string(f.inline_model.seq) +
                                ")");
  }
  const int given = !f.model.empty() + !f.model_file.empty() + !f.hf_config.empty() +
                    (inline_given || (f.size_flags.empty() && f.inline_model.layers > 0));
  if (given != 1) {
    return Status::InvalidInput(
        "give exactly one of --model NAME, --model-file FILE, --hf-config FILE or inline "
        "--layers/--hidden/--heads (see: ndtwin model list)");
  }
  StatusOr<TransformerSpec> m = Status::InvalidInput("no model");
  if (!f.model.empty()) {
    m = LoadModel(f.model, ModelsDir(data_dir));
  } else if (!f.model_file.empty()) {
    m = LoadModelFile(f.model_file);
  } else if (!f.hf_config.empty()) {
    m = LoadHfConfigFile(f.hf_config);
  } else {
    return BuildInlineModel(f.inline_model);
  }
  if (m.ok() && seq_given) {
    m->seq_len = f.inline_model.seq;
    NDT_RETURN_IF_ERROR(Validate(*m));
  }
  return m;
}

}  // namespace ndt
