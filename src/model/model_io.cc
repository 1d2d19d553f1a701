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

#include "core/files.h"
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

// The defaults a family gives the keys a hand-written file (or the inline flags) leaves out:
// GPT-2/3 and Megatron's GPT, or the Llama family (transformer.h, kModelArchs).
struct ArchDefaults {
  bool gpt;
  Activation activation() const { return gpt ? Activation::kGelu : Activation::kSwiglu; }
  NormType norm() const { return gpt ? NormType::kLayerNorm : NormType::kRmsNorm; }
  int64_t vocab() const { return gpt ? 51200 : 32000; }
  int64_t seq() const { return gpt ? 2048 : 4096; }
  double dropout() const { return gpt ? 0.1 : 0.0; }  // Megatron's GPT runs; Llama recipes
  // GPT: 4h; Llama: 2/3 of 4h rounded up to a multiple of 256.
  int64_t ffn(int64_t hidden) const {
    return gpt ? 4 * hidden : (8 * hidden / 3 + 255) / 256 * 256;
  }
};

ArchDefaults DefaultsOf(const std::string& arch) { return ArchDefaults{arch == "gpt"}; }

// "file:line: missing required keys a, b (...)" for every key of `required` the map lacks.
Status RequireAll(const YamlMap& y, const std::vector<std::string>& required,
                  const std::string& hint) {
  const std::vector<std::string> missing = y.Missing(required);
  if (missing.empty()) return Status::Ok();
  std::string list;
  for (const std::string& k : missing) list += (list.empty() ? "" : ", ") + k;
  return y.Error(
      "", std::string(missing.size() == 1 ? "missing required key " : "missing required keys ") +
              list + " (" + hint + ")");
}

