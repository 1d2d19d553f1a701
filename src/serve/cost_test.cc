#include "serve/cost.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "hw/catalog.h"
#include "model/ops.h"

namespace ndt {
namespace {

// The repo's data/ for one GPU and one model, and a CostSpec over them (the caller sets the rest).
// Pointers into it stay valid while it lives: load it in place, never copy it.
struct Loaded {
  std::optional<Catalog> catalog;
  const GpuSpec* gpu = nullptr;
  std::optional<TransformerSpec> model;
  std::optional<ComputeCalibration> cal;
  CostSpec Spec() const {
    CostSpec spec;
    spec.model = &*model;
    spec.gpu = gpu;
    spec.calibration = &*cal;
    return spec;
  }
};

// Use as ASSERT_NO_FATAL_FAILURE(Load("H100-SXM5-80GB", "llama2-7b", &d)).
void Load(const std::string& gpu, const std::string& model, Loaded* d) {
  StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
  ASSERT_TRUE(cat.ok()) << cat.status().message();
  d->catalog = *std::move(cat);
  StatusOr<const GpuSpec*> g = d->catalog->FindGpu(gpu);
  ASSERT_TRUE(g.ok());
  d->gpu = *g;
  StatusOr<TransformerSpec> m = LoadModel(model, ModelsDir(""));
  ASSERT_TRUE(m.ok());
  d->model = *std::move(m);
  StatusOr<ComputeCalibration> cal = LoadComputeCalibration("");
  ASSERT_TRUE(cal.ok());
  d->cal = *std::move(cal);
}

// The LM head of an fp4 (or fp8) checkpoint runs in bf16 (ModelOpt leaves "*lm_head*"
// unquantized): an fp4 iteration's head_s equals the bf16 head's time on the same GPU, and is
// longer than the same head at fp4 would be (GB200: 10 PF fp4 vs 2.5 PF bf16 dense).
TEST(IterationCost, LmHeadStays16Bit) {
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("GB200", "llama2-70b", &d));
  CostSpec spec = d.Spec();
  spec.weights = Dtype::kFp4;
  spec.kv = Dtype::kFp8;
  spec.activations = Dtype::kBf16;
  IterationCostModel cost(spec);
  BatchShape b;
  b.decode_seqs = 1024;
  b.decode_context_tokens = 1024.0 * 500;
  const IterationTime t = cost.Detail(b);
  OpShape bf16;
  bf16.math = bf16.weights = bf16.activations = Dtype::kBf16;
  OpShape fp4 = bf16;
  fp4.math = fp4.weights = Dtype::kFp4;
  const double want = OpsTime(*d.gpu, LmHeadForwardOps(*d.model, 1024, bf16, false), *d.cal);
  EXPECT_DOUBLE_EQ(t.head_s, want);
  EXPECT_GT(want, OpsTime(*d.gpu, LmHeadForwardOps(*d.model, 1024, fp4, false), *d.cal));
}

// The host cost of an iteration is the fixed overhead plus the per-sequence one for every
// sequence it carries (decoders and prompt chunks): 3 ms + 10 us x (100 + 2) = 4.02 ms.
TEST(IterationCost, OverheadPerSequence) {
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("H100-SXM5-80GB", "llama2-7b", &d));
  CostSpec spec = d.Spec();
  spec.overhead_s = 3e-3;
  spec.overhead_per_seq_s = 10e-6;
  IterationCostModel cost(spec);
  BatchShape b;
  b.decode_seqs = 100;
  b.decode_context_tokens = 100.0 * 300;
  b.chunks = {{200, 200}, {50, 250}};
  b.prefill_tokens = 250;
  EXPECT_NEAR(cost.Detail(b).overhead_s, 4.02e-3, 1e-12);
  BatchShape none;
  EXPECT_EQ(cost.Detail(none).overhead_s, 0.0);  // no tokens, no iteration
}

