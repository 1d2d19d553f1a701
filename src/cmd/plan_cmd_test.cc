// `plan train` through the registry against `train`: the configuration plan picks, run by train
// with every knob plan chose, gives the same step time and MFU bit for bit, the slowest GPU's
// wait included (parallel/variability.h) or, with --gpu-variability=false on both, left out.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cmd/command.h"
#include "cmd/testing.h"

namespace ndt {
namespace {

const Context& PlanCmdTestContext() {
  static const Context ctx = *Context::Load(NDT_DATA_DIR);
  return ctx;
}

StatusOr<CommandOutput> RunPlanCmdTest(const std::string& name, const Json& args) {
  const Command* c = FindCommand(name);
  NDT_CHECK(c != nullptr, name);
  Diagnostics diag;
  return RunJson(*c, PlanCmdTestContext(), args, &diag);
}

// Llama 2 7B on 16 A100s (two VMs, so the fabric is in the step too), the best 3 re-scored at
// flow fidelity (plan's default): each, run by train, reports plan's numbers exactly. The
// straggler is on by default in both: 16 A100s wait ~1.6% of the kernels (Ampere's assumed 8%
// spread, sigma = 0.08 / (2 x 2.698) = 1.48%, times E[max of 16] = 1.75 of the truncated normal),
// so straggler_s > 0; off, it is 0 and every step is shorter.
TEST(PlanCommand, TheChosenConfigurationsStepIsTrainsWithAndWithoutTheStraggler) {
  Json plan = {{"model", "llama2-7b"},
               {"gbs", 64},
               {"gpus", 16},
               {"sku", "Standard_ND96amsr_A100_v4"},
               {"top", 3}};
  StatusOr<CommandOutput> on = RunPlanCmdTest("plan train", plan);
  ASSERT_TRUE(on.ok()) << on.status().message();
  plan["gpu-variability"] = false;
  StatusOr<CommandOutput> off = RunPlanCmdTest("plan train", plan);
  ASSERT_TRUE(off.ok()) << off.status().message();
  for (const StatusOr<CommandOutput>* p : {&on, &off}) {
    const bool straggler = p == &on;
    const Json& results = (*p)->json["results"];
    ASSERT_EQ(results.size(), 3u);
    for (const Json& r : results) {
      Json args = plan;
      if (straggler) args.erase("gpu-variability");
      StatusOr<CommandOutput> t = RunPlanCmdTest("train", TrainArgsOfPlanResult(args, r));
      ASSERT_TRUE(t.ok()) << t.status().message();
      const Json& tj = t->json;
      EXPECT_EQ(r["step_time_s"], tj["step_time_s"]) << r.dump();
      EXPECT_EQ(r["mfu"], tj["mfu"]) << r.dump();
      EXPECT_EQ(r["tokens_per_s"], tj["tokens_per_s"]) << r.dump();
      EXPECT_EQ(r["straggler_s"], tj["breakdown"]["straggler_s"]) << r.dump();
      if (straggler) {
        EXPECT_GT(r["straggler_s"].get<double>(), 0.0);
      } else {
        EXPECT_EQ(r["straggler_s"].get<double>(), 0.0);
      }
    }
  }
  // The same configuration ranked first either way here; without the wait its step is shorter.
  EXPECT_LT(off->json["results"][0]["step_time_s"].get<double>(),
            on->json["results"][0]["step_time_s"].get<double>());
  EXPECT_NE(on->text.find("slowest GPU"), std::string::npos);
  EXPECT_EQ(off->text.find("slowest GPU"), std::string::npos);
}

// train choosing its own tp/pp/dp (plan/choose.h) ranks with the straggler as plan does: the
// strategy train picks for the omitted knobs, and its step, are plan's best on the same size
// and count when train's stack knobs (ZeRO, recompute) are the ones plan's best has.
TEST(PlanCommand, TrainsOwnChoiceIsPlansBest) {
  const Json plan = {{"model", "llama2-7b"},
                     {"gbs", 64},
                     {"gpus", 16},
                     {"sku", "Standard_ND96amsr_A100_v4"},
                     {"top", 1},
                     {"fidelity", "analytical"}};
  StatusOr<CommandOutput> p = RunPlanCmdTest("plan train", plan);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Json& r = p->json["results"][0];
  Json t = TrainArgsOfPlanResult(plan, r);
  for (const char* k : {"tp", "pp", "dp", "vpp", "mbs"}) t.erase(k);
  StatusOr<CommandOutput> tr = RunPlanCmdTest("train", t);
  ASSERT_TRUE(tr.ok()) << tr.status().message();
  EXPECT_EQ(tr->json["strategy"]["tp"], r["tp"]);
  EXPECT_EQ(tr->json["strategy"]["pp"], r["pp"]);
  EXPECT_EQ(tr->json["step_time_s"], r["step_time_s"]);
}

// Mixtral-8x7B on 2 x 8 H100 (gbs 64): plan's picks split the experts (its best at this commit:
// tp 2, pp 2, dp 4, ep 4), and every pick, run by train with its ep and every other knob, is
// accepted and gives plan's step bit for bit (TrainArgsOfPlanResult passes ep: without it train
// would have run ep 1).
TEST(PlanCommand, MoePicksRunInTrainWithTheirExpertParallelism) {
  const Json plan = {{"model", "mixtral-8x7b"},           {"gbs", 64}, {"vms", 2},
                     {"sku", "Standard_ND96isr_H100_v5"}, {"top", 3},  {"fidelity", "analytical"}};
  StatusOr<CommandOutput> p = RunPlanCmdTest("plan train", plan);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Json& results = p->json["results"];
  ASSERT_EQ(results.size(), 3u);
  EXPECT_GT(results[0]["ep"].get<int>(), 1);
  for (const Json& r : results) {
    StatusOr<CommandOutput> t = RunPlanCmdTest("train", TrainArgsOfPlanResult(plan, r));
    ASSERT_TRUE(t.ok()) << t.status().message() << " " << r.dump();
    EXPECT_EQ(t->json["strategy"]["ep"], r["ep"]);
    EXPECT_EQ(t->json["step_time_s"], r["step_time_s"]) << r.dump();
  }
}

// plan infer's JSON names the model and the version as plan train's does (it had neither: a
// saved document or a sweep row did not say which model it planned).
TEST(PlanCommand, PlanInferJsonNamesTheModelAndVersionAsPlanTrain) {
  StatusOr<CommandOutput> infer = RunPlanCmdTest("plan infer", {{"model", "llama2-7b"},
                                                                {"vms", 1},
                                                                {"sku", "Standard_ND96isr_H100_v5"},
                                                                {"input-len", 512},
                                                                {"output-len", 64},
                                                                {"requests", 256},
                                                                {"weights", "fp8"}});
  ASSERT_TRUE(infer.ok()) << infer.status().message();
  StatusOr<CommandOutput> train = RunPlanCmdTest("plan train", {{"model", "llama2-7b"},
                                                                {"gbs", 8},
                                                                {"vms", 1},
                                                                {"sku", "Standard_ND96isr_H100_v5"},
                                                                {"top", 1},
                                                                {"fidelity", "analytical"}});
  ASSERT_TRUE(train.ok()) << train.status().message();
  EXPECT_EQ(infer->json["model"], "llama2-7b");
  EXPECT_EQ(infer->json["model"], train->json["model"]);
  EXPECT_EQ(infer->json["ndtwin_version"], train->json["ndtwin_version"]);
}

// plan infer names the dataset it planned over as infer does (JSON "dataset", a "Requests:"
// line): without --dataset, Mixtral 8x7B's own MLPerf one (datasets.yaml lists mixtral-8x7b
// under mlperf-mixtral-8x7b's `models`), which plan infer used but did not say; fixed lengths
// name none (null, no line), as infer's JSON.
TEST(PlanCommand, PlanInferNamesItsDatasetAsInfer) {
  const Json base = {{"model", "mixtral-8x7b"},
                     {"vms", 1},
                     {"sku", "Standard_ND96isr_H100_v5"},
                     {"requests", 64},
                     {"weights", "fp8"}};
  StatusOr<CommandOutput> r = RunPlanCmdTest("plan infer", base);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["dataset"], "mlperf-mixtral-8x7b");
  EXPECT_NE(r->text.find("\nRequests:       mlperf-mixtral-8x7b\n"), std::string::npos) << r->text;
  Json fixed = base;
  fixed["input-len"] = 512;
  fixed["output-len"] = 64;
  StatusOr<CommandOutput> f = RunPlanCmdTest("plan infer", fixed);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->json["dataset"].is_null());
  EXPECT_EQ(f->text.find("Requests:"), std::string::npos) << f->text;
}