StatusOr<TransformerSpec> FromYaml(const YamlMap& y, const std::string& default_name, bool preset) {
  TransformerSpec s;
  std::vector<std::string> required = {"arch", "layers", "hidden", "heads"};
  if (preset) required.insert(required.begin(), {"name", "source"});
  NDT_RETURN_IF_ERROR(RequireAll(
      y, required,
      preset
          ? "a preset in data/models/ names its source"
          : "a model file needs arch, layers, hidden and heads; the architecture gives the rest"));
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> name, y.OptionalString("name"));
  s.name = name.value_or(default_name);
  NDT_ASSIGN_OR_RETURN(s.arch, y.String("arch"));
  if (!IsModelArch(s.arch)) {
    return y.Error("arch", "must be one of " + ModelArchList() + " (got '" + s.arch + "')");
  }
  const ArchDefaults d = DefaultsOf(s.arch);
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> source, y.OptionalString("source"));
  s.source = source.value_or("model file " + y.file());
  NDT_ASSIGN_OR_RETURN(s.layers, y.IntIn("layers", 1, kMaxModelLayers));
  NDT_ASSIGN_OR_RETURN(s.hidden, y.IntIn("hidden", 1, kMaxModelHidden));
  NDT_ASSIGN_OR_RETURN(s.heads, y.IntIn("heads", 1, kMaxModelHeads));
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> kv, y.OptionalIntIn("kv_heads", 1, kMaxModelHeads));
  s.kv_heads = kv.value_or(s.heads);
  if (!y.Has("head_dim") && s.hidden % s.heads != 0) {
    return y.Error("hidden", "hidden (" + std::to_string(s.hidden) +
                                 ") is not divisible by heads (" + std::to_string(s.heads) +
                                 "); fix them or give head_dim");
  }
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> hd, y.OptionalIntIn("head_dim", 1, kMaxModelHeadDim));
  s.head_dim = hd.value_or(s.hidden / s.heads);
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> vocab, y.OptionalIntIn("vocab", 1, kMaxModelVocab));
  s.vocab = vocab.value_or(d.vocab());
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> seq, y.OptionalIntIn("seq_len", 1, kMaxModelSeq));
  s.seq_len = seq.value_or(d.seq());
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> ctx, y.OptionalIntIn("max_context", 1, kMaxModelSeq));
  s.max_context = ctx.value_or(0);
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> act, y.OptionalString("activation"));
  if (!act) {
    s.activation = d.activation();
  } else if (*act == "gelu") {
    s.activation = Activation::kGelu;
  } else if (*act == "swiglu") {
    s.activation = Activation::kSwiglu;
  } else {
    return y.Error("activation", "must be gelu or swiglu (got '" + *act + "')");
  }
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> norm, y.OptionalString("norm"));
  if (!norm) {
    s.norm = d.norm();
  } else if (*norm == "layernorm") {
    s.norm = NormType::kLayerNorm;
  } else if (*norm == "rmsnorm") {
    s.norm = NormType::kRmsNorm;
  } else {
    return y.Error("norm", "must be layernorm or rmsnorm (got '" + *norm + "')");
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
  NDT_ASSIGN_OR_RETURN(std::optional<bool> tied, y.OptionalBool("tied_embeddings"));
  s.tied_embeddings = tied.value_or(d.gpt);
  NDT_ASSIGN_OR_RETURN(std::optional<bool> biases, y.OptionalBool("biases"));
  s.biases = biases.value_or(d.gpt);
  NDT_ASSIGN_OR_RETURN(std::optional<bool> lp, y.OptionalBool("learned_positions"));
  s.learned_positions = lp.value_or(d.gpt);
  s.dropout = d.dropout();
  if (y.Has("dropout")) {
    NDT_ASSIGN_OR_RETURN(s.dropout, y.NumberIn("dropout", 0, 0.99));
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> moe, y.OptionalMap("moe"));
  if (moe) {
    // A moe block is a mixture of experts: zero experts would silently run a dense model.
    NDT_RETURN_IF_ERROR(RequireAll(*moe, {"experts", "top_k", "expert_ffn_hidden"},
                                   "a moe block needs experts, top_k and expert_ffn_hidden; "
                                   "remove the block for a dense model"));
    NDT_ASSIGN_OR_RETURN(int64_t experts, moe->IntIn("experts", 1, kMaxModelExperts));
    NDT_ASSIGN_OR_RETURN(int64_t top_k, moe->IntIn("top_k", 1, experts));
    NDT_ASSIGN_OR_RETURN(std::optional<int64_t> shared,
                         moe->OptionalIntIn("shared_experts", 0, kMaxModelExperts));
    NDT_ASSIGN_OR_RETURN(std::optional<int64_t> first,
                         moe->OptionalIntIn("first_k_dense", 0, s.layers));
    s.moe.experts = static_cast<int>(experts);
    s.moe.top_k = static_cast<int>(top_k);
    s.moe.shared_experts = static_cast<int>(shared.value_or(0));
    s.moe.first_k_dense = static_cast<int>(first.value_or(0));
    NDT_ASSIGN_OR_RETURN(s.moe.expert_ffn_hidden, moe->IntIn("expert_ffn_hidden", 1, kMaxModelFfn));
    if (moe->Has("capacity_factor")) {
      NDT_ASSIGN_OR_RETURN(s.moe.capacity_factor,
                           moe->NumberIn("capacity_factor", 1.0 / 64, kMaxModelExperts));
    }
    NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> imb, moe->OptionalMap("rank_imbalance"));
    if (imb) {
      NDT_RETURN_IF_ERROR(RequireAll(*imb, {"ratio", "ep", "source"},
                                     "a rank_imbalance block needs ratio ((max - mean) / mean "
                                     "routed tokens per rank), ep and source"));
      NDT_ASSIGN_OR_RETURN(s.moe.imbalance_ratio, imb->NumberIn("ratio", 0, kMaxModelExperts));
      NDT_ASSIGN_OR_RETURN(int64_t iep, imb->IntIn("ep", 2, experts));
      if (experts % iep != 0) {
        return imb->Error("ep", "must divide experts (" + std::to_string(experts) +
                                    ": contiguous expert slots per rank)");
      }
      s.moe.imbalance_ep = static_cast<int>(iep);
      NDT_ASSIGN_OR_RETURN(s.moe.imbalance_source, imb->String("source"));
      NDT_RETURN_IF_ERROR(imb->Finish());
    }
    NDT_RETURN_IF_ERROR(moe->Finish());
  }
  // The dense MLP: the architecture's rule unless given (unused when every layer is MoE).
  const bool has_dense = !s.is_moe() || s.moe.first_k_dense > 0;
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> ffn, y.OptionalIntIn("ffn_hidden", 1, kMaxModelFfn));
  s.ffn_hidden = ffn.value_or(has_dense ? d.ffn(s.hidden) : 0);
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> mla, y.OptionalMap("mla"));
  if (mla) {
    NDT_RETURN_IF_ERROR(RequireAll(
        *mla, {"kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"},
        "an mla block needs kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim and v_head_dim"));
    NDT_ASSIGN_OR_RETURN(std::optional<int64_t> q,
                         mla->OptionalIntIn("q_lora_rank", 0, kMaxModelHidden));
    s.mla.q_lora_rank = q.value_or(0);
    NDT_ASSIGN_OR_RETURN(s.mla.kv_lora_rank, mla->IntIn("kv_lora_rank", 1, kMaxModelHidden));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_rope_head_dim,
                         mla->IntIn("qk_rope_head_dim", 0, kMaxModelHeadDim));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_nope_head_dim,
                         mla->IntIn("qk_nope_head_dim", 1, kMaxModelHeadDim));
    NDT_ASSIGN_OR_RETURN(s.mla.v_head_dim, mla->IntIn("v_head_dim", 1, kMaxModelHeadDim));
    NDT_RETURN_IF_ERROR(mla->Finish());
  }
  if (s.attention == AttentionKind::kMla && !mla) {
    return y.Error("mla", "attention: mla needs an mla: {kv_lora_rank, ...} map");
  }
  NDT_RETURN_IF_ERROR(y.Finish());
  NDT_RETURN_IF_ERROR(Validate(s).WithPrefix(y.file() + ": "));
  return s;
}