// One iteration with and without host overlap (serve/cost.h). Host work: 3 ms fixed + 10 us x
// 102 sequences = 4.02 ms. Without overlap the iteration is GPU + 4.02 ms. With overlap the 1.02
// ms of per-sequence work hides behind the GPU's G (G > 1.02 ms for this batch of llama2-7b on
// H100: 32 layers of 7e9 / 32 weights read at ~2.9 TB/s alone take ~4.6 ms), leaving
// G + 3 ms: overlap saves exactly 1.02 ms. With 100,000 us per sequence instead the host work
// (10.2 s) exceeds any G here, and the iteration is max(G, 10.2 s) + 3 ms = 10.203 s.
TEST(IterationCost, HostOverlapHidesPerSequenceWork) {
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("H100-SXM5-80GB", "llama2-7b", &d));
  CostSpec spec = d.Spec();
  spec.overhead_s = 3e-3;
  spec.overhead_per_seq_s = 10e-6;
  BatchShape b;
  b.decode_seqs = 100;
  b.decode_context_tokens = 100.0 * 300;
  b.chunks = {{200, 200}, {50, 250}};
  b.prefill_tokens = 250;
  IterationCostModel serial(spec);
  const IterationTime s = serial.Detail(b);
  spec.host_overlap = true;
  IterationCostModel overlapped(spec);
  const IterationTime o = overlapped.Detail(b);
  ASSERT_GT(s.gpu(), 1.02e-3);
  EXPECT_DOUBLE_EQ(o.gpu(), s.gpu());  // the GPU work is the same
  EXPECT_NEAR(s.total(), s.gpu() + 4.02e-3, 1e-12);
  EXPECT_NEAR(o.total(), o.gpu() + 3e-3, 1e-12);
  EXPECT_NEAR(s.total() - o.total(), 1.02e-3, 1e-12);
  EXPECT_NEAR(o.host_s, 4.02e-3, 1e-12);
  spec.overhead_per_seq_s = 0.1;
  IterationCostModel host_bound(spec);
  const IterationTime h = host_bound.Detail(b);
  ASSERT_LT(h.gpu(), 10.2);
  EXPECT_NEAR(h.total(), 10.2 + 3e-3, 1e-9);
}

// The fixed host cost scales with the layers (kernel launches) and collapses to one graph launch
// for a decode-only batch of a captured size. llama2-7b has 32 layers; the fit's reference 80:
// 5 ms x 32 / 80 = 2 ms. With graphs up to 128: a decode-only batch of 5 (captured: 1..31) costs
// the 4 us launch; 40 sequences (not 1..31, not a power of two) or a batch with a prompt chunk
// still launch every kernel (2 ms); 64 and 128 are captured, 256 is above the maximum.
TEST(IterationCost, FixedHostCostScalesWithLayersAndGraphs) {
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("H100-SXM5-80GB", "llama2-7b", &d));
  ASSERT_EQ(d.model->layers, 32);
  CostSpec spec = d.Spec();
  spec.overhead_s = 5e-3;
  spec.overhead_reference_layers = 80;
  BatchShape five;
  five.decode_seqs = 5;
  five.decode_context_tokens = 5.0 * 300;
  IterationCostModel eager(spec);
  EXPECT_NEAR(eager.Detail(five).overhead_s, 2e-3, 1e-15);
  EXPECT_FALSE(eager.Detail(five).graph);
  spec.cuda_graph_max_batch = 128;
  spec.graph_launch_s = 4e-6;
  IterationCostModel graphs(spec);
  EXPECT_TRUE(graphs.Detail(five).graph);
  EXPECT_NEAR(graphs.Detail(five).overhead_s, 4e-6, 1e-15);
  BatchShape forty = five;
  forty.decode_seqs = 40;
  EXPECT_NEAR(graphs.Detail(forty).overhead_s, 2e-3, 1e-15);
  BatchShape mixed = five;
  mixed.chunks = {{100, 100}};
  mixed.prefill_tokens = 100;
  EXPECT_NEAR(graphs.Detail(mixed).overhead_s, 2e-3, 1e-15);
  EXPECT_TRUE(IterationCostModel::GraphCaptured(31, 128));
  EXPECT_TRUE(IterationCostModel::GraphCaptured(64, 128));
  EXPECT_TRUE(IterationCostModel::GraphCaptured(128, 128));
  EXPECT_FALSE(IterationCostModel::GraphCaptured(33, 128));
  EXPECT_FALSE(IterationCostModel::GraphCaptured(256, 128));
  EXPECT_FALSE(IterationCostModel::GraphCaptured(0, 128));
  EXPECT_TRUE(IterationCostModel::GraphCaptured(100, 100));  // the maximum itself
}

