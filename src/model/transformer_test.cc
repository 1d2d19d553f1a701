#include "model/transformer.h"

#include <gtest/gtest.h>

#include "model/ops.h"
#include "model/testing.h"

namespace ndt {
namespace {

using model_testing::Preset;

TEST(Presets, AllLoadAndValidate) {
  StatusOr<std::vector<TransformerSpec>> all = LoadAllModels(ModelsDir(""));
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->size(), 27u);  // 8 GPT-3 + 10 Megatron + 6 Llama + 2 Mixtral + DeepSeek-V3
  for (const TransformerSpec& s : *all) {
    EXPECT_TRUE(Validate(s).ok()) << s.name;
    EXPECT_FALSE(s.source.empty()) << s.name;
  }
}

TEST(Presets, UnknownNameSuggestsTheClosest) {
  StatusOr<TransformerSpec> s = LoadModel("llama2-70", ModelsDir(""));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(s.status().message(),
            "unknown model 'llama2-70'; did you mean 'llama2-70b'? (see: ndtwin model list)");
}

TEST(Presets, NamesAreCaseInsensitive) { EXPECT_EQ(Preset("LLaMA2-70B").name, "llama2-70b"); }

// inference_workloads.md section 4: attention 151.0 M + MLP 704.6 M per layer, embeddings and
// LM head 262.1 M each, total about 68.98 B; KV 2*80*8*128 elements = 320 KiB at fp16.
TEST(Llama2_70b, ParametersAndKvCacheMatchHandDerivation) {
  const TransformerSpec s = Preset("llama2-70b");
  const ParamCounts c = CountParams(s);
  EXPECT_NEAR(c.attention_per_layer, 8192.0 * 8192 * 2 + 8192.0 * 1024 * 2, 1);  // 150,994,944
  EXPECT_NEAR(c.dense_mlp_per_layer, 3.0 * 8192 * 28672, 1);                     // 704,643,072
  EXPECT_NEAR(LayerParams(s, 0), 855.65e6, 0.01e6);
  EXPECT_NEAR(c.embedding, 262.144e6, 1);
  EXPECT_NEAR(c.lm_head, 262.144e6, 1);
  EXPECT_NEAR(c.total / 1e9, 68.98, 0.005);
  EXPECT_DOUBLE_EQ(KvCacheBytesPerToken(s, Dtype::kFp16), 320 * 1024.0);
  EXPECT_DOUBLE_EQ(KvCacheBytesPerToken(s, Dtype::kFp8), 160 * 1024.0);
}

// DeepSeek-V3 reports 671 B total and 37 B activated parameters (without the 14 B MTP module).
TEST(DeepSeekV3, ParameterCountsNearReported) {
  const ParamCounts c = CountParams(Preset("deepseek-v3"));
  EXPECT_NEAR(c.total / 1e9, 671, 3);
  EXPECT_NEAR(c.active_per_token / 1e9, 37.5, 1.5);
  // MLA cache: (512 + 64) * 61 layers * 2 bytes.
  EXPECT_DOUBLE_EQ(KvCacheBytesPerToken(Preset("deepseek-v3"), Dtype::kBf16), 576.0 * 61 * 2);
}

// Mixtral 8x7B: 46.7 B total, 12.9 B active (Jiang et al. 2024).
TEST(Mixtral, ParameterCountsNearReported) {
  const ParamCounts c = CountParams(Preset("mixtral-8x7b"));
  EXPECT_NEAR(c.total / 1e9, 46.7, 0.1);
  EXPECT_NEAR(c.active_per_token / 1e9, 12.9, 0.1);
}

// GPT-3 175B: 96 layers of 12h^2 (+biases, norms) + (50257 + 2048) h embeddings = 174.6 B.
TEST(Gpt3, Has175BParameters) {
  EXPECT_NEAR(CountParams(Preset("gpt3-175b")).total / 1e9, 175, 0.5);
}

// For the GPT shape the per-token training FLOPs are 72lh^2 + 12lhs + 6Vh, which is exactly
// eq. (3) without recompute divided by B*s.
TEST(Flops, TrainingPerTokenEqualsNarayananWithoutRecompute) {
  const TransformerSpec s = Preset("megatron-18b");
  const double per_token = TrainingFlopsPerToken(s, 2048, /*causal=*/false);
  EXPECT_NEAR(per_token * 1024 * 2048 / NarayananIterationFlops(s, 1024, 2048, false), 1.0, 1e-12);
  // Full recompute adds one forward: 96/72 on the layer terms and 96/16 = 6 on the head term.
  const double l = 40, h = 6144, v = 51200, sq = 2048;
  const double with = 96 * 1024 * sq * l * h * h * (1 + sq / (6 * h) + v / (16 * l * h));
  EXPECT_DOUBLE_EQ(NarayananIterationFlops(s, 1024, 2048, true), with);
}

TEST(Flops, ForwardIsTwoFlopsPerActiveWeightPlusAttention) {
  const TransformerSpec s = Preset("llama2-70b");
  const ParamCounts c = CountParams(s);
  // Matrices only: total - embedding - norms (no biases in Llama).
  const double matrices = c.total - c.embedding - 80 * c.norms_per_layer - c.final_norm;
  const double attn = 80 * 4.0 * 64 * 128 * 1000;  // 1000 keys
  EXPECT_NEAR(ForwardFlopsPerToken(s, 1000), 2 * matrices + attn, 1);
}

// Korthikanti et al. 2022 Table 2 for a GPT layer: s=2048, b=1, h=6144, a=48, t=8.
TEST(Activations, MatchKorthikantiTable2) {
  const TransformerSpec s = Preset("megatron-18b");
  const double sbh = 2048.0 * 1 * 6144, as_h = 48.0 * 2048 / 6144, t = 8;
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 1, false, Recompute::kNone, false),
              sbh * (34 + 5 * as_h), 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, false, Recompute::kNone, false),
              sbh * (10 + 24 / t + 5 * as_h / t), 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, true, Recompute::kNone, false),
              sbh / t * (34 + 5 * as_h), 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, false, Recompute::kSelective, false),
              sbh * (10 + 24 / t), 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, true, Recompute::kSelective, false),
              34 * sbh / t, 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, false, Recompute::kFull, false), 2 * sbh,
              1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, true, Recompute::kFull, false), 2 * sbh / t,
              1);
}

