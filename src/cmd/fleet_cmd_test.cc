// `fleet` through the registry: it takes the training job exactly as `train` does, a seed gives
// byte-identical JSON on any thread count, and sizes off Hopper say whose rates they use.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "cmd/command.h"

namespace ndt {
namespace {

const Context& Ctx() {
  static const Context ctx = *Context::Load(NDT_DATA_DIR);
  return ctx;
}

StatusOr<CommandOutput> RunFleetCmd(const std::string& name, const Json& args) {
  const Command* c = FindCommand(name);
  NDT_CHECK(c != nullptr, name);
  Diagnostics diag;
  return RunJson(*c, Ctx(), args, &diag);
}

TEST(FleetCommand, TakesTheJobAsTrainDoes) {
  const Json job = {{"sku", "ND96amsr_A100_v4"},
                    {"vms", 4},
                    {"model", "gpt3-1.3b"},
                    {"gbs", 64},
                    {"tp", 2},
                    {"pp", 2},
                    {"zero", 1},
                    {"mbs", 2}};
  StatusOr<CommandOutput> t = RunFleetCmd("train", job);
  ASSERT_TRUE(t.ok()) << t.status().message();
  Json f = job;
  f["days"] = 7;
  f["runs"] = 50;
  StatusOr<CommandOutput> r = RunFleetCmd("fleet", f);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["step_time_s"], t->json["step_time_s"]);
  EXPECT_EQ(r->json["gpus"], 32);
  // Checkpoint per GPU from train's memory model, ZeRO 1 over dp 8: weights / 8 + optimizer.
  const double w = t->json["memory"]["weights_bytes"].get<double>();
  const double o = t->json["memory"]["optimizer_bytes"].get<double>();
  EXPECT_DOUBLE_EQ(r->json["checkpoint"]["bytes_per_gpu"].get<double>(), w / 8 + o);
}

// A window shorter than one step loses nothing: no interruption in 20 runs of 2 VMs for half a
// day (MTBI ~880 h), no checkpoint (the optimum interval is past the window). The lost GPU-hours
// line is the bare 0, not "0: " with an empty list of causes.
TEST(FleetCommand, NothingLostPrintsNoEmptyListOfCauses) {
  const Json a = {{"sku", "ND96isr_H100_v5"},  {"gpus", 16}, {"step-time", 86400}, {"days", 0.5},
                  {"checkpoint-size", "4 GB"}, {"runs", 20}};
  StatusOr<CommandOutput> r = RunFleetCmd("fleet", a);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->text.find("Lost GPU-hours: 0\n"), std::string::npos) << r->text;
}

// The text reads as English where a count is 1 or a time infinite: a one-step interval printed
// "(1 steps)", and --failure-scale 0 "MTBI inf h" and "Daly inf d, Young inf d".
TEST(FleetCommand, OneStepAndNoFailuresReadPlainly) {
  const Json one = {{"sku", "ND96isr_H100_v5"},  {"gpus", 16}, {"step-time", 86400}, {"days", 0.5},
                    {"checkpoint-size", "4 GB"}, {"runs", 20}};
  StatusOr<CommandOutput> r = RunFleetCmd("fleet", one);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->text.find("Interval:       1.00 d (1 step), "), std::string::npos) << r->text;
  Json none = one;
  none["step-time"] = 5.0;
  none["failure-scale"] = 0;
  r = RunFleetCmd("fleet", none);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->text.find("inf"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("(MTBI none: no failures)"), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("Daly none, Young none"), std::string::npos) << r->text;
}

TEST(FleetCommand, SameSeedSameBytesOnAnyThreadCount) {
  Json a = {{"sku", "ND96isr_H100_v5"},
            {"gpus", 2048},
            {"step-time", 4.0},
            {"checkpoint-size", "2 GB"},
            {"tokens", 0},
            {"days", 20},
            {"runs", 300},
            {"spares", 8},
            {"seed", 5u}};
  StatusOr<CommandOutput> one = RunFleetCmd("fleet", a);
  ASSERT_TRUE(one.ok()) << one.status().message();
  a["threads"] = 3;
  StatusOr<CommandOutput> three = RunFleetCmd("fleet", a);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(one->json.dump(), three->json.dump());
  EXPECT_EQ(one->text, three->text);
  a["seed"] = 6u;
  StatusOr<CommandOutput> other = RunFleetCmd("fleet", a);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(one->json.dump(), other->json.dump());
}