// Padded CUDA graphs (perf-overview's enable_padding): a decode-only batch of 1,970 runs the
// 2,048 graph, so its token operators, LM head and all-reduces are those of 2,048 tokens, its
// attention that of the 1,970 real sequences, and its fixed host cost one launch. Above the
// largest size (here 2,048) and with a prompt chunk, no padding: kernel by kernel.
TEST(IterationCost, PaddedGraphsRunTheNextCapturedSize) {
  EXPECT_EQ(IterationCostModel::PaddedGraphSize(1970, {1, 512, 1024, 2048}), 2048);
  EXPECT_EQ(IterationCostModel::PaddedGraphSize(1024, {1, 512, 1024, 2048}), 1024);
  EXPECT_EQ(IterationCostModel::PaddedGraphSize(2049, {1, 512, 1024, 2048}), 0);
  EXPECT_EQ(IterationCostModel::PaddedGraphSize(0, {1, 512}), 0);
  EXPECT_EQ(IterationCostModel::PaddedGraphSize(5, {}), 0);
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("H100-SXM5-80GB", "llama2-7b", &d));
  CostSpec spec = d.Spec();
  spec.overhead_s = 5e-3;
  spec.cuda_graph_max_batch = 128;
  spec.graph_launch_s = 4e-6;
  IterationCostModel plain(spec);
  spec.cuda_graph_padded_sizes = {1, 512, 1024, 2048};
  IterationCostModel padded(spec);
  BatchShape b;
  b.decode_seqs = 1970;
  b.decode_context_tokens = 1970.0 * 300;
  BatchShape full = b;
  full.decode_seqs = 2048;
  full.decode_context_tokens = 2048.0 * 300;
  const IterationTime p = padded.Detail(b);
  EXPECT_TRUE(p.graph);
  EXPECT_DOUBLE_EQ(p.overhead_s, 4e-6);
  EXPECT_DOUBLE_EQ(p.layers_s, plain.Detail(full).layers_s);
  EXPECT_DOUBLE_EQ(p.head_s, plain.Detail(full).head_s);
  EXPECT_DOUBLE_EQ(p.attention_s, plain.Detail(b).attention_s);
  EXPECT_FALSE(plain.Detail(b).graph);  // 1,970 is not a captured size without padding
  BatchShape mixed = b;
  mixed.chunks = {{100, 100}};
  mixed.prefill_tokens = 100;
  EXPECT_FALSE(padded.Detail(mixed).graph);
  EXPECT_DOUBLE_EQ(padded.Detail(mixed).layers_s, plain.Detail(mixed).layers_s);
}

// Weight-only decode on A100 (no fp8/fp4 tensor cores): the GEMMs run at bf16 over narrow weights
// (compute/compute.h WeightOnlyGemm). A one-sequence decode of Llama-2-70B at TP8 streams 80 x
// 8192 x (1280 + 1024 + 7168 + 3584) = 8.56 G weights per GPU: bf16 17.1 GB = 10.35 ms of HBM at
// 2039 GB/s x 0.8117 (the one-row GEMMs run the 16-row small-M tile, compute.yaml small_m_gemm,
// so they are bound by their weights), fp8 5.17 ms (+ ~0.2 ms where a wave's dequantization
// outlasts its weights: gate_up, WeightOnlyGemm); both add the same ~1.4 ms of attention over 1100
// tokens, norms and launches: fp8 / bf16 = (5.17 + 0.2 + 1.4) / (10.35 + 1.4) = 0.58, between
// half (the weights' ratio, which the shared ops keep it above) and 0.6. The activations stay bf16:
// the fp4 checkpoint's layers are the ops of a bf16-math, fp4-weight shape (no NVFP4 activation
// quantization, which only fp4 math does).
TEST(IterationCost, WeightOnlyDecodeOnA100) {
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("A100-SXM4-80GB", "llama2-70b", &d));
  auto layers = [&](Dtype w) {
    CostSpec spec = d.Spec();
    spec.tp = 8;
    spec.weights = w;
    spec.kv = spec.activations = Dtype::kBf16;
    IterationCostModel cost(spec);
    BatchShape b;
    b.decode_seqs = 1;
    b.decode_context_tokens = 1100;
    return cost.Detail(b).layers_s;
  };
  const double bf16 = layers(Dtype::kBf16), fp8 = layers(Dtype::kFp8), fp4 = layers(Dtype::kFp4);
  EXPECT_GT(bf16, 80 * 2.0 * 8192 * 13056 / (2039e9 * 0.8117));
  EXPECT_GT(fp8, 0.5 * bf16);
  EXPECT_LT(fp8, 0.6 * bf16);
  EXPECT_LT(fp4, fp8);
  OpShape s;
  s.tp = 8;
  s.causal = true;
  s.ep_within_tp = true;
  s.math = s.activations = s.kv = Dtype::kBf16;
  s.weights = Dtype::kFp4;
  const double want = d.model->layers * OpsTime(*d.gpu, LayerTokenOps(*d.model, 0, 1, s), *d.cal) +
                      OpsTime(*d.gpu, EmbeddingForwardOps(*d.model, 1, s), *d.cal);
  EXPECT_DOUBLE_EQ(fp4, want);
}

