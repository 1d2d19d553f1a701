#include "serve/request.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>

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

TEST(Request, MlperfPresetsCarryTheirBenchmarksLatencyLimits) {
  // mlperf.conf (inference_workloads.md section 2): Llama-2-70B server 2000/200 ms, interactive
  // 450/40 ms; Llama 3.1 405B 6000/175 and 4500/80; DeepSeek-R1 2000/80 and 1500/15; Mixtral
  // 2000/200 and no interactive benchmark (zeros); ShareGPT is no benchmark (zeros).
  auto limits = [](const std::string& name) {
    StatusOr<std::optional<DatasetPreset>> p = FindDatasetPreset(name, "");
    EXPECT_TRUE(p.ok() && p->has_value()) << name;
    return **p;
  };
  const DatasetPreset l2 = limits("llama2-70b");  // an alias finds the preset
  EXPECT_DOUBLE_EQ(l2.server.ttft_s, 2.0);
  EXPECT_DOUBLE_EQ(l2.server.tpot_s, 0.200);
  EXPECT_DOUBLE_EQ(l2.interactive.ttft_s, 0.450);
  EXPECT_DOUBLE_EQ(l2.interactive.tpot_s, 0.040);
  const DatasetPreset l405 = limits("mlperf-llama3-1-405b");
  EXPECT_DOUBLE_EQ(l405.server.ttft_s, 6.0);
  EXPECT_DOUBLE_EQ(l405.server.tpot_s, 0.175);
  EXPECT_DOUBLE_EQ(l405.interactive.ttft_s, 4.5);
  EXPECT_DOUBLE_EQ(l405.interactive.tpot_s, 0.080);
  const DatasetPreset r1 = limits("deepseek-r1");
  EXPECT_DOUBLE_EQ(r1.server.tpot_s, 0.080);
  EXPECT_DOUBLE_EQ(r1.interactive.tpot_s, 0.015);
  const DatasetPreset mx = limits("mlperf-mixtral-8x7b");
  EXPECT_DOUBLE_EQ(mx.server.tpot_s, 0.200);
  EXPECT_DOUBLE_EQ(mx.interactive.ttft_s, 0.0);
  EXPECT_DOUBLE_EQ(limits("sharegpt").server.ttft_s, 0.0);
  // A CSV path is no preset.
  StatusOr<std::optional<DatasetPreset>> none = FindDatasetPreset("/tmp/x.csv", "");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

// Writes `text` to a file in the test's temporary directory; returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Request, LengthsMustBeWholeTokenCountsInRange) {
  // 2^32 used to wrap to 0 in the int cast and 2^31 - 1 to overflow the engine; 10.5 was cut to
  // 10; an output of 0 was served as 1 token. Limit 2^20 = 1048576 tokens, at least 1 each.
  EXPECT_TRUE(LoadLengthsCsv(WriteTemp("ok.csv", "input_length,output_length\n1048576,1\n")).ok());
  for (const char* row :
       {"4294967296,5", "2147483647,5", "10.5,5", "5,1048577", "0,5", "5,0", "5,-1", "5,x", "5"}) {
    StatusOr<std::vector<RequestLengths>> l =
        LoadLengthsCsv(WriteTemp("bad.csv", std::string("input_length,output_length\n") + row));
    ASSERT_FALSE(l.ok()) << row;
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidInput) << row;
    EXPECT_NE(l.status().message().find("bad.csv:2:"), std::string::npos) << row;
  }
  for (const char* row : {"1e9,10,10", "-1,10,10", "1,10,0", "1,0,10", "1,10,2147483648"}) {
    StatusOr<std::vector<Request>> t = LoadTraceCsv(
        WriteTemp("t.csv", std::string("arrival_s,input_tokens,output_tokens\n") + row));
    ASSERT_FALSE(t.ok()) << row;
    EXPECT_NE(t.status().message().find("t.csv:2:"), std::string::npos) << row;
  }
  EXPECT_TRUE(
      LoadTraceCsv(WriteTemp("t.csv", "arrival_s,input_tokens,output_tokens\n1,10,1\n")).ok());
}

TEST(Request, ErrorsNameTheColumnAndTheFix) {
  StatusOr<std::vector<RequestLengths>> l =
      LoadLengthsCsv(WriteTemp("z.csv", "input_length,output_length\n5,3\n7,0\n"));
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("z.csv:3: output_length is 0"), std::string::npos)
      << l.status().message();
  EXPECT_NE(l.status().message().find("fix or drop the row"), std::string::npos);
}

