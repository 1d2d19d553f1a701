// File: model/model_io.cc
// Where TransformerSpecs come from: preset YAML files in data/models/ (strict), inline flags,
// and Hugging Face config.json files (nlohmann::json; its exceptions are caught here).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "core/yaml.h"
#include "model/transformer.h"

namespace ndt {

namespace fs = std::filesystem;

std::string ModelsDir(const std::string& data_dir) {
  return (data_dir.empty() ? std::string(NDT_DATA_DIR) : data_dir) + "/models";
}

std::vector<std::string> ListModels(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

StatusOr<int64_t> OptInt(const YamlMap& m, const char* key, int64_t def) {
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> v, m.OptionalInt(key));
  return v.value_or(def);
}

StatusOr<TransformerSpec> FromYaml(const YamlMap& y) {
  TransformerSpec s;
  NDT_ASSIGN_OR_RETURN(s.name, y.String("name"));
  NDT_ASSIGN_OR_RETURN(s.arch, y.String("arch"));
  NDT_ASSIGN_OR_RETURN(s.source, y.String("source"));
  NDT_ASSIGN_OR_RETURN(s.layers, y.Int("layers"));
  NDT_ASSIGN_OR_RETURN(s.hidden, y.Int("hidden"));
  NDT_ASSIGN_OR_RETURN(s.heads, y.Int("heads"));
  NDT_ASSIGN_OR_RETURN(s.kv_heads, OptInt(y, "kv_heads", s.heads));
  if (!y.Has("head_dim") && s.heads > 0 && s.hidden % s.heads != 0) {
    return y.Error("hidden", "hidden (" + std::to_string(s.hidden) +
                                 ") is not divisible by heads (" + std::to_string(s.heads) +
                                 "); fix them or give head_dim");
  }
  NDT_ASSIGN_OR_RETURN(s.head_dim, OptInt(y, "head_dim", s.heads > 0 ? s.hidden / s.heads : 0));
  NDT_ASSIGN_OR_RETURN(s.ffn_hidden, OptInt(y, "ffn_hidden", 0));
  NDT_ASSIGN_OR_RETURN(s.vocab, y.Int("vocab"));
  NDT_ASSIGN_OR_RETURN(s.seq_len, y.Int("seq_len"));
  NDT_ASSIGN_OR_RETURN(s.max_context, OptInt(y, "max_context", 0));
  NDT_ASSIGN_OR_RETURN(std::string act, y.String("activation"));
  if (act == "gelu") {
    s.activation = Activation::kGelu;
  } else if (act == "swiglu") {
    s.activation = Activation::kSwiglu;
  } else {
    return y.Error("activation", "must be gelu or swiglu (got '" + act + "')");
  }
  NDT_ASSIGN_OR_RETURN(std::string norm, y.String("norm"));
  if (norm == "layernorm") {
    s.norm = NormType::kLayerNorm;
  } else if (norm == "rmsnorm") {
    s.norm = NormType::kRmsNorm;
  } else {
    return y.Error("norm", "must be layernorm or rmsnorm (got '" + norm + "')");
  }
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> att, y.OptionalString("attention"));
  const std::string a = att.value_or(s.kv_heads == s.heads ? "mha" : "gqa");
  if (a == "mha") {
    s.attention = AttentionKind::kMha;
  } else if (a == "gqa") {
    s.attention = AttentionKind::kGqa;
  } else if (a == "mla") {
    s.attention = AttentionKind::kMla;
  } else {
    return y.Error("attention", "must be mha, gqa or mla (got '" + a + "')");
  }
  NDT_ASSIGN_OR_RETURN(s.tied_embeddings, y.Bool("tied_embeddings"));
  NDT_ASSIGN_OR_RETURN(s.biases, y.Bool("biases"));
  NDT_ASSIGN_OR_RETURN(std::optional<bool> lp, y.OptionalBool("learned_positions"));
  s.learned_positions = lp.value_or(false);
  if (y.Has("dropout")) {
    NDT_ASSIGN_OR_RETURN(s.dropout, y.Number("dropout"));
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> moe, y.OptionalMap("moe"));
  if (moe) {
    NDT_ASSIGN_OR_RETURN(int64_t experts, moe->Int("experts"));
    NDT_ASSIGN_OR_RETURN(int64_t top_k, moe->Int("top_k"));
    NDT_ASSIGN_OR_RETURN(int64_t shared, OptInt(*moe, "shared_experts", 0));
    NDT_ASSIGN_OR_RETURN(int64_t first, OptInt(*moe, "first_k_dense", 0));
    s.moe.experts = static_cast<int>(experts);
    s.moe.top_k = static_cast<int>(top_k);
    s.moe.shared_experts = static_cast<int>(shared);
    s.moe.first_k_dense = static_cast<int>(first);
    NDT_ASSIGN_OR_RETURN(s.moe.expert_ffn_hidden, moe->Int("expert_ffn_hidden"));
    if (moe->Has("capacity_factor")) {
      NDT_ASSIGN_OR_RETURN(s.moe.capacity_factor, moe->Number("capacity_factor"));
    }
    NDT_RETURN_IF_ERROR(moe->Finish());
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> mla, y.OptionalMap("mla"));
  if (mla) {
    NDT_ASSIGN_OR_RETURN(s.mla.q_lora_rank, OptInt(*mla, "q_lora_rank", 0));
    NDT_ASSIGN_OR_RETURN(s.mla.kv_lora_rank, mla->Int("kv_lora_rank"));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_rope_head_dim, mla->Int("qk_rope_head_dim"));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_nope_head_dim, mla->Int("qk_nope_head_dim"));
    NDT_ASSIGN_OR_RETURN(s.mla.v_head_dim, mla->Int("v_head_dim"));
    NDT_RETURN_IF_ERROR(mla->Finish());
  }
  if (s.attention == AttentionKind::kMla && !mla) {
    return y.Error("mla", "attention: mla needs an mla: {kv_lora_rank, ...} map");
  }
  NDT_RETURN_IF_ERROR(y.Finish());
  NDT_RETURN_IF_ERROR(Validate(s).WithPrefix(y.file() + ": "));
  return s;
}

}  // namespace

