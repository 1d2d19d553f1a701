#include "serve/service.h"

#include <gtest/gtest.h>

#include "hw/catalog.h"

namespace ndt {
namespace {

// A small fixture: Llama 2 7B on one H100 VM of the catalog, fixed lengths, TP1.
struct Fixture {
  Catalog catalog = *Catalog::Load(Catalog::DefaultDataDir());
  const SkuSpec* sku = *catalog.FindSku("Standard_ND96isr_H100_v5");
  GpuSpec gpu = catalog.GpuOf(*sku);
  TransformerSpec model = *LoadModel("llama2-7b", ModelsDir(""));
  ComputeCalibration cal = *LoadComputeCalibration("");
  EngineParams params = *LoadEngineParams("");

  InferContext Context() const {
    InferContext c;
    c.sku = sku;
    c.gpu = &gpu;
    c.model = &model;
    c.calibration = &cal;
    c.params = params;
    return c;
  }
  static InferOptions Options() {
    InferOptions o;
    o.tp = 1;
    o.pp = 1;
    o.max_batch = 64;
    o.max_num_tokens = 2048;
    o.lengths = {{300, 120}, {800, 40}, {100, 250}};
    o.requests = 2048;
    return o;
  }
};

TEST(Service, ThroughputNeverRisesWhenMemoryBandwidthFalls) {
  Fixture f;
  double prev = 1e300, first = 0;
  for (double scale : {1.0, 0.8, 0.6, 0.4, 0.2}) {
    Fixture g;
    g.gpu.memory_Bps = f.gpu.memory_Bps * scale;
    StatusOr<InferResult> r = RunInference(g.Context(), Fixture::Options());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_LE(r->output_tokens_per_s, prev * (1 + 1e-12)) << "bandwidth x" << scale;
    prev = r->output_tokens_per_s;
    if (first == 0) first = prev;
  }
  EXPECT_LT(prev, first);  // decode reads weights and K/V: a 5x slower memory must show
}

TEST(Service, SameSeedSameResultDifferentSeedDifferentTail) {
  Fixture f;
  InferOptions o = Fixture::Options();
  o.scenario = Scenario::kServer;
  o.qps = 20;
  o.seed = 5;
  InferResult a = *RunInference(f.Context(), o);
  InferResult b = *RunInference(f.Context(), o);
  EXPECT_EQ(a.stats.ttft_s.p99, b.stats.ttft_s.p99);
  EXPECT_EQ(a.stats.tpot_s.p99, b.stats.tpot_s.p99);
  EXPECT_EQ(a.output_tokens_per_s, b.output_tokens_per_s);
  o.seed = 6;
  InferResult c = *RunInference(f.Context(), o);
  EXPECT_NE(a.stats.e2e_s.p99, c.stats.e2e_s.p99);
}

TEST(Service, ServerSearchReturnsARateThatMeetsTheLimits) {
  Fixture f;
  InferOptions o = Fixture::Options();
  o.scenario = Scenario::kServer;
  o.ttft_p99_s = 0.5;
  o.tpot_p99_s = 0.03;
  StatusOr<InferResult> r = RunInference(f.Context(), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->qps, 0);
  EXPECT_LE(r->stats.ttft_s.p99, 0.5);
  EXPECT_LE(r->stats.tpot_s.p99, 0.03);
}

TEST(Service, ImpossibleSloIsAnErrorWithTheNumbers) {
  Fixture f;
  InferOptions o = Fixture::Options();
  o.scenario = Scenario::kInteractive;
  o.tpot_p99_s = 1e-6;  // below any decode iteration
  StatusOr<InferResult> r = RunInference(f.Context(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(r.status().message().find("no request rate meets"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace ndt