TEST(IterationCost, BusiestAttentionDpRankTakesItsShare) {
  // 4 ranks; 10 decoders over 1,000 context tokens (mean 100): 10 / 4 = 2, the first 10 % 4 = 2
  // ranks one more: loads 3, 3, 2, 2. Chunks in order to the least-loaded rank (lowest on ties):
  // 500 -> rank 2 (3, 3, 502, 2); 100 -> rank 3 (3, 3, 502, 102); 200 -> rank 0 (203, 3, 502,
  // 102). Busiest: rank 2, 2 decoders over 200 context tokens and the 500-token chunk.
  BatchShape b;
  b.decode_seqs = 10;
  b.decode_context_tokens = 1000;
  b.chunks = {{500, 500}, {100, 300}, {200, 200}};
  b.prefill_tokens = 800;
  const BatchShape r = IterationCostModel::BusiestRank(b, 4);
  EXPECT_EQ(r.decode_seqs, 2);
  EXPECT_DOUBLE_EQ(r.decode_context_tokens, 200);
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].q_tokens, 500);
  EXPECT_EQ(r.prefill_tokens, 500);
  EXPECT_EQ(r.tokens(), 502);
  // One rank: the whole batch.
  EXPECT_EQ(IterationCostModel::BusiestRank(b, 1).tokens(), 810);
}

TEST(IterationCost, BusiestRankOfTheEnginesPerRankSchedule) {
  // The engine's own split (serve/engine.h): 3 ranks with 2, 3, 1 decoders and 1, 0, 1 chunks
  // (the chunks in rank order). Chunks 100 and 10: tokens 102, 3, 11 -> rank 0, its 2 decoders
  // over 300 keys and the 100-token chunk. Chunks 100 and 200: 102, 3, 201 -> rank 2.
  BatchShape b;
  b.decode_seqs = 6;
  b.decode_context_tokens = 1250;
  b.ranks = {{2, 300, 1}, {3, 900, 0}, {1, 50, 1}};
  b.chunks = {{100, 100}, {10, 500}};
  b.prefill_tokens = 110;
  BatchShape r = IterationCostModel::BusiestRank(b, 3);
  EXPECT_EQ(r.decode_seqs, 2);
  EXPECT_DOUBLE_EQ(r.decode_context_tokens, 300);
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].q_tokens, 100);
  EXPECT_EQ(r.tokens(), 102);
  b.chunks[1] = {200, 500};
  b.prefill_tokens = 300;
  r = IterationCostModel::BusiestRank(b, 3);
  EXPECT_EQ(r.decode_seqs, 1);
  EXPECT_DOUBLE_EQ(r.decode_context_tokens, 50);
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].kv_tokens, 500);
  EXPECT_EQ(r.tokens(), 201);
}