// A preset of data/models/ (name and source required) or a user's file (its stem names it).
StatusOr<TransformerSpec> LoadModelYaml(const std::string& path, bool preset) {
  NDT_ASSIGN_OR_RETURN(YamlMap y, LoadYamlMapFile(path));
  return FromYaml(y, fs::path(path).stem().string(), preset);
}

}  // namespace

StatusOr<TransformerSpec> LoadModelFile(const std::string& path) {
  return LoadModelYaml(path, /*preset=*/false);
}

StatusOr<TransformerSpec> ParseModelYaml(const std::string& text, const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap y, LoadYamlMapString(text, name));
  return FromYaml(y, fs::path(name).stem().string(), /*preset=*/false);
}

StatusOr<std::vector<TransformerSpec>> LoadAllModels(const std::string& dir) {
  std::vector<TransformerSpec> out;
  for (const std::string& n : ListModels(dir)) {
    NDT_ASSIGN_OR_RETURN(TransformerSpec s, LoadModelYaml(dir + "/" + n + ".yaml", true));
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
    if (EqualsIgnoreCase(n, name_or_path)) return LoadModelYaml(dir + "/" + n + ".yaml", true);
  }
  return Status::NotFound("unknown model '" + name_or_path + "'" + DidYouMean(name_or_path, names) +
                          " (see: ndtwin model list)");
}

