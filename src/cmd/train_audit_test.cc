// Bugs found by the audit of train / plan train (audit-train): each test fails on the code
// before its fix.
#include <gtest/gtest.h>

#include "cmd/command.h"

namespace ndt {
namespace {

const Context& Ctx() {
  static const Context ctx = *Context::Load(NDT_DATA_DIR);
  return ctx;
}

StatusOr<CommandOutput> RunCmd(const std::string& name, const Json& args) {
  const Command* c = FindCommand(name);
  NDT_CHECK(c != nullptr, name);
  Diagnostics diag;
  return RunJson(*c, Ctx(), args, &diag);
}

// fp8 training needs fp8 tensor cores (Hopper and newer): on A100 and V100 train refuses it with
// a one-line error naming --precision (it used to warn and run "weight-only fp8" at bf16 speed),
// and plan train skips those sizes; H100 still trains in fp8.
TEST(TrainAudit, Fp8TrainingIsRefusedWithoutFp8TensorCores) {
  for (const char* sku : {"ND96asr_v4", "ND96amsr_A100_v4", "ND40rs_v2"}) {
    StatusOr<CommandOutput> r =
        RunCmd("train", {{"sku", sku}, {"model", "gpt3-1.3b"}, {"gbs", 64}, {"precision", "fp8"}});
    ASSERT_FALSE(r.ok()) << sku;
    EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << sku;
    EXPECT_EQ(r.status().message().rfind("--precision fp8: ", 0), 0u) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  }
  StatusOr<CommandOutput> h = RunCmd(
      "train",
      {{"sku", "ND96isr_H100_v5"}, {"model", "gpt3-1.3b"}, {"gbs", 64}, {"precision", "fp8"}});
  ASSERT_TRUE(h.ok()) << h.status().message();
  EXPECT_EQ(h->json["strategy"]["precision"], "fp8");
  // plan train over an A100 and an H100 size: every row is the H100's.
  StatusOr<CommandOutput> p = RunCmd("plan train", {{"model", "llama2-7b"},
                                                    {"gbs", 512},
                                                    {"gpus", 64},
                                                    {"precision", "fp8"},
                                                    {"skus", "ND96asr_v4,ND96isr_H100_v5"}});
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_GT(p->json["results"].size(), 0u);
  for (const Json& row : p->json["results"]) EXPECT_EQ(row["sku"], "Standard_ND96isr_H100_v5");
  // The A100 alone: nothing left to plan.
  p = RunCmd("plan train", {{"model", "llama2-7b"},
                            {"gbs", 512},
                            {"gpus", 64},
                            {"precision", "fp8"},
                            {"sku", "ND96asr_v4"}});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("has no fp8 tensor cores"), std::string::npos)
      << p.status().message();
}

// --schedule gpipe with pp given and vpp left out: the vpp search used to pick vpp 8 and report
// interleaved-1f1b, silently dropping the flag. GPipe has one chunk per stage.
TEST(TrainAudit, GpipeScheduleIsKeptWhenVppIsSearched) {
  StatusOr<CommandOutput> r = RunCmd("train", {{"sku", "ND96isr_H100_v5"},
                                               {"vms", 4},
                                               {"model", "llama3-8b"},
                                               {"gbs", 256},
                                               {"pp", 4},
                                               {"schedule", "gpipe"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["strategy"]["schedule"], "gpipe");
  EXPECT_EQ(r->json["strategy"]["vpp"], 1);
  // Without the flag the same job still interleaves (the search is unchanged).
  r = RunCmd(
      "train",
      {{"sku", "ND96isr_H100_v5"}, {"vms", 4}, {"model", "llama3-8b"}, {"gbs", 256}, {"pp", 4}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["strategy"]["schedule"], "interleaved-1f1b");
}

}  // namespace
}  // namespace ndt