TEST(Request, ShareGptPresetCountsEmptyPromptsAndAnswersAsOneToken) {
  // data/datasets/sharegpt-vicuna.csv: 81,494 rows, 745 with input_length 0 and 74 with
  // output_length 0 (first turns that are empty after tokenization). The preset keeps every row,
  // a 0 as 1 token; the same file given as a path is refused at its first 0 (line 147).
  StatusOr<std::vector<RequestLengths>> l = LoadDataset("sharegpt", "");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->size(), 81494u);
  for (const RequestLengths& r : *l) {
    ASSERT_GE(r.input_tokens, 1);
    ASSERT_GE(r.output_tokens, 1);
  }
  StatusOr<std::vector<RequestLengths>> path =
      LoadDataset(std::string(NDT_DATA_DIR) + "/datasets/sharegpt-vicuna.csv", "");
  ASSERT_FALSE(path.ok());
  EXPECT_NE(path.status().message().find(":147: input_length is 0"), std::string::npos)
      << path.status().message();
}

TEST(Request, RescaleOutputsCheckedRefusesOutputsBeyondTheLimit) {
  // Outputs 100 and 300 (mean 200, longest 300): a mean of 500000 scales the longest by 2500 to
  // 750000 tokens, within 2^20; 700000 scales it to 1050000, above 1048576.
  std::vector<RequestLengths> l = {{10, 100}, {10, 300}};
  std::vector<RequestLengths> a = l;
  EXPECT_TRUE(RescaleOutputsChecked(500000, &a).ok());
  EXPECT_EQ(a[1].output_tokens, 750000);
  std::vector<RequestLengths> b = l;
  Status s = RescaleOutputsChecked(700000, &b);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("to 1050000 tokens"), std::string::npos) << s.message();
  EXPECT_FALSE(RescaleOutputsChecked(0.5, &b).ok());
  EXPECT_FALSE(RescaleOutputsChecked(2e6, &b).ok());
}

TEST(Request, FixedLengthsNeedBothFlagsEachInRange) {
  StatusOr<RequestLengths> ok = FixedLengths(true, 128, true, 1 << 20);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->input_tokens, 128);
  EXPECT_EQ(ok->output_tokens, 1 << 20);
  // One flag alone names the missing one; a given 0, or 2^20 + 1, is out of range.
  StatusOr<RequestLengths> one = FixedLengths(true, 128, false, 0);
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("--output-len is missing"), std::string::npos);
  for (auto [in, out] : {std::pair{0, 5}, std::pair{5, 0}, std::pair{(1 << 20) + 1, 5}}) {
    StatusOr<RequestLengths> bad = FixedLengths(true, in, true, out);
    ASSERT_FALSE(bad.ok()) << in << " " << out;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
  }
}

TEST(Request, UnknownDatasetSuggestsAName) {
  StatusOr<std::vector<RequestLengths>> l = LoadDataset("mlperf-llama2-70", "");
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.status().message().find("did you mean 'mlperf-llama2-70b'"), std::string::npos)
      << l.status().message();
}

// Without --dataset a model runs its own MLPerf benchmark's lengths where datasets.yaml lists it
// under a preset's `models` (the catalog's llama3-405b is Llama 3.1 405B, MLPerf's 405B
// benchmark; case does not matter); every other model, and a name that is no catalog model,
// takes Llama-2-70B's (the catalog's deepseek-v3 is not DeepSeek-R1, the MLPerf model).
TEST(Request, DefaultDatasetIsTheModelsOwnBenchmark) {
  auto d = [](const std::string& model) { return *DefaultDataset(model, ""); };
  EXPECT_EQ(d("llama2-70b"), "mlperf-llama2-70b");
  EXPECT_EQ(d("llama3-405b"), "mlperf-llama3-1-405b");
  EXPECT_EQ(d("Mixtral-8x7B"), "mlperf-mixtral-8x7b");
  EXPECT_EQ(d("llama3-70b"), "mlperf-llama2-70b");
  EXPECT_EQ(d("deepseek-v3"), "mlperf-llama2-70b");
  EXPECT_EQ(d("my-model"), std::string(kDefaultDataset));
}

}  // namespace
}  // namespace ndt
