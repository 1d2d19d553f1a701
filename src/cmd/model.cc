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
#include "cmd/text.h"
#include "hw/catalog.h"
#include "model/transformer.h"

namespace ndt {
namespace {

struct ModelListOptions : CommandRequest {
  void Declare(OptionList*) override {}
};

struct ModelShowOptions : CommandRequest {
  std::string name;
  std::string hf_config;
  void Declare(OptionList* o) override {
    o->Add("name", &name, "Preset name (e.g. llama2-70b) or a model .yaml file").Positional();
    o->Add("hf-config", &hf_config, "A Hugging Face config.json instead of NAME").LocalFile();
  }
};

// 68.98e9 -> "68.98B", 125.2e6 -> "125.2M".
std::string Count(double v) {
  if (v >= 1e12) return fmt::format("{:.2f}T", v / 1e12);
  if (v >= 1e9) return fmt::format("{:.2f}B", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.1f}M", v / 1e6);
  return fmt::format("{:.0f}", v);
}

std::string MoeText(const TransformerSpec& s) {
  if (!s.is_moe()) return "-";
  std::string out = std::to_string(s.moe.experts);
  if (s.moe.shared_experts > 0) out += "+" + std::to_string(s.moe.shared_experts);
  return out + " top-" + std::to_string(s.moe.top_k);
}

Json MoeJson(const TransformerSpec& s) {
  if (!s.is_moe()) return nullptr;
  return Json{{"experts", s.moe.experts},
              {"top_k", s.moe.top_k},
              {"shared_experts", s.moe.shared_experts},
              {"expert_ffn_hidden", s.moe.expert_ffn_hidden},
              {"first_k_dense", s.moe.first_k_dense},
              {"capacity_factor", s.moe.capacity_factor}};
}

StatusOr<CommandOutput> RunList(const Context& ctx, const ModelListOptions&, Diagnostics*) {
  const std::string dir = ModelsDir(ctx.data_dir);
  NDT_ASSIGN_OR_RETURN(std::vector<TransformerSpec> models, LoadAllModels(dir));
  Json j;
  {
    j["schema"] = "ndtwin.model_list/1";
    j["models"] = Json::array();
    for (const TransformerSpec& s : models) {
      j["models"].push_back(Json{{"name", s.name},
                                 {"params", CountParams(s).total},
                                 {"layers", s.layers},
                                 {"hidden", s.hidden},
                                 {"heads", s.heads},
                                 {"kv_heads", s.kv_heads},
                                 {"ffn_hidden", s.ffn_hidden},
                                 {"vocab", s.vocab},
                                 {"seq_len", s.seq_len},
                                 {"arch", s.arch},
                                 {"moe", MoeJson(s)}});
    }
  }
  std::vector<std::vector<std::string>> rows;
  for (const TransformerSpec& s : models) {
    rows.push_back({s.name, Count(CountParams(s).total), std::to_string(s.layers),
                    std::to_string(s.hidden), std::to_string(s.heads), std::to_string(s.kv_heads),
                    std::to_string(s.ffn_hidden), std::to_string(s.vocab),
                    std::to_string(s.seq_len), s.arch, MoeText(s)});
  }
  TextOut p;
  p.Table({"Model", "Params", "Layers", "Hidden", "Heads", "KV heads", "FFN", "Vocab", "Seq",
           "Arch", "MoE"},
          {false, true, true, true, true, true, true, true, true, false, false}, rows);
  return CommandOutput{j, p.take()};
}

CommandOutput ShowModel(const TransformerSpec& s) {
  const ParamCounts c = CountParams(s);
  const double train_flops = TrainingFlopsPerToken(s, s.seq_len, /*causal=*/false);
  const double fwd_flops = ForwardFlopsPerToken(s, static_cast<double>(s.seq_len));
  const double kv16 = KvCacheBytesPerToken(s, Dtype::kFp16);
  const double kv8 = KvCacheBytesPerToken(s, Dtype::kFp8);
  Json j;
  {
    j["schema"] = "ndtwin.model/1";
    j["name"] = s.name;
    j["arch"] = s.arch;
    j["source"] = s.source;
    j["layers"] = s.layers;
    j["hidden"] = s.hidden;
    j["heads"] = s.heads;
    j["kv_heads"] = s.kv_heads;
    j["head_dim"] = s.head_dim;
    j["ffn_hidden"] = s.ffn_hidden;
    j["vocab"] = s.vocab;
    j["seq_len"] = s.seq_len;
    j["max_context"] = s.served_context();
    j["activation"] = ActivationName(s.activation);
    j["norm"] = NormTypeName(s.norm);
    j["attention"] = AttentionKindName(s.attention);
    j["tied_embeddings"] = s.tied_embeddings;
    j["biases"] = s.biases;
    j["learned_positions"] = s.learned_positions;
    j["dropout"] = s.dropout;
    j["moe"] = MoeJson(s);
    j["mla"] = s.attention == AttentionKind::kMla
                   ? Json{{"q_lora_rank", s.mla.q_lora_rank},
                          {"kv_lora_rank", s.mla.kv_lora_rank},
                          {"qk_rope_head_dim", s.mla.qk_rope_head_dim},
                          {"qk_nope_head_dim", s.mla.qk_nope_head_dim},
                          {"v_head_dim", s.mla.v_head_dim}}
                   : Json(nullptr);
    Json d;
    d["params"] = c.total;
    d["active_params_per_token"] = c.active_per_token;
    d["embedding_params"] = c.embedding;
    d["lm_head_params"] = c.lm_head;
    d["params_per_layer"] = LayerParams(s, s.layers - 1);
    d["training_flops_per_token"] = train_flops;
    d["forward_flops_per_token"] = fwd_flops;
    d["kv_cache_bytes_per_token"] = Json{{"fp16", kv16}, {"fp8", kv8}};
    d["weight_bytes_bf16"] = c.total * 2;
    j["derived"] = d;
  }
  TextOut p;
  auto row = [&p](const std::string& k, const std::string& v) {
    p("%-26s %s\n", (k + ":").c_str(), v.c_str());
  };
  row("Model", s.name);
  row("Arch", s.arch);
  row("Source", s.source);
  row("Layers", std::to_string(s.layers));
  row("Hidden", std::to_string(s.hidden));
  row("Heads", fmt::format("{} (head dim {})", s.heads, s.head_dim));
  row("KV heads", std::to_string(s.kv_heads));
  row("Attention", AttentionKindName(s.attention));
  if (s.attention == AttentionKind::kMla) {
    row("MLA", fmt::format("q_lora {}, kv_lora {}, rope {}, nope {}, v {}", s.mla.q_lora_rank,
                           s.mla.kv_lora_rank, s.mla.qk_rope_head_dim, s.mla.qk_nope_head_dim,
                           s.mla.v_head_dim));
  }
  row("FFN", fmt::format("{} ({})", s.ffn_hidden, ActivationName(s.activation)));
  if (s.is_moe()) {
    row("MoE", fmt::format("{} experts, top-{}, {} shared, expert FFN {}, first {} dense, "
                           "capacity {}",
                           s.moe.experts, s.moe.top_k, s.moe.shared_experts,
                           s.moe.expert_ffn_hidden, s.moe.first_k_dense, s.moe.capacity_factor));
  }
  row("Vocab", std::to_string(s.vocab));
  row("Sequence", std::to_string(s.seq_len));
  if (s.served_context() != s.seq_len) row("Served context", std::to_string(s.served_context()));
  row("Norm", NormTypeName(s.norm));
  row("Tied embeddings", s.tied_embeddings ? "yes" : "no");
  row("Biases", s.biases ? "yes" : "no");
  row("Learned positions", s.learned_positions ? "yes" : "no");
  row("Dropout", fmt::format("{:g}", s.dropout));
  row("Parameters", fmt::format("{} ({:.0f})", Count(c.total), c.total));
  if (s.is_moe()) row("Active per token", Count(c.active_per_token));
  row("Embedding / LM head",
      fmt::format("{} / {}", Count(c.embedding), c.lm_head > 0 ? Count(c.lm_head) : "tied"));
  row("Per layer", Count(LayerParams(s, s.layers - 1)));
  row("Training FLOPs/token",
      fmt::format("{:.4g} (seq {}, full attention, no recompute)", train_flops, s.seq_len));
  row("Forward FLOPs/token", fmt::format("{:.4g} (context {})", fwd_flops, s.seq_len));
  row("KV cache/token", fmt::format("{:.0f} KiB fp16, {:.0f} KiB fp8", kv16 / 1024, kv8 / 1024));
  row("Weights", fmt::format("{:.1f} GB bf16", c.total * 2 / 1e9));
  return CommandOutput{j, p.take()};
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