StatusOr<TransformerSpec> LoadModelFile(const std::string& path) {
  NDT_ASSIGN_OR_RETURN(YamlMap y, LoadYamlMapFile(path));
  return FromYaml(y);
}

StatusOr<TransformerSpec> ParseModelYaml(const std::string& text, const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap y, LoadYamlMapString(text, name));
  return FromYaml(y);
}

StatusOr<std::vector<TransformerSpec>> LoadAllModels(const std::string& dir) {
  std::vector<TransformerSpec> out;
  for (const std::string& n : ListModels(dir)) {
    NDT_ASSIGN_OR_RETURN(TransformerSpec s, LoadModelFile(dir + "/" + n + ".yaml"));
    out.push_back(std::move(s));
  }
  return out;
}

StatusOr<TransformerSpec> LoadModel(const std::string& name_or_path, const std::string& dir) {
  std::error_code ec;
  const bool looks_like_path =
      name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".yaml");
  if (looks_like_path) {
    if (fs::is_directory(name_or_path, ec)) {
      return Status::InvalidInput("model file '" + name_or_path +
                                  "' is a directory; give a model YAML file");
    }
    if (!fs::is_regular_file(name_or_path, ec)) {
      return Status::NotFound("model file '" + name_or_path + "' not found");
    }
    return LoadModelFile(name_or_path);
  }
  const std::vector<std::string> names = ListModels(dir);
  for (const std::string& n : names) {
    if (EqualsIgnoreCase(n, name_or_path)) return LoadModelFile(dir + "/" + n + ".yaml");
  }
  return Status::NotFound("unknown model '" + name_or_path + "'" + DidYouMean(name_or_path, names) +
                          " (see: ndtwin model list)");
}