// plan train under the default stack says which ZeRO stages it did not search and why (the
// stack's software cannot run them), where the notes of every door go ("plan: note: ..."); a
// stack that runs all four (deepspeed-zero3-2021) has no such note.
TEST(PlanCommand, APlanSaysWhichZeroStagesItsStackCannotRun) {
  Json plan = {{"model", "llama2-7b"},
               {"gbs", 8},
               {"vms", 1},
               {"sku", "Standard_ND96isr_H100_v5"},
               {"top", 1},
               {"fidelity", "analytical"}};
  auto notes = [&](const Json& args) {
    Diagnostics diag;
    StatusOr<CommandOutput> r =
        RunJson(*FindCommand("plan train"), PlanCmdTestContext(), args, &diag);
    EXPECT_TRUE(r.ok()) << r.status().message();
    std::string all;
    for (const std::string& n : diag.notes) all += n + "\n";
    return all;
  };
  const std::string core = notes(plan);
  EXPECT_NE(core.find("plan: note: stack megatron-core-2024 runs ZeRO 0 and 1 only"),
            std::string::npos)
      << core;
  EXPECT_NE(core.find("ZeRO 2 and 3 not searched"), std::string::npos) << core;
  plan["stack"] = "deepspeed-zero3-2021";
  EXPECT_EQ(notes(plan).find("not searched"), std::string::npos);
}