TEST(IterationCost, AttentionDpPricesTheBusiestRankAndTheMoeCollectives) {
  // DeepSeek-V3 on B200, 8 ranks. An iteration of 64 decoders (8 per rank) costs what one rank's
  // 8 decoders cost at TP1 with the experts over 8 GPUs, plus 58 MoE layers x the dispatch and
  // combine, here a stand-in of 1 us per rank token: 58 x 8 x 1 us = 464 us.
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("B200", "deepseek-v3", &d));
  CostSpec spec = d.Spec();
  spec.tp = 8;
  spec.ep = 8;
  spec.attention_dp = 8;
  spec.weights = Dtype::kFp4;
  spec.kv = Dtype::kFp8;
  spec.moe_comm_s = [](int rank_tokens) { return rank_tokens * 1e-6; };
  IterationCostModel adp(spec);
  BatchShape all;
  all.decode_seqs = 64;
  all.decode_context_tokens = 64 * 1000.0;
  const IterationTime t = adp.Detail(all);
  EXPECT_NEAR(t.comm_s, 58 * 8 * 1e-6, 1e-12);
  // The same rank's attention and LM head alone at TP1 (they do not depend on the experts).
  CostSpec one = spec;
  one.attention_dp = 1;
  one.tp = 1;
  one.ep = 1;
  one.moe_comm_s = nullptr;
  BatchShape rank;
  rank.decode_seqs = 8;
  rank.decode_context_tokens = 8 * 1000.0;
  IterationCostModel ref(one);
  const IterationTime r = ref.Detail(rank);
  EXPECT_GT(t.attention_s, 0);
  EXPECT_NEAR(t.attention_s, r.attention_s, 1e-12);
  EXPECT_NEAR(t.head_s, r.head_s, 1e-12);
}

// Skewed routing: DeepSeek-V3's measured imbalance (data/models: 1.564 at EP 32) makes the
// busiest of 8 attention-DP ranks compute 1 + 1.564 x 8 / 32 = 1.391 x the mean rank's pairs.
// 64 decoders, 8 per rank: the layers' time is 58 MoE layers at that load plus the 3 dense
// layers and the embedding as without skew; attention, head and collectives do not move. TP 8
// without EP (experts split by TP on every GPU) has no busiest rank: unchanged.
TEST(IterationCost, TheBusiestExpertParallelRankSetsTheMoeLayers) {
  Loaded d;
  ASSERT_NO_FATAL_FAILURE(Load("B200", "deepseek-v3", &d));
  TransformerSpec uniform = *d.model;
  uniform.moe.imbalance_ratio = 0;
  CostSpec spec = d.Spec();
  spec.tp = spec.ep = spec.attention_dp = 8;
  spec.weights = Dtype::kFp4;
  spec.kv = Dtype::kFp8;
  spec.moe_comm_s = [](int rank_tokens) { return rank_tokens * 1e-6; };
  CostSpec flat = spec;
  flat.model = &uniform;
  BatchShape all;
  all.decode_seqs = 64;
  all.decode_context_tokens = 64 * 1000.0;
  IterationCostModel skewed(spec), even(flat);
  const IterationTime a = skewed.Detail(all), b = even.Detail(all);
  EXPECT_DOUBLE_EQ(skewed.spec().model->moe.imbalance_ratio, 1.564);
  OpShape shape;
  shape.ep = 8;
  shape.math = shape.weights = Dtype::kFp4;
  shape.activations = Dtype::kFp16;
  shape.kv = Dtype::kFp8;
  shape.attention_unquantized = true;
  OpShape hot = shape;
  hot.moe_rank_load = 1.391;
  const double moe_delta = OpsTime(*d.gpu, LayerTokenOps(*d.model, 3, 8, hot), *d.cal) -
                           OpsTime(*d.gpu, LayerTokenOps(*d.model, 3, 8, shape), *d.cal);
  EXPECT_GT(moe_delta, 0);
  EXPECT_NEAR(a.layers_s - b.layers_s, 58 * moe_delta, 1e-9 * a.layers_s);
  EXPECT_DOUBLE_EQ(a.attention_s, b.attention_s);
  EXPECT_DOUBLE_EQ(a.head_s, b.head_s);
  EXPECT_DOUBLE_EQ(a.comm_s, b.comm_s);
  spec.ep = flat.ep = 1;
  spec.attention_dp = flat.attention_dp = 1;
  spec.tp_allreduce_s = flat.tp_allreduce_s = [](double, int) { return 0.0; };
  IterationCostModel tp_skewed(spec), tp_even(flat);
  EXPECT_DOUBLE_EQ(tp_skewed.Detail(all).layers_s, tp_even.Detail(all).layers_s);
}

}  // namespace
}  // namespace ndt