StatusOr<TransformerSpec> BuildInlineModel(const InlineModelArgs& a) {
  TransformerSpec s;
  s.name = a.name;
  s.source = "command-line flags";
  if (!IsModelArch(a.arch)) {
    return Status::InvalidInput("--arch must be one of " + ModelArchList() + " (got '" + a.arch +
                                "')");
  }
  // No flag gives experts (or MLA): an inline "mixtral" or "deepseek" would be a dense model
  // under a mixture-of-experts name, and --ep would then refuse it as dense.
  if (a.arch == "mixtral" || a.arch == "deepseek") {
    return Status::InvalidInput("--arch " + a.arch +
                                ": an inline model has no experts (no flags for them); use "
                                "--model, --model-file or --hf-config for a mixture of experts, or "
                                "--arch llama for its dense shape");
  }
  const ArchDefaults d = DefaultsOf(a.arch);
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
  s.ffn_hidden = a.ffn > 0 ? a.ffn : d.ffn(a.hidden);
  s.vocab = a.vocab > 0 ? a.vocab : d.vocab();
  s.seq_len = a.seq > 0 ? a.seq : d.seq();
  s.activation = d.activation();
  s.norm = d.norm();
  s.attention = s.kv_heads == s.heads ? AttentionKind::kMha : AttentionKind::kGqa;
  s.tied_embeddings = d.gpt;
  s.biases = d.gpt;
  s.learned_positions = d.gpt;
  s.dropout = d.dropout();
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
  // Every integer is bounded as the flags and model files bound it (transformer.h): a
  // max_position_embeddings of 2^62 is refused, not simulated.
  auto get_int = [&](std::initializer_list<const char*> keys, int64_t def, bool required,
                     int64_t lo, int64_t hi) -> StatusOr<int64_t> {
    for (const char* k : keys) {
      auto it = j.find(k);
      if (it != j.end() && it->is_number_integer()) {
        if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(hi)) {
          return Status::InvalidInput(name + ": " + k + " must be in " + std::to_string(lo) + ".." +
                                      std::to_string(hi) + " (got " + it->dump() + ")");
        }
        const int64_t v = it->get<int64_t>();
        NDT_RETURN_IF_ERROR(CheckModelDim(name + ": " + k, v, lo, hi));
        return v;
      }
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
  // A Hugging Face checkout's config.json is named by its folder (Llama-2-70b-hf/config.json);
  // any other file by its own name (/tmp/x/qwen3-moe.json is "qwen3-moe", not "x").
  const fs::path file(name);
  if (file.filename() == "config.json") s.name = file.parent_path().filename().string();
  if (s.name.empty() || s.name == ".") s.name = file.stem().string();
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
  NDT_ASSIGN_OR_RETURN(s.layers, get_int({"num_hidden_layers", "n_layer", "num_layers"}, 0, true, 1,
                                         kMaxModelLayers));
  NDT_ASSIGN_OR_RETURN(s.hidden,
                       get_int({"hidden_size", "n_embd", "d_model"}, 0, true, 1, kMaxModelHidden));
  NDT_ASSIGN_OR_RETURN(s.heads,
                       get_int({"num_attention_heads", "n_head"}, 0, true, 1, kMaxModelHeads));
  NDT_ASSIGN_OR_RETURN(s.kv_heads,
                       get_int({"num_key_value_heads"}, s.heads, false, 1, kMaxModelHeads));
  if (!j.contains("head_dim") && s.hidden % s.heads != 0) {
    return Status::InvalidInput(name + ": hidden_size (" + std::to_string(s.hidden) +
                                ") is not divisible by num_attention_heads (" +
                                std::to_string(s.heads) + ") and no head_dim is given");
  }
  NDT_ASSIGN_OR_RETURN(s.head_dim,
                       get_int({"head_dim"}, s.hidden / s.heads, false, 1, kMaxModelHeadDim));
  NDT_ASSIGN_OR_RETURN(s.vocab, get_int({"vocab_size"}, 0, true, 1, kMaxModelVocab));
  NDT_ASSIGN_OR_RETURN(s.seq_len, get_int({"max_position_embeddings", "n_positions", "seq_length"},
                                          4096, false, 1, kMaxModelSeq));
  std::string act = "silu";
  for (const char* k : {"hidden_act", "activation_function"}) {
    auto it = j.find(k);
    if (it != j.end() && it->is_string()) act = it->get<std::string>();
  }
  const bool gated = act == "silu" || act == "swiglu" || act == "swish";
  s.activation = gated ? Activation::kSwiglu : Activation::kGelu;
  // Absent: the family's rule, as Hugging Face's own config classes default it (LlamaConfig's
  // 11008 for 4096 is the 256-rounded 8h/3; GPT-2's n_inner None is 4h).
  NDT_ASSIGN_OR_RETURN(s.ffn_hidden, get_int({"intermediate_size", "n_inner", "ffn_dim"},
                                             DefaultsOf(gated ? "llama" : "gpt").ffn(s.hidden),
                                             false, 1, kMaxModelFfn));
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
                       get_int({"num_local_experts", "n_routed_experts", "num_experts"}, 0, false,
                               0, kMaxModelExperts));
  if (experts > 0) {
    s.moe.experts = static_cast<int>(experts);
    NDT_ASSIGN_OR_RETURN(int64_t k, get_int({"num_experts_per_tok"}, 2, false, 1, experts));
    NDT_ASSIGN_OR_RETURN(int64_t sh, get_int({"n_shared_experts"}, 0, false, 0, kMaxModelExperts));
    NDT_ASSIGN_OR_RETURN(int64_t fk, get_int({"first_k_dense_replace"}, 0, false, 0, s.layers));
    NDT_ASSIGN_OR_RETURN(s.moe.expert_ffn_hidden,
                         get_int({"moe_intermediate_size"}, s.ffn_hidden, false, 1, kMaxModelFfn));
    s.moe.top_k = static_cast<int>(k);
    s.moe.shared_experts = static_cast<int>(sh);
    s.moe.first_k_dense = static_cast<int>(fk);
  }
  if (j.contains("kv_lora_rank") && j["kv_lora_rank"].is_number_integer()) {
    s.attention = AttentionKind::kMla;
    NDT_ASSIGN_OR_RETURN(s.mla.kv_lora_rank,
                         get_int({"kv_lora_rank"}, 0, true, 1, kMaxModelHidden));
    NDT_ASSIGN_OR_RETURN(s.mla.q_lora_rank, get_int({"q_lora_rank"}, 0, false, 0, kMaxModelHidden));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_rope_head_dim,
                         get_int({"qk_rope_head_dim"}, 0, true, 0, kMaxModelHeadDim));
    NDT_ASSIGN_OR_RETURN(s.mla.qk_nope_head_dim,
                         get_int({"qk_nope_head_dim"}, 0, true, 1, kMaxModelHeadDim));
    NDT_ASSIGN_OR_RETURN(s.mla.v_head_dim, get_int({"v_head_dim"}, 0, true, 1, kMaxModelHeadDim));
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
  NDT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "--hf-config"));
  return ParseHfConfig(text, path);
}

}  // namespace ndt
