// The NCCL release gates: which releases ndtwin models, when each algorithm and multi-node
// NVLink appeared, the multi-node ring latency by release, and the first release that runs
// Blackwell.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "coll/coll_testing.h"
#include "coll/collective.h"
#include "coll/nccl_model.h"
#include "coll/schedule.h"
#include "coll/testing.h"

namespace ndt {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

TEST(NcclVersion, MultiNodeRingLatencyFollowsTheReleasesModel) {
  // NCCL tuning.cc, Ring all_reduce across nodes: L = base + (nsteps - nInter) x max(intraLat,
  // netOverhead) + nInter x interLat, x1.4 for Simple past 64 B per channel and rank (plateau).
  // 2 ND A100 v4 VMs x 1 GPU: nsteps = 2; netOverhead on the AMD host 2 us (x3 for Simple),
  // above the NVLink and PCI intra latencies. v2.23+ (pinned 2.30.4): nInter = 2(N-1) = 2 and,
  // with ppn == 1, the Tree's network latency (Simple 14, LL 5.0): Simple (8.4 + 0 + 2 x 14) x
  // 1.4 = 50.96, LL 6.6 + 2 x 5.0 = 16.6. v2.12-v2.22 (2.18.5): nInter = 2N = 4 and the Ring's
  // own network latency (Simple 14, LL 2.7), nsteps - nInter = -2 as NCCL writes it: Simple
  // (8.4 - 2 x 6 + 4 x 14) x 1.4 = 73.36, LL 6.6 - 2 x 2 + 4 x 2.7 = 13.4.
  Env e;
  ClusterSpec spec;
  spec.sku = *e.cat.FindSku("Standard_ND96amsr_A100_v4");
  spec.gpu = &e.cat.GpuOf(*spec.sku);
  spec.vms = 2;
  spec.gpus_per_vm = 1;
  spec.fabric.tiers = ChooseTiers(spec);
  const Cluster c = *testing::BuildClusterForTest(spec);
  NcclTopo t = *AnalyzeGroup(c, All(c), testing::BuiltinNcclCalibration().tuning);
  auto lat = [&](Proto p) {
    return EstimateNccl(t, CollOp::kAllReduce, Algo::kRing, p, kGiB, false).latency_us;
  };
  EXPECT_NEAR(lat(Proto::kSimple), 50.96, 1e-9);
  EXPECT_NEAR(lat(Proto::kLL), 16.6, 1e-9);
  t.nccl_version = 21805;
  EXPECT_NEAR(lat(Proto::kSimple), 73.36, 1e-9);
  EXPECT_NEAR(lat(Proto::kLL), 13.4, 1e-9);
}

TEST(NcclVersion, ParsesReleasesInTheModelledRange) {
  int v = 0;
  ASSERT_TRUE(ParseNcclVersion("2.18.5", &v).ok());
  EXPECT_EQ(v, 21805);
  ASSERT_TRUE(ParseNcclVersion("2.23", &v).ok());
  EXPECT_EQ(v, 22300);
  ASSERT_TRUE(ParseNcclVersion("2.12.0", &v).ok());
  ASSERT_TRUE(ParseNcclVersion("2.30.7", &v).ok());
  for (const char* bad : {"2.0.0", "2.11.4", "2.31.2", "2.99.0", "9.99.99", "3.x", "2.18.5x", "",
                          "2..1", "2.18.5.1", "-2.18", "2.1234.0"}) {
    Status s = ParseNcclVersion(bad, &v);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << bad;
    EXPECT_NE(s.message().find("2.12.0 to 2.30.x"), std::string::npos) << s.message();
  }
  EXPECT_EQ(NcclVersionName(21805), "2.18.5");
}

TEST(NcclVersion, AlgorithmsAppearWithTheirRelease) {
  Env e;
  const Cluster one = e.Build("Standard_ND96isr_H100_v5", 1);
  const Cluster two = e.Build("Standard_ND96isr_H100_v5", 2);
  CollOptions o;
  // NVLS arrived in 2.17.1: 8 H100 at 1 GiB pick it from 2.17 on, the ring before.
  o.nccl_version = 21605;
  EXPECT_EQ(testing::TimeCollectiveCal(one, CollOp::kAllReduce, kGiB, All(one), o)->algo,
            Algo::kRing);
  o.nccl_version = 21701;
  EXPECT_EQ(testing::TimeCollectiveCal(one, CollOp::kAllReduce, kGiB, All(one), o)->algo,
            Algo::kNvls);
  // NVLSTree (NVLS inside, tree across nodes) arrived in 2.18.1.
  o.algo = Algo::kNvlsTree;
  StatusOr<CollResult> r = testing::TimeCollectiveCal(two, CollOp::kAllReduce, kGiB, All(two), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("NVLSTree needs NCCL 2.18 or newer"), std::string::npos)
      << r.status().message();
  o.nccl_version = 21801;
  EXPECT_TRUE(testing::TimeCollectiveCal(two, CollOp::kAllReduce, kGiB, All(two), o).ok());
  // PAT (one rank per node) arrived in 2.23.4.
  const std::vector<int> per_node = {0, 8};
  o.algo = Algo::kPat;
  o.nccl_version = 22203;
  EXPECT_FALSE(testing::TimeCollectiveCal(two, CollOp::kAllGather, kGiB, per_node, o).ok());
  o.nccl_version = 22304;
  EXPECT_TRUE(testing::TimeCollectiveCal(two, CollOp::kAllGather, kGiB, per_node, o).ok());
  // A release outside the modelled range is refused, not priced as 2.30.
  CollOptions old;
  old.nccl_version = 20000;
  EXPECT_EQ(
      testing::TimeCollectiveCal(one, CollOp::kAllReduce, kGiB, All(one), old).status().code(),
      StatusCode::kInvalidInput);
}

// Multi-node NVLink (MNNVL, data/nccl.yaml mnnvl): none before NCCL 2.20; 2.20 only when the
// whole communicator is one NVLink clique (one rack, also a partial one), without NVLS; 2.21
// for any clique, with NVLS. No Blackwell GPU runs a release before 2.25.1 (TimeCollective
// refuses it), so the releases' rules are priced on an NVL72 rack of Hopper GPUs (sm_90, as
// the GH200 NVL32 racks that 2.20's MNNVL was written for).
TEST(NcclVersion, MultiNodeNvlinkArrivesIn220ForOneRackAnd221ForSeveral) {
  Env e;
  const NcclTuning& k = testing::BuiltinNcclCalibration().tuning;
  EXPECT_EQ(k.mnnvl_since, 22000);
  EXPECT_EQ(k.mnnvl_full_since, 22100);
  const std::string gb300 = "Standard_ND128isr_GB300_v6";
  GpuSpec hopper = e.cat.GpuOf(**e.cat.FindSku(gb300));
  hopper.sm_version = 90;
  const Cluster one_vm = e.Build(gb300, 1, {}, &hopper);
  const Cluster partial = e.Build(gb300, 5, {}, &hopper);  // 20 GPUs of one rack
  const Cluster racks = e.Build(gb300, 36, {}, &hopper);   // 2 racks
  const Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 4);
  for (int v : {21200, 21904, 22005, 22105, 23004}) {
    // No domain spans VMs: nothing to decide.
    EXPECT_TRUE(NcclUsesNvlinkAcrossVms(one_vm, All(one_vm), k, v)) << v;
    EXPECT_TRUE(NcclUsesNvlinkAcrossVms(h100, All(h100), k, v)) << v;
  }
  EXPECT_FALSE(NcclUsesNvlinkAcrossVms(partial, All(partial), k, 21904));
  EXPECT_TRUE(NcclUsesNvlinkAcrossVms(partial, All(partial), k, 22003));
  EXPECT_FALSE(NcclUsesNvlinkAcrossVms(racks, All(racks), k, 22005));
  EXPECT_TRUE(NcclUsesNvlinkAcrossVms(racks, All(racks), k, 22105));
  // One GPU of each of the 36 VMs: every rack's domain still spans 18 VMs.
  std::vector<int> per_vm;
  for (int vm = 0; vm < 36; ++vm) per_vm.push_back(4 * vm);
  EXPECT_FALSE(NcclUsesNvlinkAcrossVms(racks, per_vm, k, 22005));

