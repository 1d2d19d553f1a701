#include "report/model_render.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "report/text.h"

namespace ndt {
namespace {

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

}  // namespace

Json ModelListJson(const std::vector<TransformerSpec>& models) {
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
  return j;
}

std::string ModelListText(const std::vector<TransformerSpec>& models) {
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
  return p.take();
}

Json ModelShowJson(const TransformerSpec& s) {
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
  return j;
}

std::string ModelShowText(const TransformerSpec& s) {
  const ParamCounts c = CountParams(s);
  const double train_flops = TrainingFlopsPerToken(s, s.seq_len, /*causal=*/false);
  const double fwd_flops = ForwardFlopsPerToken(s, static_cast<double>(s.seq_len));
  const double kv16 = KvCacheBytesPerToken(s, Dtype::kFp16);
  const double kv8 = KvCacheBytesPerToken(s, Dtype::kFp8);
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
  return p.take();
}

}  // namespace ndt
