#include "serve/scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

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

TEST(OfflineRows, OnePassIsTheRoundRobin) {
  // 10 rows, 4 engines of 2 requests (8 <= 10): engine 1 serves rows 1 and 5, engine 3 rows 3
  // and 7; the engines together serve rows 0-7 once.
  EXPECT_EQ(OfflineRows(10, 4, 1, 2, 7), (std::vector<size_t>{1, 5}));
  EXPECT_EQ(OfflineRows(10, 4, 3, 2, 7), (std::vector<size_t>{3, 7}));
  // 3 requests each (12 > 10): no longer the round robin's 1, 5, 9 but a permutation's first 3.
  const std::vector<size_t> p = OfflineRows(10, 4, 1, 3, 7);
  EXPECT_EQ(p.size(), 3u);
  EXPECT_EQ(std::set<size_t>(p.begin(), p.end()).size(), 3u);
}

TEST(OfflineRows, EveryEngineSeesTheWholeDataset) {
  // A GB300 NVL72 rack at TP1 serves the 24,576 MLPerf Llama 2 rows with 72 engines; a round
  // robin wrapping over them reached only 24,576 / gcd(72, 24,576) = 1,024 rows per engine.
  // Here engine 3's first 24,576 draws are one permutation: every row exactly once; the next
  // 24,576 another.
  const size_t n = 24576;
  const std::vector<size_t> rows = OfflineRows(n, 72, 3, 2 * 24576, 1);
  ASSERT_EQ(rows.size(), 2 * n);
  for (size_t pass = 0; pass < 2; ++pass) {
    std::vector<int> seen(n, 0);
    for (size_t j = pass * n; j < (pass + 1) * n; ++j) ++seen[rows[j]];
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(n)) << pass;
  }
  // Two permutations, not one repeated.
  EXPECT_FALSE(std::equal(rows.begin(), rows.begin() + n, rows.begin() + n));
  // Deterministic, and the same on 4 engines (one GB300 VM): the engine count plays no part.
  EXPECT_EQ(OfflineRows(n, 72, 3, 2 * 24576, 1), rows);
  EXPECT_EQ(OfflineRows(n, 4, 3, 2 * 24576, 1), rows);
  // 1000 draws: a prefix of the longer draw.
  const std::vector<size_t> head = OfflineRows(n, 72, 3, 1000, 1);
  EXPECT_TRUE(std::equal(head.begin(), head.end(), rows.begin()));
}

TEST(OfflineRows, EnginesDrawDifferentSamples) {
  // Engines 0 and 1 draw from different seeds: their first 1000 draws (72 x 1000 > 24,576:
  // permutations) differ somewhere (the same 1000 rows in the same order: probability about
  // 24,576^-1000).
  EXPECT_NE(OfflineRows(24576, 72, 0, 1000, 1), OfflineRows(24576, 72, 1, 1000, 1));
}

TEST(OfflineRows, DatasetSmallerThanTheDraws) {
  // 3 rows, 8 engines of 7 draws: two permutations of {0, 1, 2}, then one more row.
  const std::vector<size_t> rows = OfflineRows(3, 8, 6, 7, 1);
  ASSERT_EQ(rows.size(), 7u);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<size_t> p(rows.begin() + 3 * pass, rows.begin() + 3 * pass + 3);
    std::sort(p.begin(), p.end());
    EXPECT_EQ(p, (std::vector<size_t>{0, 1, 2})) << pass;
  }
  EXPECT_LT(rows[6], 3u);
}

}  // namespace
}  // namespace ndt