TEST(FleetCommand, BlackwellSaysItUsesHopperRates) {
  StatusOr<CommandOutput> r = RunFleetCmd("fleet", {{"sku", "ND128isr_GB300_v6"},
                                                    {"vms", 18},
                                                    {"step-time", 3.0},
                                                    {"checkpoint-size", "1 GB"},
                                                    {"days", 5},
                                                    {"runs", 20}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["rates"]["fitted_on"], "Hopper");
  EXPECT_TRUE(r->json["rates"]["note"].is_string());
  EXPECT_NE(r->text.find("uses Hopper's interruption rates"), std::string::npos);
  EXPECT_EQ(r->json["placement"]["racks"], 1);
}

// --storage-bw sets the blob account's or Lustre's throughput; with a node-local target (nvme,
// or managed-disk where the size publishes its disk throughput, which ND H100 v5 does not) or
// host memory it changes nothing (PlanCheckpoint reads it for blob and Lustre only), and says so
// in exactly one one-line warning. With lustre it is used: no warning.
TEST(FleetCommand, StorageBwIgnoredOffSharedStorageWarns) {
  const Command* c = FindCommand("fleet");
  ASSERT_NE(c, nullptr);
  const Json base = {{"sku", "ND96isr_H100_v5"},  {"gpus", 64}, {"step-time", 4.0},
                     {"checkpoint-size", "1 GB"}, {"days", 1},  {"runs", 5},
                     {"storage-bw", "10 GB/s"}};
  for (const char* target : {"nvme", "memory"}) {
    Json a = base;
    a["checkpoint-to"] = target;
    Diagnostics diag;
    StatusOr<CommandOutput> r = RunJson(*c, Ctx(), a, &diag);
    ASSERT_TRUE(r.ok()) << r.status().message();
    size_t n = 0;
    for (const std::string& w : diag.warnings) {
      if (w.find("--storage-bw is ignored with --checkpoint-to " + std::string(target)) == 0) ++n;
      EXPECT_EQ(w.find('\n'), std::string::npos) << w;
    }
    EXPECT_EQ(n, 1u) << target;
  }
  Json l = base;
  l["checkpoint-to"] = "lustre";
  Diagnostics diag;
  StatusOr<CommandOutput> r = RunJson(*c, Ctx(), l, &diag);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (const std::string& w : diag.warnings)
    EXPECT_EQ(w.find("--storage-bw"), std::string::npos) << w;
}

TEST(FleetCommand, BadInputIsOneLine) {
  const Json base = {
      {"sku", "ND96isr_H100_v5"}, {"gpus", 64}, {"step-time", 4.0}, {"checkpoint-size", "1 GB"}};
  for (const auto& [key, value] : std::vector<std::pair<std::string, Json>>{
           {"days", -3}, {"checkpoint-interval", "0.5"}, {"checkpoint-to", "tape"}, {"runs", 0}}) {
    Json a = base;
    a["days"] = 3;
    a[key] = value;
    StatusOr<CommandOutput> r = RunFleetCmd("fleet", a);
    ASSERT_FALSE(r.ok()) << key;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << key;
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << key;
  }
}

// Fewer tokens than one step are refused: --tokens 1e4 of a 2M-token step printed "Time to
// train: 0.00 days" and "Cost: $0". Here a step is gbs 64 x seq 4096 (llama2-7b) = 262,144
// tokens.
TEST(FleetCommand, FewerTokensThanOneStepAreRefused) {
  Json a = {{"sku", "ND96isr_H100_v5"},
            {"gpus", 64},
            {"step-time", 4.0},
            {"model", "llama2-7b"},
            {"gbs", 64},
            {"checkpoint-size", "1 GB"},
            {"runs", 10},
            {"tokens", 262143}};
  StatusOr<CommandOutput> r = RunFleetCmd("fleet", a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("less than one step (262144 tokens"), std::string::npos)
      << r.status().message();
  a["tokens"] = 262144;
  EXPECT_TRUE(RunFleetCmd("fleet", a).ok());
}

// Every numeric input has an upper bound, named with its flag and range in one line (exit 2):
// --step-time 1e9 ran (one checkpoint interval of 11,574 days, Monte Carlo goodput 67.6% against
// a closed form of 0%), as did --checkpoint-interval 1e300, --storage-bw "1 B/s" (a checkpoint
// written in 1,091,873 days) and --checkpoint-size "1e30 GB". The bounds themselves are taken.
TEST(FleetCommand, NumericFlagsAreBounded) {
  const Json base = {{"sku", "ND96isr_H100_v5"},  {"gpus", 64}, {"step-time", 4.0}, {"days", 3},
                     {"checkpoint-size", "1 GB"}, {"runs", 20}};
  for (const auto& [key, value, want] : std::vector<std::tuple<std::string, Json, std::string>>{
           {"step-time", 1e9,
            "--step-time must be in 0.001..86400 (got 1000000000); seconds per iteration, a "
            "millisecond to a day"},
           {"step-time", 0, "--step-time must be in 0.001..86400 (got 0)"},
           {"gpus", 2147483640, "--gpus must be in 1..131072 (got 2147483640)"},
           {"checkpoint-interval", "1e300",
            "--checkpoint-interval '1e300'; use auto or a number of seconds in (0, 3153600000]"},
           {"storage-bw", "1 B/s",
            "--storage-bw '1 B/s'; write a throughput from 10 MB/s to 100 TB/s"},
           {"storage-bw", "1e30 TB/s", "--storage-bw '1e30 TB/s'; write a throughput"},
           {"checkpoint-size", "1e30 GB",
            "--checkpoint-size '1e30 GB'; write bytes per GPU above 0 and up to 1 TB"}}) {
    Json a = base;
    a[key] = value;
    if (key == "storage-bw") a["checkpoint-to"] = "blob";
    StatusOr<CommandOutput> r = RunFleetCmd("fleet", a);
    ASSERT_FALSE(r.ok()) << key << " " << value.dump();
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << key;
    EXPECT_EQ(r.status().message().rfind(want, 0), 0u) << r.status().message();
  }
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, Json>>{{"step-time", 86400},
                                                 {"step-time", 1e-3},
                                                 {"checkpoint-interval", "3153600000"},
                                                 {"storage-bw", "10 MB/s"},
                                                 {"storage-bw", "100 TB/s"},
                                                 {"checkpoint-size", "1 TB"}}) {
    Json a = base;
    a[key] = value;
    StatusOr<CommandOutput> r = RunFleetCmd("fleet", a);
    EXPECT_TRUE(r.ok()) << key << " " << value.dump() << ": " << r.status().message();
  }
}

// --gpus 24 of an 8-GPU size is 3 VMs; --vms 2 beside it contradicts it. Before, --gpus won
// silently (the run was 3 VMs); now it is an error naming both flags. Agreeing counts run.
TEST(FleetCommand, GpusAndVmsThatDisagreeAreRefused) {
  Json a = {{"sku", "ND96isr_H100_v5"},  {"gpus", 24}, {"vms", 2}, {"step-time", 4.0}, {"days", 1},
            {"checkpoint-size", "1 GB"}, {"runs", 10}};
  StatusOr<CommandOutput> r = RunFleetCmd("fleet", a);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(r.status().message(),
            "--gpus 24 is 3 VMs of Standard_ND96isr_H100_v5, but --vms 2; give one of them");
  a["vms"] = 3;
  r = RunFleetCmd("fleet", a);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["vms"], 3);
}

}  // namespace
}  // namespace ndt
