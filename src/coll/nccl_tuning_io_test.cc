// data/nccl.yaml, NCCL's own tables, is what the model reads: editing a value of the file moves
// the model by exactly what the formula says, and a malformed file is a one-line error.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "coll/coll_testing.h"
#include "coll/nccl_model.h"
#include "coll/testing.h"

namespace ndt {
namespace {

std::string TuningText() {
  std::ifstream in(std::string(NDT_DATA_DIR) + "/nccl.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

NcclTuning Parse(const std::string& text) {
  StatusOr<NcclTuning> t = ParseNcclTuning(text, "nccl.yaml");
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : NcclTuning{};
}

TEST(NcclTuning, LoadsEveryTableWithItsShape) {
  const NcclTuning& k = testing::BuiltinNcclCalibration().tuning;
  ASSERT_TRUE(k.loaded);
  // nvlink_GBps_per_link: sm60 18 .. sm100 40.1, sorted by sm.
  ASSERT_EQ(k.nvlink_GBps_per_link.size(), 6u);
  EXPECT_EQ(k.nvlink_GBps_per_link.front().first, 60);
  EXPECT_DOUBLE_EQ(k.nvlink_GBps_per_link.back().second, 40.1);
  EXPECT_EQ(k.ctas_per_channel, 1);          // ncclLaunchKernel: one thread block per channel
  EXPECT_EQ(k.intra_speeds[1].front(), 60);  // Hopper's first intra search speed
  EXPECT_EQ(k.inter_speeds[2].size(), 20u);  // Blackwell's inter speeds
  EXPECT_DOUBLE_EQ(k.ll_max_bw[3][0], 282);
  EXPECT_DOUBLE_EQ(k.per_ch_max_nvls_tree[2][1], 57.7);
  // base_latency_us: ring [6.6, 14, 8.4]; NVLS takes `others` (0).
  EXPECT_DOUBLE_EQ(k.base_latency_us[0][2], 8.4);
  EXPECT_DOUBLE_EQ(k.base_latency_us[2][2], 0);
  // hw_latency_us.net.collnet_direct Simple 31 us (algorithm index 4).
  EXPECT_DOUBLE_EQ(k.hw_latency_us[2][4][2], 31);
  EXPECT_DOUBLE_EQ(k.simple_buffer_bytes, 4.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(k.tree_correction[2][22], .9);
}

TEST(NcclTuning, TheModelReadsTheFilesValues) {
  Env env;
  const Cluster c = env.Build("Standard_ND96amsr_A100_v4", 1);
  const std::vector<int> g = All(c);
  const NcclTuning base = Parse(TuningText());
  const NcclTopo t0 = *AnalyzeGroup(c, g, base);
  // Ring LL128 latency on NVLink: hw_latency_us.nvlink.ring [0.6, 1.9, 3.4] -> LL128 2.9. One
  // node of 8 ranks, all_reduce: steps = 2 x 7 = 14, each paying the NVLink latency, so the
  // estimate's latency grows by 14 x 1.0 us.
  const NcclTuning slower =
      Parse(Replace(TuningText(), "ring: [0.6, 1.9, 3.4]", "ring: [0.6, 2.9, 3.4]"));
  const NcclTopo t1 = *AnalyzeGroup(c, g, slower);
  const double l0 =
      EstimateNccl(t0, CollOp::kAllReduce, Algo::kRing, Proto::kLL128, 1 << 20, false).latency_us;
  const double l1 =
      EstimateNccl(t1, CollOp::kAllReduce, Algo::kRing, Proto::kLL128, 1 << 20, false).latency_us;
  EXPECT_NEAR(l1 - l0, 14.0, 1e-9);
  // Ampere's intra search speeds start at 40 GB/s (pre_hopper row): A100's 12 x 20 = 240 GB/s of
  // NVLink fits 6 channels of 40, duplicated to 12 of 20. With 48 first, 5 channels of 48 (240),
  // duplicated to 10 of 24.
  EXPECT_EQ(t0.ring_channels, 12);
  const NcclTuning fast =
      Parse(Replace(TuningText(), "pre_hopper: [40, 30,", "pre_hopper: [48, 40, 30,"));
  const NcclTopo t2 = *AnalyzeGroup(c, g, fast);
  EXPECT_EQ(t2.ring_channels, 10);
  EXPECT_DOUBLE_EQ(t2.bw_intra_GBps, 24);
  // The Simple ring loop: a 4 MiB buffer in 8 steps, chunks of 4 steps: 2 x 12 x 8 x 2 MiB =
  // 384 MiB per loop; an 8 MiB buffer, 1 MiB steps and 4 MiB chunks: 768 MiB per loop.
  EXPECT_EQ(RingSimpleLoops(t0, 385.0 * (1 << 20)), 2);
  const NcclTuning big = Parse(Replace(TuningText(), "buffer: 4 MiB", "buffer: 8 MiB"));
  const NcclTopo t3 = *AnalyzeGroup(c, g, big);
  EXPECT_EQ(RingSimpleLoops(t3, 385.0 * (1 << 20)), 1);
  // mnnvl.since: 5 GB300 VMs (one rack) reach each other over NVLink from 2.20; with "2.22"
  // in the file, NCCL 2.21.5 no longer does.
  const Cluster rack = env.Build("Standard_ND128isr_GB300_v6", 5);
  EXPECT_TRUE(NcclUsesNvlinkAcrossVms(rack, All(rack), base, 22105));
  const NcclTuning later =
      Parse(Replace(Replace(TuningText(), "since: \"2.20\"", "since: \"2.22\""),
                    "any_clique_and_nvls_since: \"2.21\"", "any_clique_and_nvls_since: \"2.22\""));
  EXPECT_FALSE(NcclUsesNvlinkAcrossVms(rack, All(rack), later, 22105));
  // gpu_support_since: sm_100 and later from 2.25.1; with "2.26" in the file, GB300 (sm_103)
  // from 2.26.0.
  EXPECT_EQ(FirstNcclReleaseFor(base, 103), 22501);
  const NcclTuning newer = Parse(Replace(TuningText(), "sm100: \"2.25.1\"", "sm100: \"2.26\""));
  EXPECT_EQ(FirstNcclReleaseFor(newer, 103), 22600);
}

TEST(NcclTuning, BadFilesAreOneLineErrors) {
  struct Bad {
    std::string from, to, want;
  } bads[] = {
      {"llMaxBw: [[39.0, 39.0, 20.4], ", "llMaxBw: [", "expected 4 rows"},
      {"pre_hopper: [40, 30,", "pre_hopper: [30, 40,", "strictly descending"},
      {"since_2_21: 2}", "since_2_21: 0}", "must be a finite number > 0"},
      {"nvls_efficiency: {volta: 0,", "nvls_efficiency: {volta: 0, turing: 0,", "turing"},
      {"simple: [.9, .9,", "simple: [.9,", "expected 23 numbers"},
      {"buffer: 4 MiB", "buffer: 4", "buffer"},
      {"since: \"2.20\"", "since: \"2.x\"", "2.12.0 to 2.30.x"},
      {"any_clique_and_nvls_since: \"2.21\"", "any_clique_and_nvls_since: \"2.19\"",
       "must not be older than since"},
      {"gpu_support_since: {sm100:", "gpu_support_since: {blackwell:",
       "keys are compute capabilities"},
  };
  for (const Bad& b : bads) {
    StatusOr<NcclTuning> r = ParseNcclTuning(Replace(TuningText(), b.from, b.to), "nccl.yaml");
    ASSERT_FALSE(r.ok()) << b.want;
    EXPECT_NE(r.status().message().find(b.want), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("nccl.yaml", 0), 0u) << r.status().message();
  }
  EXPECT_FALSE(LoadNcclTuning("/nonexistent").ok());
}

}  // namespace
}  // namespace ndt
