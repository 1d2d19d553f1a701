#include "serve/request.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ndt {
namespace {

TEST(Request, RescaleOutputsHitsTheRequestedMean) {
  std::vector<RequestLengths> l = {{10, 100}, {10, 200}, {10, 300}, {10, 400}};
  RescaleOutputs(290.3, &l);  // x 1.1612: 116, 232, 348, 464 -> mean 290
  EXPECT_NEAR(MeanOutputTokens(l), 290.3, 0.5);
  EXPECT_EQ(l[0].output_tokens, 116);
}

TEST(Request, PoissonGapsAverageOneOverRate) {
  std::vector<RequestLengths> l = {{10, 10}};
  std::vector<Request> r = PoissonRequests(l, 20000, 8.0, 42);
  // Mean gap of 20000 exponential draws: 1/8 s with relative std 1/sqrt(20000) = 0.7%.
  EXPECT_NEAR(r.back().arrival_s / r.size(), 0.125, 0.125 * 0.03);
  for (size_t i = 1; i < r.size(); ++i) EXPECT_GE(r[i].arrival_s, r[i - 1].arrival_s);
}

TEST(Request, PoissonUsesEveryDatasetRowOncePerPermutation) {
  std::vector<RequestLengths> l;
  for (int i = 1; i <= 50; ++i) l.push_back({i, 1});
  std::vector<Request> r = PoissonRequests(l, 50, 1.0, 9);
  std::vector<int> seen(51, 0);
  for (const Request& q : r) ++seen[q.input_tokens];
  for (int i = 1; i <= 50; ++i) EXPECT_EQ(seen[i], 1) << i;
}

TEST(Request, MlperfLlamaPresetHasTheDatasetsCountAndMean) {
  // inference_workloads.md §1.2: 24,576 rows, input mean 222.33, GPT-4 output mean 218.89.
  StatusOr<std::vector<RequestLengths>> l = LoadDataset("mlperf-llama2-70b", "");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->size(), 24576u);
  EXPECT_NEAR(MeanOutputTokens(*l), 218.89, 0.01);
}

TEST(Request, UnknownDatasetSuggestsAName) {
  StatusOr<std::vector<RequestLengths>> l = LoadDataset("mlperf-llama2-70", "");
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("did you mean 'mlperf-llama2-70b'"), std::string::npos)
      << l.status().message();
}

}  // namespace
}  // namespace ndt