// Without dropout (Llama recipes; PyTorch stores no mask at p = 0) the two 1-byte hidden masks
// (2sbh) and the scores' mask and dropped copy (3as^2b) go: no TP sbh(32 + 2as/h).
TEST(Activations, NoDropoutKeepsNoMasks) {
  TransformerSpec s = Preset("megatron-18b");
  ASSERT_EQ(s.dropout, 0.1);  // Megatron's GPT runs
  s.dropout = 0;
  const double sbh = 2048.0 * 1 * 6144, as_h = 48.0 * 2048 / 6144;
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 1, false, Recompute::kNone, false),
              sbh * (32 + 2 * as_h), 1);
  s.dropout = 1.5;
  EXPECT_FALSE(Validate(s).ok());
}

// Flash attention keeps 4 bytes of log-sum-exp per head and token instead of the 5as scores:
// no TP: sbh(34 + 4a/h); TP 8: sbh(10 + 24/t + 4a/(ht)); selective and full unchanged.
TEST(Activations, FlashAttentionDropsTheScores) {
  const TransformerSpec s = Preset("megatron-18b");
  const double sbh = 2048.0 * 1 * 6144, a_h = 48.0 / 6144, t = 8;
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 1, false, Recompute::kNone, true),
              sbh * (34 + 4 * a_h), 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, false, Recompute::kNone, true),
              sbh * (10 + 24 / t + 4 * a_h / t), 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, false, Recompute::kSelective, true),
              sbh * (10 + 24 / t), 1);
  EXPECT_NEAR(ActivationBytesPerLayer(s, 0, 1, 2048, 8, true, Recompute::kFull, true), 2 * sbh / t,
              1);
}

TEST(Validate, RejectsHeadsNotDivisibleByKvHeads) {
  TransformerSpec s = Preset("llama2-70b");
  s.kv_heads = 6;
  Status st = Validate(s);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "model 'llama2-70b': heads (64) must be divisible by kv_heads (6); set kv_heads to a "
            "divisor of heads");
}