StatusOr<TransformerSpec> BuildInlineModel(const InlineModelArgs& a) {
  TransformerSpec s;
  s.name = a.name;
  s.source = "command-line flags";
  if (a.arch != "gpt" && a.arch != "llama") {
    return Status::InvalidInput("--arch must be gpt or llama (got '" + a.arch + "')");
  }
  const bool gpt = a.arch == "gpt";
  if (a.layers <= 0 || a.hidden <= 0 || a.heads <= 0) {
    return Status::InvalidInput(
        "an inline model needs --layers, --hidden and --heads (positive), or use --model NAME");
  }
  s.arch = a.arch;
  s.layers = a.layers;
  s.hidden = a.hidden;
  s.heads = a.heads;
  s.kv_heads = a.kv_heads > 0 ? a.kv_heads : a.heads;
  s.head_dim = a.hidden / a.heads;
  if (a.ffn > 0) {
    s.ffn_hidden = a.ffn;
  } else if (gpt) {
    s.ffn_hidden = 4 * a.hidden;
  } else {
    // Llama rule: 2/3 of 4h rounded up to a multiple of 256.
    const int64_t raw = 8 * a.hidden / 3;
    s.ffn_hidden = (raw + 255) / 256 * 256;
  }
  s.vocab = a.vocab > 0 ? a.vocab : (gpt ? 51200 : 32000);
  s.seq_len = a.seq > 0 ? a.seq : (gpt ? 2048 : 4096);
  s.activation = gpt ? Activation::kGelu : Activation::kSwiglu;
  s.norm = gpt ? NormType::kLayerNorm : NormType::kRmsNorm;
  s.attention = s.kv_heads == s.heads ? AttentionKind::kMha : AttentionKind::kGqa;
  s.tied_embeddings = gpt;
  s.biases = gpt;
  s.learned_positions = gpt;
  s.dropout = gpt ? 0.1 : 0.0;  // Megatron's GPT runs; Llama-family recipes
  if (a.hidden % a.heads != 0) {
    return Status::InvalidInput("--hidden (" + std::to_string(a.hidden) +
                                ") must be divisible by --heads (" + std::to_string(a.heads) + ")");
  }
  NDT_RETURN_IF_ERROR(Validate(s));
  return s;
}

