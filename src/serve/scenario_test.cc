#include "serve/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hw/catalog.h"

namespace ndt {
namespace {

// Llama 2 70B fp16 at TP4 on an H100 (no communication callbacks: the cost model then prices a
// lone decode step lower than it runs, which only raises the caps below). The engine holds
// `kv_tokens` tokens of KV cache and `max_batch` sequences.
struct Fixture {
  Catalog catalog = *Catalog::Load(Catalog::DefaultDataDir());
  GpuSpec gpu = catalog.GpuOf(**catalog.FindSku("Standard_ND96isr_H100_v5"));
  TransformerSpec model = *LoadModel("llama2-70b", ModelsDir(""));
  ComputeCalibration cal = *LoadComputeCalibration("");

  DeploymentPlan EnginePlan(int64_t kv_tokens, int max_batch) const {
    DeploymentPlan p;
    p.engines = 1;
    p.engine.block_tokens = 32;
    p.engine.kv_blocks = kv_tokens / 32;
    p.engine.max_batch = max_batch;
    p.cost.model = &model;
    p.cost.gpu = &gpu;
    p.cost.calibration = &cal;
    p.cost.tp = 4;
    p.cost.overhead_s = 1e-3;  // data/serve/engine.yaml
    return p;
  }
};

TEST(RunRequestCap, OfflineMlperfLengthsStayBelowTheBudgets) {
  // Llama 2 70B's MLPerf mean lengths (222 in, 219 out) with 530,726 tokens of cache hold
  // min(530726 / 441, 2048) = 1203 sequences: 2^24 x 1203 / 219 iterations' worth is above the
  // 2^28 / 219 = 1,225,773 of the token budget, which decides; far above the 32,768 requests a
  // run simulates. Quick runs: a quarter.
  Fixture f;
  DeploymentPlan p = f.EnginePlan(530726, 2048);
  InferOptions o;
  o.lengths = {{222, 219}};
  EXPECT_EQ(RunRequestCap(p, o, false, std::nullopt), static_cast<int64_t>((1 << 28) / 219.0));
  EXPECT_EQ(RunRequestCap(p, o, true, std::nullopt), static_cast<int64_t>((1 << 28) / 219.0 / 4));
}

TEST(RunRequestCap, NoServerRunIsCutBelowItsSixHundredSeconds) {
  // At rate q an engine holds at least q x 219 x (a lone decode step, >= the 1 ms overhead)
  // sequences, so 2^24 iterations allow >= 2^24 x q x 1 ms requests: 600 s of arrivals at every
  // rate, from a light load (one sequence in flight) to the engine's capacity (full).
  Fixture f;
  DeploymentPlan p = f.EnginePlan(530726, 2048);
  InferOptions o;
  o.lengths = {{222, 219}};
  for (double q : {0.01, 0.1, 1.0, 10.0, 30.0, 100.0, 1000.0}) {
    const int64_t per = std::min<int64_t>(std::ceil(600 * q), kServerMaxPerEngine);
    EXPECT_GE(RunRequestCap(p, o, false, q), std::max<int64_t>(per, 8 * 2048)) << q;
  }
}

TEST(RunRequestCap, HugeOutputsGetAFewRequests) {
  // 2^20-token outputs with a cache of 2^21 tokens: 2 sequences in flight when full, so offline
  // gets min(2^28 / 2^20, 2^24 x 2 / 2^20) = min(256, 32) = 32 requests. A server run at a light
  // load holds one at a time: 2^24 / 2^20 = 16; far beyond its capacity, the full 2 again: 32.
  // Quick runs a quarter of those.
  Fixture f;
  DeploymentPlan p = f.EnginePlan(int64_t{1} << 21, 2048);
  InferOptions o;
  o.lengths = {{0, 1 << 20}};
  EXPECT_EQ(RunRequestCap(p, o, false, std::nullopt), 32);
  EXPECT_EQ(RunRequestCap(p, o, true, std::nullopt), 8);
  EXPECT_EQ(RunRequestCap(p, o, false, 1e-9), 16);
  EXPECT_EQ(RunRequestCap(p, o, true, 1e-9), 4);
  EXPECT_EQ(RunRequestCap(p, o, false, 1e6), 32);
}

}  // namespace
}  // namespace ndt