TEST(Inline, LlamaFfnRuleGivesLlama2_7bShape) {
  InlineModelArgs a;
  a.arch = "llama";
  a.layers = 32;
  a.hidden = 4096;
  a.heads = 32;
  StatusOr<TransformerSpec> s = BuildInlineModel(a);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->ffn_hidden, 11008);  // 8*4096/3 = 10922.7 -> next multiple of 256
  EXPECT_NEAR(CountParams(*s).total, CountParams(Preset("llama2-7b")).total, 1);
}

// --arch mixtral / deepseek inline used to build a dense Llama-shaped model tagged "mixtral"
// (no flag sets experts), which --ep then refused as dense: refused with one line instead.
TEST(Inline, MixtureOfExpertsArchesAreRefused) {
  for (const char* arch : {"mixtral", "deepseek"}) {
    InlineModelArgs a;
    a.arch = arch;
    a.layers = 32;
    a.hidden = 4096;
    a.heads = 32;
    StatusOr<TransformerSpec> s = BuildInlineModel(a);
    ASSERT_FALSE(s.ok()) << arch;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(s.status().message().rfind(std::string("--arch ") + arch + ": ", 0), 0u)
        << s.status().message();
  }
}

TEST(Inline, MissingShapeIsAnError) {
  StatusOr<TransformerSpec> s = BuildInlineModel(InlineModelArgs{});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--layers"), std::string::npos);
}

TEST(HfConfig, Llama2_70bConfigMatchesPreset) {
  const char* json = R"({"architectures": ["LlamaForCausalLM"], "hidden_act": "silu",
    "hidden_size": 8192, "intermediate_size": 28672, "max_position_embeddings": 4096,
    "model_type": "llama", "num_attention_heads": 64, "num_hidden_layers": 80,
    "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "tie_word_embeddings": false,
    "vocab_size": 32000})";
  StatusOr<TransformerSpec> s = ParseHfConfig(json, "Llama-2-70b-hf/config.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "Llama-2-70b-hf");
  EXPECT_DOUBLE_EQ(CountParams(*s).total, CountParams(Preset("llama2-70b")).total);
  // A file with another name is named by itself, not by its folder (was "configs").
  EXPECT_EQ(ParseHfConfig(json, "configs/llama2-70b.json")->name, "llama2-70b");
}

TEST(HfConfig, MixtralExpertsAreRead) {
  const char* json = R"({"hidden_act": "silu", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "num_experts_per_tok": 2, "rms_norm_eps": 1e-05,
    "vocab_size": 32000, "model_type": "mixtral"})";
  StatusOr<TransformerSpec> s = ParseHfConfig(json, "config.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(CountParams(*s).total, CountParams(Preset("mixtral-8x7b")).total);
}

TEST(HfConfig, MissingKeyAndBadJsonAreErrors) {
  StatusOr<TransformerSpec> s = ParseHfConfig(R"({"hidden_size": 10})", "c.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "c.json: missing key 'num_hidden_layers'; is this a decoder-only transformer "
            "config.json?");
  EXPECT_FALSE(ParseHfConfig("{", "c.json").ok());
  // A key of the wrong type is an error, not an exception.
  EXPECT_FALSE(ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64,
    "num_attention_heads": 4, "vocab_size": 10, "tie_word_embeddings": "yes"})",
                             "c.json")
                   .ok());
}

TEST(HfConfig, NonTransformersAndUnsplittableHeadsAreErrors) {
  // A state-space model is refused by its model_type, before any missing-key message.
  StatusOr<TransformerSpec> s = ParseHfConfig(R"({"model_type": "mamba", "num_hidden_layers": 4,
    "hidden_size": 64, "vocab_size": 10})",
                                              "c.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a decoder-only transformer"), std::string::npos);
  // 64 / 3 heads leaves no integer head size and no head_dim says otherwise.
  s = ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 3,
    "vocab_size": 10})",
                    "c.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not divisible"), std::string::npos);
  // With an explicit head_dim (as Gemma's configs have) the same shape is fine.
  s = ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 3,
    "head_dim": 32, "intermediate_size": 128, "vocab_size": 10})",
                    "c.json");
  EXPECT_TRUE(s.ok()) << s.status().message();
}

