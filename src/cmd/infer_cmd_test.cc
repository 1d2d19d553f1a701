// Tests of `ndtwin infer`'s flags (cmd/infer.cc) through RunJson, the path every door takes.
#include <gtest/gtest.h>

#include "cmd/command.h"

namespace ndt {
namespace {

const Context& Ctx() {
  static const Context ctx = *Context::Load(NDT_DATA_DIR);
  return ctx;
}

StatusOr<CommandOutput> Infer(const Json& args) {
  Diagnostics diag;
  return RunJson(*FindCommand("infer"), Ctx(), args, &diag);
}

// fp32 parses as a training precision, but serving precisions are fp16, bf16, fp8, fp4 (the
// help's list, and plan infer's): --weights fp32 used to run, priced at 4 bytes per weight.
TEST(InferFlags, RefusesFp32WeightsAndKvInOneLineNamingTheFlag) {
  const Json base = {{"sku", "ND96isr_H100_v5"}, {"model", "llama2-7b"}, {"requests", 64}};
  Json a = base;
  a["weights"] = "fp32";
  StatusOr<CommandOutput> r = Infer(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(r.status().message(),
            "--weights 'fp32' is not a precision; use fp16, bf16, fp8 or fp4");
  Json b = base;
  b["kv"] = "fp32";
  r = Infer(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--kv 'fp32' is not a precision; use fp16, bf16 or fp8");
  // The serving precisions still run.
  Json c = base;
  c["weights"] = "bf16";
  r = Infer(c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["deployment"]["weights"], "bf16");
}

// --cuda-graph-padding without CUDA graphs names what turned them off: --no-cuda-graphs, or a
// stack whose cuda_graphs trait is false (tensorrt-llm-2024, data/stacks); the error used to
// tell a user who gave only --stack to drop a --no-cuda-graphs they never gave.
TEST(InferFlags, GraphPaddingWithoutGraphsNamesWhatDisabledThem) {
  const Json base = {{"sku", "ND96isr_H100_v5"},
                     {"model", "llama2-7b"},
                     {"requests", 64},
                     {"cuda-graph-padding", true}};
  Json a = base;
  a["no-cuda-graphs"] = true;
  StatusOr<CommandOutput> r = Infer(a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "--cuda-graph-padding needs CUDA graphs: drop --no-cuda-graphs");
  Json b = base;
  b["stack"] = "tensorrt-llm-2024";
  r = Infer(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(r.status().message(),
            "--cuda-graph-padding needs CUDA graphs, which --stack tensorrt-llm-2024 does not "
            "use: drop one of the two");
  // tensorrt-llm-2025 runs CUDA graphs: padding applies.
  Json c = base;
  c["stack"] = "tensorrt-llm-2025";
  r = Infer(c);
  EXPECT_TRUE(r.ok()) << r.status().message();
}

// Server limits not given are the dataset's own MLPerf benchmark's (datasets.yaml): the 405B
// dataset's 6 s / 175 ms, not Llama-2-70B's 2 s / 200 ms, which made a 405B server run fail its
// TTFT limit with 9.4k-token prompts; a given flag still wins, and fixed lengths keep
// Llama-2-70B's (the service's default).
TEST(InferFlags, ServerLimitsDefaultToTheDatasetsBenchmark) {
  Json a = {{"sku", "ND96isr_H100_v5"},  {"model", "llama3-405b"},
            {"weights", "fp8"},          {"requests", 64},
            {"scenario", "server"},      {"qps", 1.0},
            {"dataset", "llama3.1-405b"}};
  StatusOr<CommandOutput> r = Infer(a);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->json["slo"]["ttft_p99_s"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(r->json["slo"]["tpot_p99_s"].get<double>(), 0.175);
  a["tpot-p99"] = "100 ms";
  r = Infer(a);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->json["slo"]["ttft_p99_s"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(r->json["slo"]["tpot_p99_s"].get<double>(), 0.100);
  Json b = {{"sku", "ND96isr_H100_v5"},  {"model", "llama2-7b"}, {"requests", 64},
            {"scenario", "interactive"}, {"qps", 1.0},           {"input-len", 128},
            {"output-len", 64}};
  r = Infer(b);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_DOUBLE_EQ(r->json["slo"]["ttft_p99_s"].get<double>(), 0.450);
  EXPECT_DOUBLE_EQ(r->json["slo"]["tpot_p99_s"].get<double>(), 0.040);
}

// With a small --requests the full runs end before steady state, where the quick screen's
// ranking (2,048+ requests on one engine) does not hold: the chosen deployment must still be at
// least as fast (within the search's 0.5% tie) as every fixed TP x batch it offers, each run in
// full at the same 256 requests, offline and at the server limits. Llama 3 70B fp4 on one GB300
// VM (MLPerf Llama-2-70B lengths) is the case where the screen alone picked TP1 over TP2: offline
// 8,267 against 9,069 tok/s in full (+10%), server 6,489 against 7,121 (+10%).
void SmallRequestCountCase(const std::string& scenario) {
  SCOPED_TRACE(scenario);
  const Json base = {{"sku", "Standard_ND128isr_GB300_v6"},
                     {"model", "llama3-70b"},
                     {"weights", "fp4"},
                     {"scenario", scenario},
                     {"requests", 256}};
  StatusOr<CommandOutput> chosen = Infer(base);
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  const double best = chosen->json["output_tokens_per_s"].get<double>();
  for (int tp : {1, 2, 4}) {
    for (int b : {128, 256, 512, 1024, 2048}) {
      Json a = base;
      a["tp"] = tp;
      a["pp"] = 1;
      a["max_batch"] = b;
      StatusOr<CommandOutput> r = Infer(a);
      ASSERT_TRUE(r.ok()) << r.status().message();
      EXPECT_LE(r->json["output_tokens_per_s"].get<double>(), best * 1.005)
          << "tp " << tp << " batch " << b;
    }
  }
}

TEST(InferFlags, SmallRequestCountChoiceBeatsTheFixedOnes) {
  for (const char* scenario : {"offline", "server"}) {
    SmallRequestCountCase(scenario);
  }
}

// infer names the dataset it ran (text and JSON), and without --dataset it is the model's own
// MLPerf one: Mixtral 8x7B runs mlperf-mixtral-8x7b's lengths (means 427.4 in, 144.8 out, over
// its 15,000 rows; Llama-2-70B's are 222.3 and 218.9). Fixed lengths name none.
TEST(InferFlags, DefaultDatasetIsTheModelsAndIsNamed) {
  const Json base = {{"sku", "Standard_ND96isr_H100_v5"},
                     {"model", "mixtral-8x7b"},
                     {"weights", "fp8"},
                     {"tp", 4},
                     {"pp", 1},
                     {"max_batch", 256},
                     {"requests", 64}};
  StatusOr<CommandOutput> r = Infer(base);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["dataset"], "mlperf-mixtral-8x7b");
  EXPECT_NE(r->text.find("Requests:       mlperf-mixtral-8x7b, mean input"), std::string::npos)
      << r->text;
  Json named = base;
  named["dataset"] = "mlperf-llama2-70b";
  StatusOr<CommandOutput> l = Infer(named);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->json["dataset"], "mlperf-llama2-70b");
  EXPECT_NE(r->json["mean_output_tokens"], l->json["mean_output_tokens"]);
  Json fixed = base;
  fixed["input_len"] = 100;
  fixed["output_len"] = 50;
  StatusOr<CommandOutput> f = Infer(fixed);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->json["dataset"].is_null());
}

// A size without InfiniBand keeps each replica in one VM (serve/deployment.cc), so a model no
// TP x PP of one VM holds fits on no number of VMs: Llama 2 70B in fp16 is ~138 GB of weights,
// beyond 2 P40s' 48 GB (Standard_ND12s) on 1 VM or on 4. The error said "add --vms", which
// cannot help; it names what can: a --sku with InfiniBand or more memory, lower --weights.
TEST(InferFlags, NoInfinibandDoesNotFitSaysWhatCanHelp) {
  for (int vms : {1, 4}) {
    StatusOr<CommandOutput> r =
        Infer({{"sku", "Standard_ND12s"}, {"vms", vms}, {"model", "llama2-70b"}});
    ASSERT_FALSE(r.ok()) << vms;
    const std::string m = r.status().message();
    EXPECT_EQ(m.find("add --vms"), std::string::npos) << m;
    EXPECT_NE(m.find("use a --sku with InfiniBand or more GPU memory, or lower --weights"),
              std::string::npos)
        << m;
  }
}

}  // namespace
// --guaranteed-no-evict (trtllm-bench's default scheduler): Llama 3 8B fp8 on H100, 128/2048,
// trtllm-bench's max batch 640. The cache holds ~1.03M tokens, so at most blocks / 68 sequences
// of 2,176 tokens (68 blocks of 32) fit whole: ~470 < 640. Admitting on the prompt alone
// (max-utilization) the engines fill the batch, run out of blocks as the sequences grow and
// preempt; reserving whole requests they never preempt and never run more than blocks / 68.
TEST(InferFlags, GuaranteedNoEvictNeverPreemptsAndCapsTheBatchAtWholeRequests) {
  const Json base = {{"sku", "ND96isr_H100_v5"},
                     {"model", "llama3-8b"},
                     {"weights", "fp8"},
                     {"tp", 1},
                     {"pp", 1},
                     {"input-len", 128},
                     {"output-len", 2048},
                     {"requests", 8000},
                     {"max-batch", 640},
                     {"max-num-tokens", 2048}};
  StatusOr<CommandOutput> r = Infer(base);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GT(r->json["kv_cache"]["preemptions"].get<int64_t>(), 0);
  EXPECT_EQ(r->json["deployment"]["scheduler"], "max-utilization");
  EXPECT_EQ(r->text.find("guaranteed-no-evict"), std::string::npos);
  Json a = base;
  a["guaranteed-no-evict"] = true;
  r = Infer(a);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["kv_cache"]["preemptions"].get<int64_t>(), 0);
  // The run says which scheduler it ran: JSON deployment.scheduler and the Deployment line.
  EXPECT_EQ(r->json["deployment"]["scheduler"], "guaranteed-no-evict");
  EXPECT_NE(r->text.find(", guaranteed-no-evict scheduler"), std::string::npos);
  const int64_t whole = r->json["kv_cache"]["blocks_per_replica"].get<int64_t>() / 68;
  EXPECT_LT(whole, 640);
  EXPECT_LE(r->json["mean_batch"].get<double>(), static_cast<double>(whole));
}

}  // namespace ndt