namespace {

// May throw nlohmann::json::type_error on a key of the wrong type (caught by ParseHfConfig).
StatusOr<TransformerSpec> HfConfigFromJson(const nlohmann::json& j, const std::string& name) {
  auto get_int = [&](std::initializer_list<const char*> keys, int64_t def,
                     bool required) -> StatusOr<int64_t> {
    for (const char* k : keys) {
      auto it = j.find(k);
      if (it != j.end() && it->is_number_integer()) return it->get<int64_t>();
      if (it != j.end() && !it->is_null()) {
        return Status::InvalidInput(name + ": " + k + " must be an integer");
      }
    }
    if (required) {
      return Status::InvalidInput(name + ": missing key '" + *keys.begin() +
                                  "'; is this a decoder-only transformer config.json?");
    }
    return def;
  };
  TransformerSpec s;
  s.name = fs::path(name).parent_path().filename().string();
  if (s.name.empty() || s.name == ".") s.name = fs::path(name).stem().string();
  s.source = "Hugging Face config " + name;
  const std::string model_type = j.value("model_type", std::string());
  // Families that are not decoder-only transformers: state-space, hybrid, recurrent, encoders.
  static const char* const kNotDecoders[] = {
      "mamba",           "mamba2", "falcon_mamba", "jamba", "rwkv", "rwkv5",
      "recurrent_gemma", "bert",   "roberta",      "t5",    "bart", "whisper"};
  for (const char* t : kNotDecoders) {
    if (model_type == t) {
      return Status::InvalidInput(name + ": model_type '" + model_type +
                                  "' is not a decoder-only transformer; ndtwin models those "
                                  "(llama, mistral, mixtral, qwen, deepseek, gpt2, ...)");
    }
  }
  NDT_ASSIGN_OR_RETURN(s.layers, get_int({"num_hidden_layers", "n_layer", "num_layers"}, 0, true));
  NDT_ASSIGN_OR_RETURN(s.hidden, get_int({"hidden_size", "n_embd", "d_model"}, 0, true));
  NDT_ASSIGN_OR_RETURN(s.heads, get_int({"num_attention_heads", "n_head"}, 0, true));
  NDT_ASSIGN_OR_RETURN(s.kv_heads, get_int({"num_key_value_heads"}, s.heads, false));
  if (!j.contains("head_dim") && s.heads > 0 && s.hidden % s.heads != 0) {
    return Status::InvalidInput(name + ": hidden_size (" + std::to_string(s.hidden) +
                                ") is not divisible by num_attention_heads (" +
                                std::to_string(s.heads) + ") and no head_dim is given");
  }
  NDT_ASSIGN_OR_RETURN(s.head_dim,
                       get_int({"head_dim"}, s.heads > 0 ? s.hidden / s.heads : 0, false));
  NDT_ASSIGN_OR_RETURN(s.vocab, get_int({"vocab_size"}, 0, true));
  NDT_ASSIGN_OR_RETURN(
      s.seq_len, get_int({"max_position_embeddings", "n_positions", "seq_length"}, 4096, false));
  std::string act = "silu";
  for (const char* k : {"hidden_act", "activation_function"}) {
    auto it = j.find(k);
    if (it != j.end() && it->is_string()) act = it->get<std::string>();
  }
  const bool gated = act == "silu" || act == "swiglu" || act == "swish";
  s.activation = gated ? Activation::kSwiglu : Activation::kGelu;
  NDT_ASSIGN_OR_RETURN(s.ffn_hidden, get_int({"intermediate_size", "n_inner", "ffn_dim"},
                                             gated ? 0 : 4 * s.hidden, false));
  s.norm = j.contains("rms_norm_eps") ? NormType::kRmsNorm : NormType::kLayerNorm;
  s.tied_embeddings = j.value("tie_word_embeddings", model_type == "gpt2");
  s.biases = j.value("attention_bias", !gated);
  s.learned_positions = model_type == "gpt2";
  for (const char* k : {"attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop"}) {
    auto it = j.find(k);
    if (it != j.end() && it->is_number()) s.dropout = std::max(s.dropout, it->get<double>());
  }
  s.arch = model_type.empty() ? (gated ? "llama" : "gpt") : model_type;
  s.attention = s.kv_heads == s.heads ? AttentionKind::kMha : AttentionKind::kGqa;
  // MoE: Mixtral (num_local_experts), Qwen-MoE / DeepSeek (n_routed_experts / num_experts).
  NDT_ASSIGN_OR_RETURN(int64_t experts,
                       get_int({"num_local_experts", "n_routed_experts", "num_experts"}, 0, false));
  if (experts > 0) {
    s.moe.experts = static_cast<int>(experts);
    NDT_ASSIGN_OR_RETURN(int64_t k, get_int({"num_experts_per_tok"}, 2, false));
    NDT_ASSIGN_OR_RETURN(int64_t sh, get_int({"n_shared_experts"}, 0, false));
    NDT_ASSIGN_OR_RETURN(int64_t fk, get_int({"first_k_dense_replace"}, 0, false));
    NDT_ASSIGN_OR_RETURN(s.moe.expert_ffn_hidden,
                         get_int({"moe_intermediate_size"}, s.ffn_hidden, false));
    s.moe.top_k = static_cast<int>(k);
    s.moe.shared_experts = static_cast<int>(sh);
    s.moe.first_k_dense = static_cast<int>(fk);
  }
  if (j.contains("kv_lora_rank") && j["kv_lora_rank"].is_number_integer()) {
    s.attention = AttentionKind::kMla;
    NDT_ASSIGN_OR_RETURN(s.mla.kv_lora_rank, get_int({"kv_lora_rank"}, 0, true));
    NDT_ASSIGN_OR_RETURN(s.mla.q_lora_rank, get_int({"q_lora_rank"}, 0, false));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_rope_head_dim, get_int({"qk_rope_head_dim"}, 0, true));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_nope_head_dim, get_int({"qk_nope_head_dim"}, 0, true));
    NDT_ASSIGN_OR_RETURN(s.mla.v_head_dim, get_int({"v_head_dim"}, 0, true));
    s.head_dim = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;
  }
  NDT_RETURN_IF_ERROR(Validate(s).WithPrefix(name + ": "));
  return s;
}

}  // namespace

StatusOr<TransformerSpec> ParseHfConfig(const std::string& text, const std::string& name) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) return Status::InvalidInput(name + ": a config.json must be an object");
    return HfConfigFromJson(j, name);
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidInput(name + ": not a valid config.json: " + e.what());
  }
}

StatusOr<TransformerSpec> LoadHfConfigFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read '" + path + "'; check the --hf-config path");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseHfConfig(ss.str(), path);
}

}  // namespace ndt
