#include "serve/cost.h"

#include <gtest/gtest.h>

#include "hw/catalog.h"

namespace ndt {
namespace {

// The LM head of an fp4 (or fp8) checkpoint runs in bf16 (ModelOpt leaves "*lm_head*"
// unquantized): an fp4 iteration's head_s equals the bf16 head's time on the same GPU, and is
// longer than the same head at fp4 would be (GB200: 10 PF fp4 vs 2.5 PF bf16 dense).
TEST(IterationCost, LmHeadStays16Bit) {
  StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
  ASSERT_TRUE(cat.ok()) << cat.status().message();
  StatusOr<const GpuSpec*> gpu = cat->FindGpu("GB200");
  ASSERT_TRUE(gpu.ok());
  StatusOr<TransformerSpec> model = LoadModel("llama2-70b", ModelsDir(""));
  ASSERT_TRUE(model.ok());
  StatusOr<ComputeCalibration> cal = LoadComputeCalibration("");
  ASSERT_TRUE(cal.ok());
  CostSpec spec;
  spec.model = &*model;
  spec.gpu = *gpu;
  spec.calibration = &*cal;
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
  const double want = OpsTime(**gpu, LmHeadForwardOps(*model, 1024, bf16, false), *cal);
  EXPECT_DOUBLE_EQ(t.head_s, want);
  EXPECT_GT(want, OpsTime(**gpu, LmHeadForwardOps(*model, 1024, fp4, false), *cal));
}

// The host cost of an iteration is the fixed overhead plus the per-sequence one for every
// sequence it carries (decoders and prompt chunks): 3 ms + 10 us x (100 + 2) = 4.02 ms.
TEST(IterationCost, OverheadPerSequence) {
  StatusOr<Catalog> cat = Catalog::Load(Catalog::DefaultDataDir());
  ASSERT_TRUE(cat.ok()) << cat.status().message();
  StatusOr<const GpuSpec*> gpu = cat->FindGpu("H100-SXM5-80GB");
  ASSERT_TRUE(gpu.ok());
  StatusOr<TransformerSpec> model = LoadModel("llama2-7b", ModelsDir(""));
  ASSERT_TRUE(model.ok());
  StatusOr<ComputeCalibration> cal = LoadComputeCalibration("");
  ASSERT_TRUE(cal.ok());
  CostSpec spec;
  spec.model = &*model;
  spec.gpu = *gpu;
  spec.calibration = &*cal;
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

}  // namespace
}  // namespace ndt
