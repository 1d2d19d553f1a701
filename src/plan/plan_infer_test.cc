#include "plan/plan_infer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "serve/run.h"
#include "serve/testing.h"

namespace ndt {
namespace {

const Catalog& Cat() { return *testing::BuiltinServeData().catalog; }

PlanInferRequest Request(const std::vector<std::string>& skus) {
  PlanInferRequest req;
  req.model = *LoadModel("llama2-7b", ModelsDir(""));
  for (const std::string& s : skus) req.skus.push_back(*Cat().FindSku(s));
  req.vms = 1;
  req.base.lengths = {{512, 128}};
  req.base.requests = 1024;
  req.top_k = 10;
  return req;
}

TEST(PlanInfer, TriesEachNativePrecisionAndMatchesTheServiceRun) {
  // H100 computes fp16 and fp8 natively, A100 fp16 only: 3 (size, precision) pairs. Each result
  // is what `ndtwin infer` gives for the same options (KV fp8 with 8-bit weights, else fp16).
  PlanInferRequest req = Request({"Standard_ND96isr_H100_v5", "Standard_ND96amsr_A100_v4"});
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->evaluated, 3);
  EXPECT_EQ(rep->infeasible, 0);
  ASSERT_EQ(rep->results.size(), 3u);
  for (size_t i = 1; i < rep->results.size(); ++i) {
    EXPECT_GE(rep->results[i - 1].tokens_per_s, rep->results[i].tokens_per_s);
  }
  const PlanInferResult& best = rep->results.front();
  EXPECT_EQ(best.sku, "Standard_ND96isr_H100_v5");
  EXPECT_EQ(best.weights, Dtype::kFp8);
  InferOptions o = req.base;
  o.weights = Dtype::kFp8;
  o.kv = Dtype::kFp8;
  StatusOr<InferResult> direct =
      RunInferenceOn(testing::BuiltinServeData(), "Standard_ND96isr_H100_v5", req.model, o);
  ASSERT_TRUE(direct.ok());
  EXPECT_DOUBLE_EQ(best.tokens_per_s, direct->output_tokens_per_s);
}

TEST(PlanInfer, RunWarningsBecomeNotesNamedByTheirPair) {
  // Outputs of 2^20 tokens exceed a run's simulated-work budget (serve/scenario.h), which the
  // run says in a warning; the plan passes it on as a note naming the (size, VMs, precision).
  // Llama 3 8B with its context stretched to 2^21 tokens for the test (it serves 8,192).
  PlanInferRequest req = Request({"Standard_ND96isr_H100_v5"});
  req.model = *LoadModel("llama3-8b", ModelsDir(""));
  req.model.max_context = 1 << 21;
  req.weights = {Dtype::kFp8};
  req.base.requests = 0;
  req.base.lengths = {{100, 1 << 20}};
  req.base.tp = 8;  // the deployment given: one run, no search (the budget makes runs long)
  req.base.pp = 1;
  req.base.max_batch = 64;
  req.base.max_num_tokens = 8192;
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->results.size(), 1u);
  bool found = false;
  for (const std::string& n : rep->notes) {
    found = found || n.rfind("Standard_ND96isr_H100_v5 x1 fp8: ", 0) == 0;
  }
  EXPECT_TRUE(found) << (rep->notes.empty() ? "no notes" : rep->notes.front());
}

TEST(PlanInfer, AGpusAccuracyCaveatIsOneNoteHoweverManyPairsRan) {
  // GB200 computes fp16, fp8 and fp4 natively: 3 pairs, each run carrying Blackwell's caveat
  // (compute.yaml serving_caveat); the plan says it once. H100 adds no caveat.
  PlanInferRequest req = Request({"Standard_ND128isr_NDR_GB200_v6", "Standard_ND96isr_H100_v5"});
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_GE(rep->evaluated, 4);
  const std::string caveat = (*LoadComputeCalibration("")).For("blackwell").serving_caveat;
  ASSERT_FALSE(caveat.empty());
  EXPECT_EQ(std::count(rep->notes.begin(), rep->notes.end(), caveat), 1);
}

TEST(PlanInfer, APrecisionWithoutTensorCoresIsANoteAsInInfer) {
  // --weights fp8 on A100 (no fp8 tensor cores) runs weight-only: fp8 storage, bf16 GEMMs.
  // `ndtwin infer` says so on stderr; the plan used to rank the pair without a word. H100 has
  // fp8 tensor cores: no note for it. One note, naming the size (and, the two archs' host costs
  // being fitted and assumed, that one: MixedHostCostCalibrationsAreANote).
  PlanInferRequest req = Request({"Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5"});
  req.weights = {Dtype::kFp8};
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->notes.size(), 2u);
  EXPECT_EQ(rep->notes[1].rfind("host cost per engine iteration", 0), 0u);
  EXPECT_EQ(rep->notes[0],
            "Standard_ND96amsr_A100_v4: A100-SXM4-80GB has no fp8 tensor cores: the GEMMs run in "
            "bf16 (weight-only quantization: fp8 storage)");
}

