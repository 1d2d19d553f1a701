#include "cmd/command.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ndt {
namespace {

const Context& Ctx() {
  static const Context ctx = *Context::Load(NDT_DATA_DIR);
  return ctx;
}

StatusOr<CommandOutput> RunCmd(const std::string& name, const Json& args,
                               const Context& ctx = Ctx()) {
  const Command* c = FindCommand(name);
  NDT_CHECK(c != nullptr, name);
  Diagnostics diag;
  return RunJson(*c, ctx, args, &diag);
}

TEST(Registry, EveryCommandHasAUniqueNameHelpAndDeclaresItsOptions) {
  std::set<std::string> names;
  for (const Command& c : Registry()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.help.empty()) << c.name;
    OptionList o;
    c.new_request()->Declare(&o);
    std::set<std::string> opts;
    for (const Option& x : o.options()) EXPECT_TRUE(opts.insert(x.name).second) << x.name;
  }
  EXPECT_NE(FindCommand("plan train"), nullptr);
  EXPECT_EQ(FindCommand("plan"), nullptr);
}

TEST(RunJson, BindsOptionsByNameWithDashesOrUnderscores) {
  // The same request through dashed and underscored keys gives the same document.
  Json a = {
      {"sku", "ND96amsr_A100_v4"}, {"op", "allreduce"}, {"min-bytes", "1M"}, {"max-bytes", "4M"}};
  Json b = {{"sku", "ND96amsr_A100_v4"},
            {"op", "allreduce"},
            {"min_bytes", 1048576},
            {"max_bytes", "4M"}};
  StatusOr<CommandOutput> x = RunCmd("collective", a), y = RunCmd("collective", b);
  ASSERT_TRUE(x.ok()) << x.status().message();
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(x->json.dump(), y->json.dump());
  // 1M, 2M, 4M: three rows.
  EXPECT_EQ(x->json["rows"].size(), 3u);
}