// The words of a printed command line (no quoting needed: the line of the test below quotes
// nothing, as it names presets and numbers only).
std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// What `ndtwin ARGS` prints on stdout, run through the CLI itself (cli/cli.h), and its exit code.
std::string RunCliForTest(std::vector<std::string> args, int* code) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  *code = RunCli(static_cast<int>(argv.size()), argv.data());
  return ::testing::internal::GetCapturedStdout();
}

// plan train's best, as the line it prints ("Run the best with train: ndtwin train ..."), pasted
// into the CLI gives plan's step bit for bit. The case makes the best use uneven stages, which
// the planners allow and train runs only with --uneven-stages: a 33-layer model (hidden 8192, 64
// heads: 33 x 12 x 8192^2 = 26.6e9 parameters) on one 8 x A100 80 GB VM, gbs 64. Its weights,
// gradients and Adam states (16 B a parameter at dp 1, 425 GB) need all 8 GPUs in tp x pp
// (53 GB a GPU before activations), and with pp > 1 the stages cannot divide 33 layers (pp x vpp
// is even); plan's best at this commit is tp 4, pp 2, vpp 9 (18 chunks for 33 layers). Every knob
// is on the line (tp, pp, dp, vpp, mbs, sp, tp overlap, zero, recompute, precision, fidelity,
// --uneven-stages), train given them reports plan's strategy and step, and without
// --uneven-stages train refuses the line (exit 2).
TEST(PlanCommand, TheBestsPrintedTrainLineGivesItsStepInTrain) {
  std::vector<std::string> args = {
      "ndtwin",   "plan",  "train",   "--layers", "33",
      "--hidden", "8192",  "--heads", "64",       "--gbs",
      "64",       "--vms", "1",       "--sku",    "Standard_ND96amsr_A100_v4",
      "--top",    "3"};
  int code = -1;
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const std::string plan_json = RunCliForTest(json_args, &code);
  ASSERT_EQ(code, 0);
  const Json p = Json::parse(plan_json);
  const Json& best = p["results"][0];
  ASSERT_TRUE(best["uneven_stages"].get<bool>()) << best.dump();
  const std::string text = RunCliForTest(args, &code);
  ASSERT_EQ(code, 0);
  const std::string lead = "Run the best with train: ";
  const size_t at = text.find(lead);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at + lead.size(), text.find('\n', at) - at - lead.size());
  EXPECT_NE(line.find(" --uneven-stages"), std::string::npos) << line;
  std::vector<std::string> train = Words(line);
  ASSERT_GE(train.size(), 2u);
  ASSERT_EQ(train[0], "ndtwin");
  train.push_back("--json");
  const std::string train_json = RunCliForTest(train, &code);
  ASSERT_EQ(code, 0) << line;
  const Json t = Json::parse(train_json);
  for (const char* k : {"tp", "pp", "dp", "vpp", "mbs", "zero", "sp", "tp_overlap", "recompute"}) {
    EXPECT_EQ(t["strategy"][k], best[k]) << k << " " << line;
  }
  EXPECT_EQ(t["step_time_s"], best["step_time_s"]) << line;
  EXPECT_EQ(t["mfu"], best["mfu"]) << line;
  // Without --uneven-stages train refuses the pick's pp (it does not divide the 33 layers).
  std::vector<std::string> even;
  for (const std::string& w : train) {
    if (w != "--uneven-stages") even.push_back(w);
  }
  RunCliForTest(even, &code);
  EXPECT_EQ(code, 2);
  // Every pick's train_args (the JSON doors' form of the same) runs in train with its step.
  for (const Json& r : p["results"]) {
    StatusOr<CommandOutput> o = RunPlanCmdTest("train", r["train_args"]);
    ASSERT_TRUE(o.ok()) << o.status().message() << " " << r["train_args"].dump();
    EXPECT_EQ(o->json["step_time_s"], r["step_time_s"]) << r["train_args"].dump();
  }
}

}  // namespace
}  // namespace ndt