// A tiny model (GPT-3 125M, 12 layers) at 16 requests on one A100 VM and one H100 VM, fp16: the
// A100 VM ranks first (at 256 requests the H100 leads). Its two iterations kinds: one prefill of
// each replica's 2 x 512 tokens, not a CUDA graph, whose fixed host cost is Hopper's fitted
// 7.982 ms x 12/80 = 1.20 ms against Ampere's assumed 1 ms x 12/80 = 0.15 ms, and 127 decodes of
// 2 sequences, a few hundred tiny kernels each at Hopper's 3.0 us kernel overhead against
// Ampere's 1.75 us. Neither is the hardware's (the host loop is the software's and
// the host CPU's; the kernel constants are fitted on each arch's own GEMM microbenchmarks), so
// the plan says whose host cost is fitted and whose assumed; an H100-only plan (fitted alone)
// says nothing.
TEST(PlanInfer, MixedHostCostCalibrationsAreANote) {
  PlanInferRequest req = Request({"Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5"});
  req.model = *LoadModel("gpt3-125m", ModelsDir(""));
  req.weights = {Dtype::kFp16};
  req.base.requests = 16;
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  ASSERT_EQ(rep->results.size(), 2u);
  EXPECT_EQ(rep->results[0].sku, "Standard_ND96amsr_A100_v4");
  const auto note = std::find_if(rep->notes.begin(), rep->notes.end(), [](const std::string& n) {
    return n.rfind("host cost per engine iteration", 0) == 0;
  });
  ASSERT_NE(note, rep->notes.end());
  EXPECT_NE(note->find("fitted on serving runs for hopper 7.982 ms, assumed for ampere"),
            std::string::npos)
      << *note;
  req.skus = {*Cat().FindSku("Standard_ND96isr_H100_v5")};
  rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_TRUE(rep.ok());
  for (const std::string& n : rep->notes)
    EXPECT_EQ(n.find("host cost per engine"), std::string::npos) << n;
}

TEST(PlanInfer, CostRanksByDollarsPerMillionTokensAndSkipsUnpricedSizes) {
  // ND H200 v5 has no list price in data/: skipped with a note under the cost objective.
  PlanInferRequest req = Request(
      {"Standard_ND96isr_H200_v5", "Standard_ND96amsr_A100_v4", "Standard_ND96isr_H100_v5"});
  req.objective = PlanInferObjective::kCost;
  req.weights = {Dtype::kFp16};
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_EQ(rep->evaluated, 2);
  ASSERT_EQ(rep->notes.size(), 2u);  // and A100's assumed host cost against H100's fitted one
  EXPECT_NE(rep->notes[0].find("Standard_ND96isr_H200_v5"), std::string::npos);
  EXPECT_EQ(rep->notes[1].rfind("host cost per engine iteration", 0), 0u);
  ASSERT_EQ(rep->results.size(), 2u);
  EXPECT_LE(rep->results[0].usd_per_million_tokens, rep->results[1].usd_per_million_tokens);
  for (const PlanInferResult& r : rep->results) EXPECT_TRUE(r.priced);
}

TEST(PlanInfer, NothingFitsIsOneLineWithTheReason) {
  // Llama 2 70B in fp16 (140 GB of weights) on one 24 GB Tesla P40: does not fit.
  PlanInferRequest req = Request({"Standard_ND6s"});
  req.model = *LoadModel("llama2-70b", ModelsDir(""));
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), StatusCode::kInfeasible);
  EXPECT_NE(rep.status().message().find("most common reason (1)"), std::string::npos);
  EXPECT_EQ(rep.status().message().find('\n'), std::string::npos);
  // The fix is inference's (more GPUs, lower precision), never a training flag.
  EXPECT_NE(rep.status().message().find("--gpus/--vms"), std::string::npos)
      << rep.status().message();
  EXPECT_EQ(rep.status().message().find("--gbs"), std::string::npos) << rep.status().message();
  // Only precisions narrower than the narrowest tried are advised: the P40 computes fp16 only,
  // so fp8, fp4 are named; with --weights fp4 (70B at 0.5 B per weight, ~35 GB > the P40's
  // 24 GB) nothing narrower exists and the advice is GPUs or memory.
  EXPECT_NE(rep.status().message().find("narrower --weights (fp8, fp4)"), std::string::npos)
      << rep.status().message();
  req.weights = {Dtype::kFp4};
  rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().message().find("narrower --weights"), std::string::npos)
      << rep.status().message();
  EXPECT_NE(rep.status().message().find("or a size with more GPU memory"), std::string::npos)
      << rep.status().message();
}

TEST(PlanInfer, NoSizeLeftSaysWhyAsPlanTrainDoes) {
  // 4 GPUs on a size of 8 per VM, and a cost ranking over a size without a price: nothing to
  // run. The one line names each size's reason (it said "no size left to try; check
  // --sku/--gpus" for both, and the notes that said why are not printed on an error), and the
  // unpriced case how to price it.
  PlanInferRequest req = Request({"Standard_ND96isr_H100_v5"});
  req.vms = 0;
  req.gpus = 4;
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(rep.status().message(),
            "no VM size can serve this request (Standard_ND96isr_H100_v5: 8 GPUs per VM do not "
            "divide 4; skipped); try another --gpus/--vms or --sku");
  req = Request({"Standard_ND96isr_H200_v5"});  // no list price in data/prices.yaml
  req.objective = PlanInferObjective::kCost;
  rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(
      rep.status().message(),
      "no VM size can serve this request (no price, skipped (objective cost): "
      "Standard_ND96isr_H200_v5); try another --gpus/--vms or --sku, or give a size its price with "
      "--price-per-hour");
}

TEST(PlanInfer, RequestsAreCappedForTheWholeSearch) {
  // Every pair runs its own deployment search: --requests above 100,000 is refused up front.
  PlanInferRequest req = Request({"Standard_ND96isr_H100_v5"});
  req.base.requests = 100001;
  StatusOr<PlanInferReport> rep = PlanInference(testing::BuiltinServeData(), req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(rep.status().message().find("1..100000"), std::string::npos) << rep.status().message();
}

}  // namespace
}  // namespace ndt
