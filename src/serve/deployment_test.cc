#include "serve/deployment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace ndt {
namespace {

TransformerSpec Llama2_70b() {
  StatusOr<TransformerSpec> m = LoadModel("llama2-70b", ModelsDir(""));
  NDT_CHECK(m.ok(), m.status().message());
  return *m;
}

GpuSpec Gpu80GB() {
  GpuSpec g;
  g.name = "test-80GB";
  g.memory_bytes = 80e9;
  g.memory_Bps = 3.35e12;
  return g;
}

TEST(Deployment, KvCapacityMatchesHandDerivation) {
  // Llama 2 70B parameters by hand (inference_workloads.md §4): per layer attention
  // 2 x 8192^2 (Q, O) + 2 x 8192 x 1024 (K, V) = 150,994,944; MLP 3 x 8192 x 28672 =
  // 704,643,072; 2 RMSNorms 16,384 -> 855,654,400 per layer, x 80 = 68,452,352,000; embedding +
  // LM head 2 x 32000 x 8192 = 524,288,000; final norm 8,192: total 68,976,648,192.
  // FP8 weights, except the embedding, LM head and norms (524,288,000 + 80 x 16,384 + 8,192 =
  // 525,606,912) at 2 B: 69,502,255,104 bytes, at TP2 34,751,127,552 per GPU. Free: 80e9 - that
  // - 2 GiB workspace (2,147,483,648) = 43,101,388,800; x 0.9 = 38,791,249,920 bytes of KV per GPU.
  // FP8 KV per token per GPU: 2 (K, V) x 80 layers x 4 heads (8 / TP2) x 128 x 1 byte = 81,920.
  // Tokens per replica: floor(38,791,249,920 / 81,920) = 473,526; blocks: 473,526 / 32 = 14,797.
  EngineParams p;
  p.kv_free_memory_frac = 0.9;
  p.workspace_bytes = 2.0 * (1 << 30);
  p.block_tokens = 32;
  DeploymentRequest r;
  r.tp = 2;
  r.weights = Dtype::kFp8;
  r.kv = Dtype::kFp8;
  StatusOr<MemoryPlan> m = PlanMemory(Llama2_70b(), Gpu80GB(), r, p);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_NEAR(m->weight_bytes_per_gpu, 34751127552.0, 1.0);
  EXPECT_NEAR(m->kv_bytes_per_token_per_gpu, 81920.0, 1e-9);
  EXPECT_EQ(m->kv_tokens_per_replica, 473526);
  EXPECT_EQ(m->kv_blocks_per_replica, 14797);
}

TEST(Deployment, WorkspaceGrowsWithMaxNumTokens) {
  // Llama 2 70B: hidden 8192, SwiGLU ffn 28672, 64 heads, 8 K/V heads of 128, vocab 32000; fp16
  // activations. Per token at TP1: 2 x 8192 (residual, norm) + max(3 x 28672 = 86,016, q/k/v/out
  // (2 x 64 + 2 x 8) x 128 = 18,432) = 102,400 elements = 204,800 bytes. Logits: 2048 x 32000 x
  // 4 = 262,144,000 bytes.
  //   8192 tokens: 8192 x 204,800 + 262,144,000 = 1,939,865,600 < 2 GiB: the 2 GiB floor.
  //   65536 tokens: 65536 x 204,800 + 262,144,000 = 13,683,916,800.
  //   TP4, 65536 tokens: (16,384 + 86,016 / 4) x 2 = 75,776 bytes a token: 5,228,199,936.
  EngineParams p;
  DeploymentRequest r;
  r.tp = 1;
  r.max_batch = 2048;
  r.max_num_tokens = 8192;
  EXPECT_EQ(WorkspaceBytes(Llama2_70b(), r, p), 2.0 * (1 << 30));
  r.max_num_tokens = 65536;
  EXPECT_NEAR(WorkspaceBytes(Llama2_70b(), r, p), 13683916800.0, 1.0);
  r.tp = 4;
  EXPECT_NEAR(WorkspaceBytes(Llama2_70b(), r, p), 5228199936.0, 1.0);
}

TEST(Deployment, LargeTokenBudgetShrinksTheKvCache) {
  // As KvCapacityMatchesHandDerivation (FP8, TP2, 80 GB), with max_num_tokens 65536 and batch
  // 2048: workspace 65536 x (16,384 + 86,016 / 2) x 2 + 262,144,000 = 8,046,772,224 bytes (not
  // 2 GiB). Free: 80e9 - 34,751,127,552 - 8,046,772,224 = 37,202,100,224; x 0.9 =
  // 33,481,890,201.6 of KV per GPU; / 81,920 bytes a token = 408,714 tokens (473,526 at 2 GiB).
  EngineParams p;
  p.kv_free_memory_frac = 0.9;
  p.block_tokens = 32;
  DeploymentRequest r;
  r.tp = 2;
  r.weights = Dtype::kFp8;
  r.kv = Dtype::kFp8;
  r.max_batch = 2048;
  r.max_num_tokens = 65536;
  StatusOr<MemoryPlan> m = PlanMemory(Llama2_70b(), Gpu80GB(), r, p);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_NEAR(m->workspace_bytes, 8046772224.0, 1.0);
  EXPECT_EQ(m->kv_tokens_per_replica, 408714);
}

TEST(Deployment, Fp16WeightsOnOneGpuDoNotFitAndSayHowToFix) {
  // 68.98e9 x 2 bytes = 138 GB > 80 GB.
  DeploymentRequest r;
  r.tp = 1;
  StatusOr<MemoryPlan> m = PlanMemory(Llama2_70b(), Gpu80GB(), r, EngineParams{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kDoesNotFit);
  EXPECT_NE(m.status().message().find("138.0 GB of weights"), std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find("--tp"), std::string::npos);
}

// The advice names only precisions narrower than the one given: --weights fp8 was told to use
// "(fp8, fp4)", fp4 to lower a precision it could not.
TEST(Deployment, DoesNotFitAdvisesOnlyNarrowerWeights) {
  EXPECT_EQ(NarrowerWeights(Dtype::kBf16), "fp8, fp4");
  EXPECT_EQ(NarrowerWeights(Dtype::kFp8), "fp4");
  EXPECT_EQ(NarrowerWeights(Dtype::kFp4), "");
  GpuSpec g = Gpu80GB();
  g.memory_bytes = 30e9;
  DeploymentRequest r;
  // fp8: 68.98e9 x 1 byte = 69 GB > 30 GB.
  r.weights = Dtype::kFp8;
  StatusOr<MemoryPlan> m = PlanMemory(Llama2_70b(), g, r, EngineParams{});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("lower --weights precision (fp4)"), std::string::npos)
      << m.status().message();
  // fp4: 68.98e9 x 0.5 bytes (plus block scales) ~ 35 GB > 30 GB, and nothing narrower.
  r.weights = Dtype::kFp4;
  m = PlanMemory(Llama2_70b(), g, r, EngineParams{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message().find("--weights precision"), std::string::npos)
      << m.status().message();
  EXPECT_NE(m.status().message().find("use more --tp/--pp"), std::string::npos);
}

TEST(Deployment, KvHeadsReplicateBeyondTheirCount) {
  // 8 K/V heads at TP16: each GPU still holds one head (ceil(8/16) = 1), i.e. 1/8 of the cache
  // per token, not 1/16.
  EngineParams p;
  DeploymentRequest r8, r16;
  r8.tp = 8;
  r16.tp = 16;
  GpuSpec g = Gpu80GB();
  StatusOr<MemoryPlan> a = PlanMemory(Llama2_70b(), g, r8, p);
  StatusOr<MemoryPlan> b = PlanMemory(Llama2_70b(), g, r16, p);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(a->kv_bytes_per_token_per_gpu, b->kv_bytes_per_token_per_gpu);
}

TEST(Deployment, ReplicasFillVmsAndTpStaysInTheNvlinkDomain) {
  SkuSpec s;
  s.name = "test";
  s.gpus = 8;
  s.nvlink_domain_gpus = 8;
  s.infiniband = InfinibandSpec{};
  EXPECT_EQ(*CountReplicas(s, 2, 2, 1, 1), 8);  // 4 per VM x 2
  EXPECT_EQ(*CountReplicas(s, 1, 3, 1, 1), 2);  // 8 / 3 = 2, two GPUs idle
  EXPECT_EQ(*CountReplicas(s, 2, 8, 2, 1), 1);  // PP crosses the two VMs
  EXPECT_FALSE(CountReplicas(s, 2, 16, 1, 1).ok());
  EXPECT_FALSE(CountReplicas(s, 1, 8, 2, 1).ok());
  // Without InfiniBand a replica must stay in one VM: its pipeline sends have no network.
  s.infiniband.reset();
  EXPECT_EQ(*CountReplicas(s, 2, 2, 1, 1), 8);
  StatusOr<int> across = CountReplicas(s, 2, 8, 2, 1);
  ASSERT_FALSE(across.ok());
  EXPECT_EQ(across.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(across.status().message().find("no InfiniBand"), std::string::npos);
}

// On NVL72 sizes a TP group may span VMs but never two racks (18 VMs of 4 GPUs each).
TEST(Deployment, TpGroupsAcrossVmsStayInsideOneRack) {
  SkuSpec s;
  s.name = "test-nvl72";
  s.gpus = 4;
  s.nvlink_domain_gpus = 72;
  s.vms_per_nvlink_domain = 18;
  s.infiniband = InfinibandSpec{};
  // One rack: 72 / 16 = 4 TP16 groups (8 GPUs idle).
  EXPECT_EQ(*CountReplicas(s, 18, 16, 1, 1), 4);
  // 20 VMs: rack 1 holds 4, rack 2 (2 VMs, 8 GPUs) none; 80 / 16 = 5 counted a straddler.
  EXPECT_EQ(*CountReplicas(s, 20, 16, 1, 1), 4);
  // Two racks: 4 + 4 = 8, not 144 / 16 = 9.
  EXPECT_EQ(*CountReplicas(s, 36, 16, 1, 1), 8);
  // TP8 tiles a rack (9 per rack); a partial rack of 2 VMs holds one more: 9 + 1 = 10.
  EXPECT_EQ(*CountReplicas(s, 20, 8, 1, 1), 10);
  // PP crosses racks: 8 TP16 groups on two racks make 2 replicas of PP4.
  EXPECT_EQ(*CountReplicas(s, 36, 16, 4, 1), 2);
  // 80 GPUs are enough for TP16 x PP5 but only 4 TP16 groups fit inside racks.
  StatusOr<int> none = CountReplicas(s, 20, 16, 5, 1);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(none.status().message().find("hold 4"), std::string::npos);
}

// The in-engine NCCL efficiency is looked up by arch: an exact name, else the longest listed name
// that starts the arch (GB300's blackwell_ultra takes blackwell's), else 1.
TEST(Deployment, NcclInEngineEfficiencyByArchPrefix) {
  EngineParams p;
  p.nccl_in_engine_efficiency = {{"hopper", 0.9}, {"blackwell", 0.6}, {"blackwell_ultra", 0.5}};
  EXPECT_DOUBLE_EQ(p.NcclInEngineEfficiency("hopper"), 0.9);
  EXPECT_DOUBLE_EQ(p.NcclInEngineEfficiency("blackwell"), 0.6);
  EXPECT_DOUBLE_EQ(p.NcclInEngineEfficiency("blackwell_ultra"), 0.5);
  p.nccl_in_engine_efficiency.erase("blackwell_ultra");
  EXPECT_DOUBLE_EQ(p.NcclInEngineEfficiency("blackwell_ultra"), 0.6);
  EXPECT_DOUBLE_EQ(p.NcclInEngineEfficiency("ampere"), 1.0);
  StatusOr<EngineParams> loaded = LoadEngineParams("");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_GT(loaded->NcclInEngineEfficiency("blackwell"), 0.0);
  EXPECT_LE(loaded->NcclInEngineEfficiency("blackwell"), 1.0);
  ASSERT_FALSE(loaded->cuda_graph_padded_sizes.empty());
  EXPECT_EQ(loaded->cuda_graph_padded_sizes.back(), 8192);
}

// The 2024 all-reduce kernels' reads in flight come from engine.yaml: 24 blocks x 512 threads x
// 16 B = 196,608 B; a zero there is refused with the key's name.
TEST(Deployment, AllReduceKernelTraitsLoadAndAreChecked) {
  StatusOr<EngineParams> loaded = LoadEngineParams("");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_DOUBLE_EQ(loaded->custom_allreduce.inflight_bytes_2024, 196608.0);
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("ndt_deployment_test_engine_" + std::to_string(::getpid()));
  fs::create_directories(dir / "serve");
  std::ifstream in(std::string(NDT_DATA_DIR) + "/serve/engine.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const std::string bad = std::regex_replace(
      text.str(), std::regex("(kernel_max_blocks_2024:\\n    value: )24"), "$010");
  ASSERT_NE(bad, text.str());
  std::ofstream(dir / "serve" / "engine.yaml") << bad;
  StatusOr<EngineParams> refused = LoadEngineParams(dir.string());
  fs::remove_all(dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("kernel_max_blocks_2024"), std::string::npos)
      << refused.status().message();
}

// The 2024 kernels' read round trip by arch (engine.yaml remote_read_round_trip_2024): an arch
// listed gets its value, one not listed 0 (serve/allreduce.h then uses 2 x the path's latency);
// a round trip of 0 is refused with the arch's name.
TEST(Deployment, RemoteReadRoundTripByArch) {
  EngineParams p;
  p.remote_read_round_trip_2024_s["hopper"] = 1.5e-6;
  EXPECT_DOUBLE_EQ(p.RemoteReadRoundTrip2024("hopper"), 1.5e-6);
  EXPECT_DOUBLE_EQ(p.RemoteReadRoundTrip2024("ampere"), 0.0);
  StatusOr<EngineParams> loaded = LoadEngineParams("");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_GT(loaded->RemoteReadRoundTrip2024("hopper"), 0.0);
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("ndt_deployment_test_rtt_" + std::to_string(::getpid()));
  fs::create_directories(dir / "serve");
  std::ifstream in(std::string(NDT_DATA_DIR) + "/serve/engine.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const std::string bad = std::regex_replace(
      text.str(), std::regex("(remote_read_round_trip_2024:\\n  hopper: \\{value: \")[0-9.]+ us"),
      "$010 us");
  ASSERT_NE(bad, text.str());
  std::ofstream(dir / "serve" / "engine.yaml") << bad;
  StatusOr<EngineParams> refused = LoadEngineParams(dir.string());
  fs::remove_all(dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("hopper"), std::string::npos)
      << refused.status().message();
}

TEST(Deployment, MoeDispatchAndCombineBytesPerToken) {
  // DeepSeek-V3: hidden 7168, top-8. NVFP4 dispatch: 7168 x (0.5 B + one 1-byte FP8 scale per 16
  // elements = 0.5625 B) = 4,032, + 8 choices x 8 B (int32 id + fp32 weight) = 64: 4,096 B. FP8
  // weights gather the 16-bit hidden states: 7168 x 2 = 14,336 + 64 = 14,400 B. Combine (16-bit
  // output): 14,336 B.
  StatusOr<TransformerSpec> m = LoadModel("deepseek-v3", ModelsDir(""));
  ASSERT_TRUE(m.ok());
  EngineParams p;
  p.moe_routing_bytes_per_choice = 8;
  EXPECT_DOUBLE_EQ(MoeDispatchBytesPerToken(*m, Dtype::kFp4, Dtype::kFp16, p), 4096);
  EXPECT_DOUBLE_EQ(MoeDispatchBytesPerToken(*m, Dtype::kFp8, Dtype::kFp16, p), 14400);
  EXPECT_DOUBLE_EQ(MoeCombineBytesPerToken(*m, Dtype::kFp16), 14336);
}

TEST(Deployment, Fp4MlaKeepsSelfAttentionSixteenBit) {
  // DeepSeek-V3 MLA per layer (config.json): q_a 7168 x 1536 = 11,010,048; q_b 1536 x 128 x
  // (128 + 64) = 37,748,736; kv_a 7168 x (512 + 64) = 4,128,768; kv_b 512 x 128 x (128 + 128) =
  // 16,777,216; o 128 x 128 x 7168 = 117,440,512: 187,105,280 weights (+ the q_a and kv_a
  // norms, 1,536 + 512, where the model counts them). At fp4 the checkpoint keeps them 16-bit:
  // 61 layers x 187.1M x (2 - 0.5625) B = 16.41 GB more than all-fp4, on top of the embedding
  // and LM head every 8/4-bit checkpoint keeps 16-bit (2 x 129,280 x 7,168 = 1,853,358,080
  // weights) and the norms (at most 61 x (2 x 7,168 + 1,536 + 512) + 7,168 = 1,006,592).
  StatusOr<TransformerSpec> m = LoadModel("deepseek-v3", ModelsDir(""));
  ASSERT_TRUE(m.ok());
  const double head = 1853358080.0, norms = 1006592.0;
  const double extra = ServedWeightBytes(*m, Dtype::kFp4) - WeightBytes(*m, Dtype::kFp4);
  EXPECT_GE(extra, (187105280.0 * 61 + head) * 1.4375);
  EXPECT_LE(extra, ((187105280.0 + 2048) * 61 + head + norms) * 1.4375);
  // fp8: only the embedding, LM head and norms are wider (1 B more each).
  const double extra8 = ServedWeightBytes(*m, Dtype::kFp8) - WeightBytes(*m, Dtype::kFp8);
  EXPECT_GE(extra8, head);
  EXPECT_LE(extra8, head + norms);
}

TEST(Deployment, QuantizedCheckpointsKeepEmbeddingLmHeadAndNormsSixteenBit) {
  // Llama 3 8B: embedding and LM head 128,256 x 4,096 = 525,336,576 each (untied); norms 32 x 2 x
  // 4,096 + 4,096 = 266,240. ModelOpt quantizes the blocks' linear layers only, so at fp8 these
  // 1,050,939,392 weights take 2 B instead of 1 (1.05 GB more than all-fp8); at fp4 2 - 0.5625 B
  // more; 16-bit weights are stored as they are.
  StatusOr<TransformerSpec> m = LoadModel("llama3-8b", ModelsDir(""));
  ASSERT_TRUE(m.ok());
  const double wide = 2 * 525336576.0 + 266240.0;
  EXPECT_DOUBLE_EQ(ServedWeightBytes(*m, Dtype::kFp8) - WeightBytes(*m, Dtype::kFp8), wide);
  EXPECT_DOUBLE_EQ(ServedWeightBytes(*m, Dtype::kFp4) - WeightBytes(*m, Dtype::kFp4),
                   wide * 1.4375);
  EXPECT_DOUBLE_EQ(ServedWeightBytes(*m, Dtype::kBf16), WeightBytes(*m, Dtype::kBf16));
  // Llama 2 70B at fp4: 2 x 32,000 x 8,192 = 524,288,000 + norms 80 x 2 x 8,192 + 8,192 =
  // 1,318,912 -> 525,606,912 weights x 1.4375 B = 755.6 MB more (no MLA attention term).
  StatusOr<TransformerSpec> llama = LoadModel("llama2-70b", ModelsDir(""));
  ASSERT_TRUE(llama.ok());
  EXPECT_DOUBLE_EQ(ServedWeightBytes(*llama, Dtype::kFp4) - WeightBytes(*llama, Dtype::kFp4),
                   525606912.0 * 1.4375);
}

TEST(Deployment, AttentionDpReplicatesAllButTheRoutedExperts) {
  // DeepSeek-V3 routed experts: 58 MoE layers (61 - 3 dense) x 256 experts x 3 x 7168 x 2048
  // (gate, up, down; no biases) = 653,908,770,816 parameters; at NVFP4's 0.5625 B (4 bits + an
  // FP8 scale per 16) 367,823,683,584 B.
  // TP8: every weight / 8. Attention-DP over 8: the rest whole on each GPU, the experts / 8, so
  // per GPU it holds (all - routed) x 7/8 more bytes than at TP8.
  // KV: MLA latent (512 + 64) x 61 layers x 1 B (fp8) = 35,136 B per token, whole on each rank
  // (as at TP8, where MLA replicates it); each of the 8 ranks has its own cache: the replica's
  // tokens are 8 x one GPU's.
  StatusOr<TransformerSpec> m = LoadModel("deepseek-v3", ModelsDir(""));
  ASSERT_TRUE(m.ok());
  const double routed = RoutedExpertBytes(*m, Dtype::kFp4);
  EXPECT_DOUBLE_EQ(routed, 367823683584.0);
  EngineParams p;
  p.kv_free_memory_frac = 0.9;
  p.block_tokens = 32;
  GpuSpec g = Gpu80GB();
  g.memory_bytes = 180e9;
  DeploymentRequest r;
  r.tp = 8;
  r.ep = 8;
  r.weights = Dtype::kFp4;
  r.kv = Dtype::kFp8;
  r.max_num_tokens = 1024;
  r.max_batch = 64;
  StatusOr<MemoryPlan> tp8 = PlanMemory(*m, g, r, p);
  r.attention_dp = true;
  StatusOr<MemoryPlan> adp = PlanMemory(*m, g, r, p);
  ASSERT_TRUE(tp8.ok() && adp.ok());
  const double rest = ServedWeightBytes(*m, Dtype::kFp4) - routed;
  EXPECT_NEAR(adp->weight_bytes_per_gpu, rest + routed / 8, 1.0);
  EXPECT_NEAR(adp->weight_bytes_per_gpu - tp8->weight_bytes_per_gpu, rest * 7 / 8, 1.0);
  EXPECT_DOUBLE_EQ(adp->kv_bytes_per_token_per_gpu, 35136);
  const int64_t rank_tokens =
      static_cast<int64_t>(std::floor(adp->kv_bytes_per_gpu / adp->kv_bytes_per_token_per_gpu));
  EXPECT_EQ(adp->kv_tokens_per_replica, 8 * rank_tokens);
  EXPECT_EQ(adp->kv_blocks_per_replica, 8 * (rank_tokens / 32));
}

TEST(Deployment, CapturedGraphSizesStopAtTheEnginesMaxBatch) {
  // TensorRT-LLM's perf-overview sizes (data/serve/engine.yaml cuda_graph_padded_batch_sizes).
  const std::vector<int> sizes = {1,   2,   4,   8,    16,   32,   64,  128,
                                  256, 384, 512, 1024, 2048, 4096, 8192};
  // trtllm-bench's B200 2048/2048 engine: max batch 224, 2272 tokens. Cap min(224, 2272) = 224:
  // the sizes up to 128, then 256 > 224 adds the cap itself, 224.
  EXPECT_EQ(CapturedGraphSizes(sizes, 224, 2272),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 224}));
  // Max batch 512, 2048 tokens: 512 is a configured size, so nothing is added after it.
  EXPECT_EQ(CapturedGraphSizes(sizes, 512, 2048),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512}));
  // The token budget binds when it is below the max batch: min(512, 300) = 300.
  EXPECT_EQ(CapturedGraphSizes(sizes, 512, 300),
            (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256, 300}));
  // Every configured size fits: unchanged.
  EXPECT_EQ(CapturedGraphSizes({1, 8, 64}, 4096, 8192), (std::vector<int>{1, 8, 64}));
  EXPECT_TRUE(CapturedGraphSizes({}, 224, 2272).empty());
}

}  // namespace
}  // namespace ndt