TEST(RunJson, RejectsUnknownOptionsWrongTypesAndMissingRequiredOnes) {
  StatusOr<CommandOutput> r =
      RunCmd("train", {{"sku", "ND96amsr_A100_v4"}, {"gbs", 8}, {"tpp", 2}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("unknown option 'tpp'"), std::string::npos);

  r = RunCmd("train", {{"sku", "ND96amsr_A100_v4"}, {"gbs", 8.5}, {"model", "llama2-7b"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'gbs' takes an integer"), std::string::npos);

  r = RunCmd("train", {{"sku", "ND96amsr_A100_v4"}, {"model", "llama2-7b"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'gbs' is required"), std::string::npos);

  r = RunCmd("topo", {{"sku", "ND96amsr_A100_v4"}, {"ecmp-spread", "yes"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("takes true or false"), std::string::npos);

  r = RunCmd("sku list", Json::array());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("must be a JSON object"), std::string::npos);
}

TEST(RunJson, AnOmittedOptionalIsChosenAndAGivenOneIsChecked) {
  // --mbs omitted: train chooses it (and says so); given 0 it is an error.
  Json base = {{"sku", "ND96amsr_A100_v4"}, {"model", "llama2-7b"}, {"gbs", 64}, {"zero", 1}};
  StatusOr<CommandOutput> r = RunCmd("train", base);
  ASSERT_TRUE(r.ok()) << r.status().message();
  bool chose_mbs = false;
  for (const Json& c : r->json["strategy"]["chosen"])
    chose_mbs |= c.get<std::string>().rfind("mbs", 0) == 0;  // "mbs 4"
  EXPECT_TRUE(chose_mbs);
  base["mbs"] = 0;
  r = RunCmd("train", base);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--mbs must be in 1.."), std::string::npos);
}

// The declared range of an option is one rule for every door, checked before the command runs:
// a degenerate fabric (radix 0 or 1) once reached a division by zero in the fat tree's layout.
TEST(RunJson, DeclaredRangesAreCheckedBeforeTheCommandInTheDoorsSpelling) {
  for (int radix : {0, 1, 3, 1025}) {
    StatusOr<CommandOutput> r =
        RunCmd("topo", {{"sku", "ND96isr_H100_v5"}, {"vms", 4}, {"radix", radix}});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), "--radix must be in 4..1024 (got " + std::to_string(radix) +
                                        "); ports per InfiniBand switch (Quantum-2: 64)");
  }
  Diagnostics diag;
  StatusOr<CommandOutput> r =
      RunJson(*FindCommand("infer"), Ctx(),
              {{"sku", "ND96isr_H100_v5"}, {"model", "llama2-7b"}, {"qps", 1e-300}}, &diag,
              [](const std::string& o) { return o + "="; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("qps= must be in 0.001..1000000 (got 1e-300)", 0), 0u)
      << r.status().message();
  // Inline model dimensions have the bounds of a model file's keys.
  r = RunCmd("train", {{"sku", "ND96isr_H100_v5"},
                       {"layers", 2},
                       {"hidden", 1000000000000000LL},
                       {"heads", 8},
                       {"gbs", 8}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--hidden must be in 1..1048576"), std::string::npos);
  // Training tokens beyond any run (1e300) are refused, not priced.
  r = RunCmd("train",
             {{"sku", "ND96isr_H100_v5"}, {"model", "llama2-7b"}, {"gbs", 8}, {"tokens", 1e300}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--tokens must be in 0..1000000000000000"),
            std::string::npos);
}

// Copies data/ to a temporary folder with the NIC's link latency at 1000 us instead of 1 us.
std::string DataWithSlowNics() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ndtwin_cmd_test_data";
  fs::remove_all(dir);
  fs::copy(NDT_DATA_DIR, dir, fs::copy_options::recursive);
  std::ifstream in(dir / "fabric.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  // nic_link:\n    value: "1.0 us" -> "1000 us"
  const size_t key = text.find("nic_link:");
  NDT_CHECK(key != std::string::npos, "fabric.yaml has no nic_link latency");
  const size_t q = text.find("value: \"", key) + 8;
  const size_t us = text.find(" us\"", q);
  NDT_CHECK(text.substr(q, us - q) == "1.0", "fabric.yaml's nic_link is not 1.0 us any more");
  text.replace(q, us - q, "1000");
  std::ofstream(dir / "fabric.yaml") << text;
  return dir.string();
}

TEST(Context, HwDataFabricReachesTrainAsItReachesTopo) {
  // A thousandfold NIC latency in --hw-data's fabric.yaml must show in topo and slow a training
  // step whose two pipeline stages sit on two VMs (each activation send crosses the NICs).
  // Before the Context, train built its cluster from the built-in fabric.yaml whatever
  // --hw-data said, and the two steps were equal.
  StatusOr<Context> slow = Context::Load(DataWithSlowNics());
  ASSERT_TRUE(slow.ok()) << slow.status().message();
  EXPECT_DOUBLE_EQ(slow->fabric.nic_latency_s, 1000 * Ctx().fabric.nic_latency_s);
  const Json job = {{"sku", "ND96amsr_A100_v4"},
                    {"vms", 2},
                    {"model", "gpt3-1.3b"},
                    {"gbs", 16},
                    {"pp", 2},
                    {"mbs", 1}};
  StatusOr<CommandOutput> a = RunCmd("train", job), b = RunCmd("train", job, *slow);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  // 16 micro-batches, each sending activations forward and gradients back across the NICs:
  // at least a millisecond more per step.
  EXPECT_GT(b->json["step_time_s"].get<double>(), a->json["step_time_s"].get<double>() + 1e-3);
  StatusOr<CommandOutput> ta = RunCmd("topo", {{"sku", "ND96amsr_A100_v4"}});
  StatusOr<CommandOutput> tb = RunCmd("topo", {{"sku", "ND96amsr_A100_v4"}}, *slow);
  ASSERT_TRUE(ta.ok() && tb.ok());
  EXPECT_DOUBLE_EQ(tb->json["latency_s"]["nic_link"].get<double>(), 1e-3);
}

// Copies data/ to a temporary folder with a known intervals file: Ampere training, 12 cases,
// 3 sources, measured/predicted p10 0.9 and p90 1.05; Hopper training, 7 cases of 1 source
// (rule 3, default width around its center: 0.6-1.0); no Blackwell class.
std::string DataWithKnownIntervals() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "ndtwin_cmd_test_intervals";
  fs::remove_all(dir);
  fs::copy(NDT_DATA_DIR, dir, fs::copy_options::recursive);
  std::ofstream(dir / "calibration" / "intervals.yaml")
      << "min_sources: 3\n"
         "defaults:\n"
         "  - {workload: training, half_width: 0.25, reason: r}\n"
         "  - {workload: training-zero3, half_width: 0.25, reason: r}\n"
         "  - {workload: serving, half_width: 0.35, reason: r}\n"
         "  - {workload: collectives-small, half_width: 0.5, reason: r}\n"
         "  - {workload: collectives-medium, half_width: 0.3, reason: r}\n"
         "  - {workload: collectives-large, half_width: 0.3, reason: r}\n"
         "classes:\n"
         "  - {class: Ampere training, arch: Ampere, workload: training, metric: m, cases: 12,\n"
         "     sources: 3, p10: 0.9, p90: 1.05, default_width: false, basis: twelve}\n"
         "  - {class: Hopper training, arch: Hopper, workload: training, metric: m, cases: 7,\n"
         "     sources: 1, p10: 0.6, p90: 1.0, default_width: true, basis: one paper}\n";
  return dir.string();
}

TEST(Intervals, TrainJsonAndTextCarryTheIntervalOfTheClass) {
  StatusOr<Context> ctx = Context::Load(DataWithKnownIntervals());
  ASSERT_TRUE(ctx.ok()) << ctx.status().message();
  Json job = {{"sku", "ND96amsr_A100_v4"},
              {"layers", 4},
              {"hidden", 512},
              {"heads", 8},
              {"seq", 512},
              {"gbs", 16},
              {"mbs", 2}};
  StatusOr<CommandOutput> r = RunCmd("train", job, *ctx);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // A time scales as 1 / rate: step t -> [t / p90, t / p10] = [t / 1.05, t / 0.9]; MFU (a rate)
  // -> [0.9 mfu, 1.05 mfu].
  const double t = r->json["step_time_s"].get<double>();
  const Json& it = r->json["step_time_s_interval"];
  EXPECT_DOUBLE_EQ(it["p10"].get<double>(), t / 1.05);
  EXPECT_DOUBLE_EQ(it["p90"].get<double>(), t / 0.9);
  EXPECT_EQ(it["cases"], 12);
  EXPECT_EQ(it["basis"], "twelve");
  EXPECT_EQ(it["class"], "Ampere training");
  const double mfu = r->json["mfu"].get<double>();
  EXPECT_DOUBLE_EQ(r->json["mfu_interval"]["p10"].get<double>(), 0.9 * mfu);
  EXPECT_DOUBLE_EQ(r->json["mfu_interval"]["p90"].get<double>(), 1.05 * mfu);
  EXPECT_NE(r->text.find("(p10\u2013p90 "), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("12 cases, Ampere training)"), std::string::npos) << r->text;

  // No Blackwell training class: the training default, +-25%: [t / 1.25, t / 0.75].
  job["sku"] = "ND128isr_NDR_GB200_v6";
  r = RunCmd("train", job, *ctx);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double tb = r->json["step_time_s"].get<double>();
  EXPECT_DOUBLE_EQ(r->json["step_time_s_interval"]["p10"].get<double>(), tb / 1.25);
  EXPECT_DOUBLE_EQ(r->json["step_time_s_interval"]["p90"].get<double>(), tb / 0.75);
  EXPECT_EQ(r->json["step_time_s_interval"]["cases"], 0);
  EXPECT_NE(r->text.find("Blackwell training; fewer than 3 cases: default width)"),
            std::string::npos)
      << r->text;

  // Hopper training is a one-source class: its own (default-width) interval from the file,
  // [t / 1.0, t / 0.6], said to be the default width for want of sources.
  job["sku"] = "ND96isr_H100_v5";
  r = RunCmd("train", job, *ctx);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double th = r->json["step_time_s"].get<double>();
  EXPECT_DOUBLE_EQ(r->json["step_time_s_interval"]["p10"].get<double>(), th / 1.0);
  EXPECT_DOUBLE_EQ(r->json["step_time_s_interval"]["p90"].get<double>(), th / 0.6);
  EXPECT_EQ(r->json["step_time_s_interval"]["basis"], "one paper");
  EXPECT_NE(r->text.find("7 cases, Hopper training; fewer than 3 sources: default width)"),
            std::string::npos)
      << r->text;

  // The built-in data carries one too.
  r = RunCmd("train", {{"sku", "ND96amsr_A100_v4"},
                       {"layers", 4},
                       {"hidden", 512},
                       {"heads", 8},
                       {"seq", 512},
                       {"gbs", 16},
                       {"mbs", 2}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->json["step_time_s_interval"]["class"], "Ampere training");
}

TEST(OptionValues, ShowsDefaultsAndNullForOmittedOptionals) {
  const Command* c = FindCommand("train");
  ASSERT_NE(c, nullptr);
  auto req = c->new_request();
  OptionList o;
  req->Declare(&o);
  Json v = OptionValues(o);
  EXPECT_EQ(v["cp"], 1);
  // Knobs train chooses when omitted (plan/choose.h) are null until given.
  EXPECT_TRUE(v["tp"].is_null());
  EXPECT_TRUE(v["mbs"].is_null());
  // Knobs the software stack fills are null until given; the stack has its default.
  EXPECT_TRUE(v["recompute"].is_null());
  EXPECT_TRUE(v["sp"].is_null());
  EXPECT_EQ(v["stack"], "megatron-core-2024");
  // The stage layout and the CP exchange are stack knobs too (meta-llama3-2024 sets both).
  EXPECT_TRUE(v["uneven-stages"].is_null());
  EXPECT_TRUE(v["cp-comm"].is_null());
}

}  // namespace
}  // namespace ndt

namespace ndt {
namespace {

TEST(RunJson, ErrorsAndWarningsNameOptionsInTheDoorsSpelling) {
  // The range says "--mbs must be in 1..16777216"; a Python door spells the option "mbs=", and only
  // declared options are respelled ("--x" is not an option of train; "--mbs-foo" is no word of
  // it either).
  const OptionSpelling python = [](const std::string& o) {
    std::string s = o;
    for (char& c : s) {
      if (c == '-') c = '_';
    }
    return s + "=";
  };
  Json job = {{"sku", "ND96amsr_A100_v4"}, {"model", "llama2-7b"}, {"gbs", 64}, {"mbs", 0}};
  const Command* train = FindCommand("train");
  ASSERT_NE(train, nullptr);
  Diagnostics diag;
  StatusOr<CommandOutput> r = RunJson(*train, Ctx(), job, &diag, python);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(r.status().message().rfind("mbs= must be in 1..", 0), 0u) << r.status().message();
  OptionList o;
  train->new_request()->Declare(&o);
  EXPECT_EQ(Respell("--x and --mbs-foo, --no-dp-overlap.", o, python),
            "--x and --mbs-foo, no_dp_overlap=.");
  // Without a spelling the CLI's text is kept.
  r = RunJson(*train, Ctx(), job, &diag);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message().rfind("--mbs must be in 1..", 0), 0u);
}

TEST(Placement, TopoAndHpcWarnAsFleetReadsTheScaleSetLimits) {
  // data/placement.yaml: a scale set holds 100 VMs by default and 300 on request, and InfiniBand
  // stays inside one. 150 VMs fit one raised scale set: the warning asks for the raise (before,
  // topo and hpc said "VMs in different scale sets share no InfiniBand network" while their own
  // Placement line said 1 scale set); 301 do not; 100 need nothing.
  for (const char* cmd : {"topo", "hpc"}) {
    auto warnings = [&](int vms) {
      Json args = {{"sku", "ND96isr_H100_v5"}, {"vms", vms}};
      if (std::string(cmd) == "hpc") args["bench"] = "stream";
      Diagnostics diag;
      StatusOr<CommandOutput> r = RunJson(*FindCommand(cmd), Ctx(), args, &diag);
      EXPECT_TRUE(r.ok()) << cmd << ": " << r.status().message();
      return diag.warnings;
    };
    EXPECT_TRUE(warnings(100).empty()) << cmd;
    const std::vector<std::string> w150 = warnings(150);
    ASSERT_EQ(w150.size(), 1u) << cmd;
    EXPECT_NE(w150[0].find("ask support to raise it to 300"), std::string::npos) << w150[0];
    const std::vector<std::string> w301 = warnings(301);
    ASSERT_EQ(w301.size(), 1u) << cmd;
    EXPECT_NE(w301[0].find("RDMA does not cross scale sets"), std::string::npos) << w301[0];
  }
}

TEST(Hpc, BenchmarksAcrossVmsWithoutInfiniBandAreRefused) {
  // Standard_ND12s (2 P40 on PCIe) has no InfiniBand: the cluster graph has no link between its
  // VMs. Before, osu-bw across 2 VMs reported 6579 GB/s over "Ethernet" (a route of no links,
  // infinite bandwidth), and osu-latency, osu-allreduce, hpcg and halo3d ran on it; hpl failed
  // with the collective's message. Now every benchmark that crosses VMs refuses, as collective,
  // topo --path and fleet do; STREAM (no messages) and one VM still run.
  for (const char* bench : {"osu-latency", "osu-bw", "osu-allreduce", "hpcg", "halo3d", "hpl"}) {
    Json args = {{"sku", "Standard_ND12s"}, {"vms", 2}, {"bench", bench}};
    StatusOr<CommandOutput> r = RunCmd("hpc", args);
    ASSERT_FALSE(r.ok()) << bench;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput) << bench;
    EXPECT_EQ(r.status().message().rfind("Standard_ND12s has no InfiniBand: ", 0), 0u)
        << r.status().message();
    args["vms"] = 1;
    EXPECT_TRUE(RunCmd("hpc", args).ok()) << bench;
  }
  EXPECT_TRUE(RunCmd("hpc", {{"sku", "Standard_ND12s"}, {"vms", 2}, {"bench", "stream"}}).ok());
}

TEST(Hpc, HelpNamesEveryBench) {
  // `ndtwin --help` and the web's index show the command's help: it left out HPCG and halo3d,
  // which --bench runs. Every name --bench's help lists must be in it (case aside).
  const Command* hpc = FindCommand("hpc");
  ASSERT_NE(hpc, nullptr);
  std::string help = hpc->help;
  for (char& ch : help) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* bench : {"hpl", "hpcg", "stream", "osu", "halo3d"}) {
    EXPECT_NE(help.find(bench), std::string::npos) << bench << " missing from: " << hpc->help;
  }
}

TEST(Hpc, OsuBuffersMustFitTheirMemory) {
  // Each OSU rank allocates a send and a receive buffer of the message size. H100-SXM5-80GB
  // holds 79.11 GiB (data/gpus, what CUDA can allocate): 2 x 39 GiB = 78 GiB fits, 2 x 40 GiB =
  // 80 GiB does not, and the largest whole GiB is 79.11 / 2 = 39.6 -> 39G. Before, --bytes 1T
  // printed a bandwidth.
  for (const char* bench : {"osu-bw", "osu-latency", "osu-allreduce"}) {
    Json args = {{"sku", "ND96isr_H100_v5"}, {"vms", 2}, {"bench", bench}, {"bytes", "39G"}};
    EXPECT_TRUE(RunCmd("hpc", args).ok()) << bench;
    args["bytes"] = "40G";
    StatusOr<CommandOutput> r = RunCmd("hpc", args);
    ASSERT_FALSE(r.ok()) << bench;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(r.status().message().find("use --bytes 39G or less"), std::string::npos)
        << r.status().message();
  }
  // Host buffers share the VM's memory (Standard_ND96isr_H100_v5: 1900 GiB): the intra-VM pair
  // puts 2 ranks there, 2 x 2 x 475 GiB = 1900 GiB fits and 476 GiB does not; osu-allreduce
  // puts all 8, 8 x 2 x 118 GiB = 1888 GiB fits and 119 GiB (1904 GiB) does not.
  const Json host = {{"sku", "ND96isr_H100_v5"}, {"vms", 2}, {"buffer", "host"}};
  Json bw = host, ar = host;
  bw["bench"] = "osu-bw";
  ar["bench"] = "osu-allreduce";
  bw["bytes"] = "475G";
  ar["bytes"] = "118G";
  EXPECT_TRUE(RunCmd("hpc", bw).ok());
  EXPECT_TRUE(RunCmd("hpc", ar).ok());
  bw["bytes"] = "476G";
  ar["bytes"] = "119G";
  EXPECT_FALSE(RunCmd("hpc", bw).ok());
  EXPECT_FALSE(RunCmd("hpc", ar).ok());
}

TEST(Hpc, RaisedRadixIsAWarning) {
  // 8,193 VMs of 8 NICs are one more than a 3-tier radix-64 rail-optimized tree holds (8,192,
  // topo/builders.h): the radix is raised to 128, and the output must say so, as train's does.
  Diagnostics diag;
  StatusOr<CommandOutput> r =
      RunJson(*FindCommand("hpc"), Ctx(),
              {{"sku", "ND96isr_H100_v5"}, {"vms", 8193}, {"bench", "stream"}}, &diag);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(diag.warnings.empty());
  EXPECT_EQ(diag.warnings[0],
            "radix 64 cannot wire 8193 VMs in 3 tiers; assumed radix 128 (--radix)");
}

TEST(Validate, JsonNamesTheMeasurementsFolderRelativeToTheRepo) {
  // The default folder is ../shared beside the repo when it holds validation/, else the repo's
  // own copy: said relative to the repo ("../shared" or "."), never the absolute path (the web
  // app passes this document on to its users).
  StatusOr<CommandOutput> r = RunCmd("validate", {{"suite", "collectives"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const bool sibling = std::filesystem::is_directory(NDT_SHARED_SIBLING_DIR "/validation");
  EXPECT_EQ(r->json["data"], sibling ? "../shared" : ".");
}

}  // namespace
}  // namespace ndt