TEST(Yaml, HiddenNotDivisibleByHeadsNeedsHeadDim) {
  const std::string base =
      "name: x\narch: gpt\nsource: s\nlayers: 2\nhidden: 64\nheads: 3\nffn_hidden: 256\n"
      "vocab: 100\nseq_len: 16\nactivation: gelu\nnorm: layernorm\ntied_embeddings: true\n"
      "biases: true\n";
  StatusOr<TransformerSpec> s = ParseModelYaml(base, "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("give head_dim"), std::string::npos);
  EXPECT_TRUE(ParseModelYaml(base + "head_dim: 32\n", "m.yaml").ok());
}

TEST(Yaml, UnknownKeyIsRejected) {
  StatusOr<TransformerSpec> s = ParseModelYaml(
      "name: x\narch: gpt\nsource: s\nlayers: 2\nhidden: 64\nheads: 4\nffn_hidden: 256\n"
      "vocab: 100\nseq_len: 16\nactivation: gelu\nnorm: layernorm\ntied_embeddings: true\n"
      "biases: true\nexperts: 3\n",
      "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("experts: unknown key"), std::string::npos);
}

// A hand-written file needs arch, layers, hidden and heads; the family gives the rest, the same
// defaults as the inline flags (llama: SwiGLU, RMSNorm, ffn 256-rounded 8h/3 = 11008 for 4096,
// vocab 32000, seq 4096; gpt: 4h, 51200, 2048, tied, biases, dropout 0.1).
TEST(Yaml, HandWrittenFileGetsItsArchitecturesDefaults) {
  StatusOr<TransformerSpec> s =
      ParseModelYaml("arch: llama\nlayers: 32\nhidden: 4096\nheads: 32\n", "dir/mine.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->name, "mine");
  EXPECT_EQ(s->ffn_hidden, 11008);
  EXPECT_EQ(s->vocab, 32000);
  EXPECT_EQ(s->seq_len, 4096);
  EXPECT_EQ(s->activation, Activation::kSwiglu);
  EXPECT_FALSE(s->biases);
  // The same as the inline flags give.
  InlineModelArgs a;
  a.arch = "llama";
  a.layers = 32;
  a.hidden = 4096;
  a.heads = 32;
  EXPECT_DOUBLE_EQ(CountParams(*s).total, CountParams(*BuildInlineModel(a)).total);
  s = ParseModelYaml("arch: gpt\nlayers: 2\nhidden: 64\nheads: 4\n", "g.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->ffn_hidden, 256);
  EXPECT_EQ(s->vocab, 51200);
  EXPECT_EQ(s->seq_len, 2048);
  EXPECT_TRUE(s->tied_embeddings);
  EXPECT_DOUBLE_EQ(s->dropout, 0.1);
}

TEST(Yaml, EveryMissingRequiredKeyIsNamedInOneLine) {
  StatusOr<TransformerSpec> s = ParseModelYaml("name: x\nhidden: 64\n", "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("missing required keys arch, layers, heads"),
            std::string::npos)
      << s.status().message();
  EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
}

TEST(Yaml, ValuesNoModelHasAreRefusedWithTheirRange) {
  const std::string base = "arch: llama\nlayers: 2\nheads: 4\n";
  StatusOr<TransformerSpec> s = ParseModelYaml(base + "hidden: 1000000000000000\n", "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("hidden: must be in 1..1048576"), std::string::npos)
      << s.status().message();
  s = ParseModelYaml(base + "hidden: 64\nseq_len: 4611686018427387904\n", "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("seq_len: must be in 1..16777216"), std::string::npos);
  // An architecture the flag rejects is rejected in a file too.
  s = ParseModelYaml("arch: mamba\nlayers: 2\nhidden: 64\nheads: 4\n", "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("arch: must be one of gpt, llama, mixtral, deepseek"),
            std::string::npos);
  // A moe block with zero experts is not a dense model.
  s = ParseModelYaml(base + "hidden: 64\nmoe: {experts: 0, top_k: 1, expert_ffn_hidden: 8}\n",
                     "m.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("moe.experts: must be in 1..4096"), std::string::npos)
      << s.status().message();
  s = ParseModelYaml(base + "hidden: 64\ndropout: .nan\n", "m.yaml");
  EXPECT_FALSE(s.ok());
}

// moe.rank_imbalance: read when whole; each bad field is one line naming it and the fix.
TEST(Yaml, MoeRankImbalanceIsReadAndChecked) {
  const std::string base =
      "arch: mixtral\nlayers: 2\nheads: 4\nhidden: 64\nmoe: {experts: 8, top_k: 2, "
      "expert_ffn_hidden: 8, rank_imbalance: ";
  StatusOr<TransformerSpec> s =
      ParseModelYaml(base + "{ratio: 0.5, ep: 4, source: \"a blog\"}}\n", "m.yaml");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_DOUBLE_EQ(s->moe.imbalance_ratio, 0.5);
  EXPECT_EQ(s->moe.imbalance_ep, 4);
  EXPECT_EQ(s->moe.imbalance_source, "a blog");
  auto error = [&](const std::string& block) {
    StatusOr<TransformerSpec> r = ParseModelYaml(base + block + "}\n", "m.yaml");
    EXPECT_FALSE(r.ok()) << block;
    const std::string m = r.ok() ? "" : std::string(r.status().message());
    EXPECT_EQ(m.find('\n'), std::string::npos);
    return m;
  };
  EXPECT_NE(error("{ratio: 0.5, ep: 4}").find("missing required key source"), std::string::npos);
  EXPECT_NE(error("{ratio: -1, ep: 4, source: x}").find("rank_imbalance.ratio: must be in 0..4096"),
            std::string::npos);
  EXPECT_NE(error("{ratio: 1, ep: 16, source: x}").find("rank_imbalance.ep: must be in 2..8"),
            std::string::npos);
  EXPECT_NE(error("{ratio: 1, ep: 3, source: x}")
                .find("rank_imbalance.ep: must divide experts (8: contiguous expert slots"),
            std::string::npos);
  EXPECT_NE(error("{ratio: 1, ep: 4, source: x, eplb: true}").find("eplb"), std::string::npos);
}

TEST(HfConfig, ASequenceOf2To62IsRefused) {
  StatusOr<TransformerSpec> s = ParseHfConfig(
      R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "vocab_size": 100, "max_position_embeddings": 4611686018427387904})",
      "c.json");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "c.json: max_position_embeddings must be in 1..16777216 (got 4611686018427387904)");
  s = ParseHfConfig(R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
          "vocab_size": 18446744073709551615})",
                    "c.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("vocab_size must be in 1..16777216"), std::string::npos);
}

// LayerTensors splits each layer into the tensors a GPT module holds; they must add up to
// LayerParams for every kind of layer (MHA + GeLU with biases, GQA + SwiGLU, MoE, MLA).
TEST(LayerTensors, SumToLayerParams) {
  for (const char* name : {"gpt3-175b", "llama2-70b", "mixtral-8x7b", "deepseek-v3"}) {
    const TransformerSpec s = Preset(name);
    for (int64_t i : {int64_t{0}, s.layers - 1}) {
      double sum = 0;
      for (const ParamTensor& t : LayerTensors(s, i)) sum += t.params;
      EXPECT_NEAR(sum, LayerParams(s, i), 1e-6 * LayerParams(s, i)) << name << " layer " << i;
    }
  }
}

// GPT-3 175B (h = 12288, LayerNorm, biases, 4h GeLU MLP): 12 tensors per layer, as Megatron's
// ParallelTransformerLayer holds them: LN1 w, b; QKV weight 3h^2 = 452,984,832, QKV bias 3h;
// proj weight h^2 = 150,994,944, proj bias h; LN2 w, b; fc1 weight 4h^2 = 603,979,776, its bias
// 4h; fc2 weight 4h^2, its bias h. Four of them exceed 1e5 elements (DeepSpeed's default
// persistence threshold).
TEST(LayerTensors, Gpt3LayerHasTwelveTensorsFourLarge) {
  const std::vector<ParamTensor> t = LayerTensors(Preset("gpt3-175b"), 0);
  ASSERT_EQ(t.size(), 12u);
  const double h = 12288;
  EXPECT_DOUBLE_EQ(t[2].params, 3 * h * h);
  EXPECT_DOUBLE_EQ(t[4].params, h * h);
  EXPECT_DOUBLE_EQ(t[8].params, 4 * h * h);
  EXPECT_DOUBLE_EQ(t[10].params, 4 * h * h);
  int large = 0;
  for (const ParamTensor& x : t) large += x.params >= 1e5 ? 1 : 0;
  EXPECT_EQ(large, 4);
}

}  // namespace
}  // namespace ndt