  // The library refuses to price the rack's NVLink for a release that does not use it.
  CollOptions o;
  o.nccl_version = 21904;
  StatusOr<CollResult> r =
      testing::TimeCollectiveCal(partial, CollOp::kAllReduce, kGiB, All(partial), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("multi-node NVLink needs NCCL 2.20"), std::string::npos)
      << r.status().message();

  // 2.20 runs MNNVL without NVLS, on one VM too (the clique is the whole communicator);
  // 2.19 (no MNNVL: one node) and 2.21 run it.
  o.algo = Algo::kNvls;
  o.nccl_version = 22005;
  r = testing::TimeCollectiveCal(one_vm, CollOp::kAllReduce, kGiB, All(one_vm), o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("NVLS over multi-node NVLink needs NCCL 2.21"),
            std::string::npos)
      << r.status().message();
  EXPECT_FALSE(testing::TimeCollectiveCal(partial, CollOp::kAllReduce, kGiB, All(partial), o).ok());
  o.nccl_version = 21904;
  EXPECT_TRUE(testing::TimeCollectiveCal(one_vm, CollOp::kAllReduce, kGiB, All(one_vm), o).ok());
  o.nccl_version = 22105;
  EXPECT_TRUE(testing::TimeCollectiveCal(partial, CollOp::kAllReduce, kGiB, All(partial), o).ok());

  // Without MNNVL two VMs of a rack are two NCCL nodes of 4 GPUs joined by their 4 NICs of
  // 800 Gb/s (100 GB/s each). An all_reduce between two nodes must send each node's half of
  // the buffer reduced and receive the other half back: S per node and direction through 400
  // GB/s, so algbw <= 400 GB/s, whatever the algorithm. Over the rack's NVLink (2.21) each GPU
  // has 900 GB/s per direction, and the 8 GPUs' all_reduce runs well above 400.
  const Cluster split = e.Build(gb300, 2, {}, nullptr, /*nvlink_across_vms=*/false);
  const Cluster rack2 = e.Build(gb300, 2);
  const NcclTopo t = *AnalyzeGroup(split, All(split), k);
  EXPECT_EQ(t.nodes, 2);
  EXPECT_EQ(t.nics_per_node, 4);
  const CollResult ib =
      *testing::TimeCollectiveCal(split, CollOp::kAllReduce, 4 * kGiB, All(split));
  EXPECT_LE(ib.algbw_Bps, 400e9);
  const CollResult nvl =
      *testing::TimeCollectiveCal(rack2, CollOp::kAllReduce, 4 * kGiB, All(rack2));
  EXPECT_GT(nvl.algbw_Bps, 400e9);
}

TEST(NcclVersion, BlackwellNeedsNccl2251) {
  // data/nccl.yaml gpu_support_since: sm_100 from NCCL 2.25.1 (its release notes: "Add
  // Blackwell/SM100 support"); GB300 (sm_103) runs the sm_100 code, so the same; Hopper and
  // older: no entry, any release in range.
  Env e;
  const NcclTuning& k = testing::BuiltinNcclCalibration().tuning;
  EXPECT_EQ(FirstNcclReleaseFor(k, 100), 22501);
  EXPECT_EQ(FirstNcclReleaseFor(k, 103), 22501);
  EXPECT_EQ(FirstNcclReleaseFor(k, 90), 0);
  for (const char* sku : {"Standard_ND128isr_GB300_v6", "Standard_ND128isr_NDR_GB200_v6"}) {
    const Cluster c = e.Build(sku, 1);
    CollOptions o;
    o.nccl_version = 22403;
    StatusOr<CollResult> r = testing::TimeCollectiveCal(c, CollOp::kAllReduce, kGiB, All(c), o);
    ASSERT_FALSE(r.ok()) << sku;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(r.status().message().find("NCCL 2.25.1 is the first release"), std::string::npos)
        << r.status().message();
    o.nccl_version = 22501;
    EXPECT_TRUE(testing::TimeCollectiveCal(c, CollOp::kAllReduce, kGiB, All(c), o).ok()) << sku;
  }
  const Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 1);
  CollOptions old;
  old.nccl_version = 21805;
  EXPECT_TRUE(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, kGiB, All(h100), old).ok());
}

}  // namespace
}  // namespace ndt
