// Tests of the cluster builders: structure and bandwidth invariants of each VM family and of
// the fat tree (topology.md §2-§6), with sizes built by hand (topo/test_specs.h).
#include "topo/builders.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <utility>

#include "topo/summary.h"
#include "topo/test_specs.h"

namespace ndt {
namespace {

using testing::TestSize;

FabricParams Params() {
  StatusOr<FabricParams> p = LoadFabricParams(NDT_DATA_DIR);
  NDT_CHECK(p.ok(), p.status().message());
  return *p;
}

Cluster Build(const ClusterSpec& spec) {
  StatusOr<Cluster> c = BuildCluster(spec, Params());
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::move(c).value();
}

TEST(Builders, Ndv2HasSixteenConnectedPairsAndSixNvlinksPerGpu) {
  TestSize t = testing::Ndv2();
  Cluster c = Build(t.Spec(1));
  std::set<std::pair<NodeId, NodeId>> pairs;
  std::map<NodeId, int> lanes;
  for (size_t i = 0; i < c.links().size(); i += 2) {
    const Link& l = c.links()[i];
    if (l.kind != LinkKind::kNvlink) continue;
    pairs.insert({l.src, l.dst});
    lanes[l.src] += l.lanes;
    lanes[l.dst] += l.lanes;
  }
  // topology.md §2.2: 16 connected pairs, 6 link endpoints per GPU.
  EXPECT_EQ(pairs.size(), 16u);
  ASSERT_EQ(lanes.size(), 8u);
  for (const auto& [gpu, n] : lanes) EXPECT_EQ(n, 6) << c.node(gpu).name;
  // 6 links x 25 GB/s = 150 GB/s per direction.
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(c, 3), 150 * kGB);
  EXPECT_EQ(c.nvlink_domain_gpus(), 8);
}

TEST(Builders, Ndv2DoubledPairHasTwoLanesAt50GBps) {
  TestSize t = testing::Ndv2();
  Cluster c = Build(t.Spec(1));
  Route r = c.GpuRoute(0, 1);  // 0=1 is on the doubled ring
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].links.size(), 1u);
  EXPECT_EQ(c.link(r[0].links[0]).lanes, 2);
  EXPECT_DOUBLE_EQ(c.link(r[0].links[0]).bw_Bps, 50 * kGB);
}

TEST(Builders, A100v4NvlinkIs300GBpsPerGpuPerDirection) {
  TestSize t = testing::A100v4();
  Cluster c = Build(t.Spec(2));
  // 12 NVLink3 x 25 GB/s = 300 GB/s, as 6 switches x 2 lanes.
  for (int r = 0; r < c.num_gpus(); ++r) EXPECT_DOUBLE_EQ(GpuNvlinkBps(c, r), 300 * kGB);
  int to_switch = 0;
  for (LinkId l : c.out_links(c.gpu(0).node)) {
    if (c.link(l).kind != LinkKind::kNvlink) continue;
    ++to_switch;
    EXPECT_EQ(c.link(l).lanes, 2);
    EXPECT_DOUBLE_EQ(c.link(l).bw_Bps, 50 * kGB);
  }
  EXPECT_EQ(to_switch, 6);
}

TEST(Builders, H100v5NvlinkIs450GBpsSplit5445) {
  TestSize t = testing::H100v5();
  Cluster c = Build(t.Spec(1));
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(c, 5), 450 * kGB);  // 18 x 25 GB/s
  std::vector<int> lanes;
  for (LinkId l : c.out_links(c.gpu(5).node)) {
    if (c.link(l).kind == LinkKind::kNvlink) lanes.push_back(c.link(l).lanes);
  }
  EXPECT_EQ(lanes, (std::vector<int>{5, 4, 4, 5}));
}

TEST(Builders, PcieSwitchesCarryGpusAndNicsAsTheTopoFiles) {
  // v4: 4 switches x 2 GPUs; v5: 8 switches x 1 GPU; one NIC per GPU on its switch.
  TestSize a = testing::A100v4();
  TestSize h = testing::H100v5();
  Cluster ca = Build(a.Spec(1));
  Cluster ch = Build(h.Spec(1));
  auto count = [](const Cluster& c, NodeKind k) {
    for (auto [kind, n] : NodeCounts(c)) {
      if (kind == k) return n;
    }
    return 0;
  };
  EXPECT_EQ(count(ca, NodeKind::kPcieSwitch), 4);
  EXPECT_EQ(count(ch, NodeKind::kPcieSwitch), 8);
  EXPECT_EQ(count(ca, NodeKind::kNic), 8);
  EXPECT_EQ(count(ca, NodeKind::kNvSwitch), 6);
  EXPECT_EQ(count(ch, NodeKind::kNvSwitch), 4);
}

TEST(Builders, Nvl72RackIsOneDomainOf72GpusAcross18Vms) {
  TestSize t = testing::Gb300();
  Cluster c = Build(t.Spec(18));
  EXPECT_EQ(c.num_gpus(), 72);
  EXPECT_EQ(c.nvlink_domain_gpus(), 72);
  std::set<int> domains, vms;
  for (int r = 0; r < c.num_gpus(); ++r) {
    domains.insert(c.gpu(r).domain);
    vms.insert(c.gpu(r).vm);
  }
  EXPECT_EQ(domains.size(), 1u);
  EXPECT_EQ(vms.size(), 18u);
  // 18 chips x 50 GB/s = 900 GB/s per GPU per direction; one link to each chip.
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(c, 71), 900 * kGB);
  int chips = 0;
  for (auto [kind, n] : NodeCounts(c)) chips += kind == NodeKind::kNvSwitch ? n : 0;
  EXPECT_EQ(chips, 18);
}

TEST(Builders, Nvl72VmsBeyond18FormAPartialRack) {
  TestSize t = testing::Gb300();
  Cluster c = Build(t.Spec(20));
  EXPECT_EQ(c.gpu(18 * 4 - 1).domain, 0);
  EXPECT_EQ(c.gpu(18 * 4).domain, 1);  // VM 18 opens rack 1
  int chips = 0;
  for (auto [kind, n] : NodeCounts(c)) chips += kind == NodeKind::kNvSwitch ? n : 0;
  EXPECT_EQ(chips, 36);
  // Two GPUs of the partial rack still talk over NVLink.
  Route r = c.GpuRoute(72, 79);
  ASSERT_EQ(r.size(), 18u);
  EXPECT_EQ(c.link(r[0].links[0]).kind, LinkKind::kNvlink);
}

TEST(Builders, NonBlockingFatTreeBisectionIsHalfOfAllRails) {
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(64);  // 2 leaf groups of 32 VMs, 16 leaves, 2 tiers
  Cluster c = Build(spec);
  // 512 GPUs, each with its own 25 GB/s rail NIC: 512 x 25 GB/s / 2.
  EXPECT_DOUBLE_EQ(BisectionBps(c), 512 * 25 * kGB / 2);
  EXPECT_EQ(c.fabric_layout().leaves, 16);
  EXPECT_EQ(c.fabric_layout().rails, 8);
  EXPECT_DOUBLE_EQ(GpuScaleoutBps(c, 7), 25 * kGB);
}

TEST(Builders, ThreeTierNonBlockingBisectionIsHalfOfAllRails) {
  TestSize t = testing::H100v5();
  ClusterSpec spec = t.Spec(300);
  spec.fabric.tiers = 3;
  Cluster c = Build(spec);
  EXPECT_GT(c.fabric_layout().pods, 1);
  EXPECT_DOUBLE_EQ(BisectionBps(c), 2400 * 50 * kGB / 2);
}

double LeafUplinkBps(const Cluster& c) {
  double sum = 0;
  NodeId leaf = -1;
  for (const Node& n : c.nodes()) {
    if (n.kind == NodeKind::kLeaf) {
      leaf = n.id;
      break;
    }
  }
  for (LinkId l : c.out_links(leaf)) {
    if (c.node(c.link(l).dst).kind == NodeKind::kSpine) sum += c.link(l).bw_Bps;
  }
  return sum;
}

TEST(Builders, OversubscriptionTwoHalvesLeafUplinkCapacity) {
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(64);
  Cluster full = Build(spec);
  spec.fabric.oversubscription = 2;
  Cluster half = Build(spec);
  // 32 NIC ports x 25 GB/s down; up = 800 GB/s at 1:1, 400 GB/s at 2:1.
  EXPECT_DOUBLE_EQ(LeafUplinkBps(full), 32 * 25 * kGB);
  EXPECT_DOUBLE_EQ(LeafUplinkBps(half), 32 * 25 * kGB / 2);
  EXPECT_DOUBLE_EQ(BisectionBps(half), BisectionBps(full) / 2);
}

TEST(Builders, NonRailOptimizedPutsAllNicsOfAVmOnOneLeaf) {
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(8);
  spec.fabric.rail_optimized = false;
  Cluster c = Build(spec);
  // radix 64: 32 down ports per leaf = 4 VMs of 8 NICs; 8 VMs -> 2 leaves.
  EXPECT_EQ(c.fabric_layout().leaves, 2);
  EXPECT_EQ(c.fabric_layout().vms_per_leaf, 4);
  Route r = c.GpuRoute(0, 7 + 8);  // VM0 and VM1 share leaf0: NIC -> leaf -> NIC
  ASSERT_EQ(r.size(), 1u);
  int ib = 0;
  for (LinkId l : r[0].links) ib += c.link(l).kind == LinkKind::kIb ? 1 : 0;
  EXPECT_EQ(ib, 2);
}

TEST(Builders, PcieOnlySizeHasNoNvlinkAndNoFabric) {
  TestSize t = testing::Nd24s();
  Cluster c = Build(t.Spec(2));
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(c, 0), 0);
  EXPECT_DOUBLE_EQ(GpuScaleoutBps(c, 0), 0);
  EXPECT_EQ(c.nvlink_domain_gpus(), 1);
  Route r = c.GpuRoute(0, 3);  // GPU0 on CPU0, GPU3 on CPU1: PCIe, socket link, PCIe
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].links.size(), 3u);
  EXPECT_EQ(c.link(r[0].links[1]).kind, LinkKind::kCpuCpu);
  EXPECT_TRUE(c.NetRoute(0, 4).empty());
}

TEST(Builders, GpusPerVmUsesTheFirstGpusAndTheirNics) {
  TestSize t = testing::H100v5();
  ClusterSpec spec = t.Spec(2);
  spec.gpus_per_vm = 2;
  Cluster c = Build(spec);
  EXPECT_EQ(c.num_gpus(), 4);
  EXPECT_EQ(c.fabric_layout().nics, 4);
  EXPECT_EQ(c.gpu(3).vm, 1);
  EXPECT_EQ(c.gpu(3).local, 1);
}

TEST(Builders, SixteenThousandA100GpusBuildWithThreeTiers) {
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(2048);
  EXPECT_EQ(ChooseTiers(spec), 3);
  spec.fabric.tiers = 3;
  Cluster c = Build(spec);
  EXPECT_EQ(c.num_gpus(), 16384);
  // 64 leaf groups x 8 rails; 4 groups per pod -> 16 pods x 32 spines.
  EXPECT_EQ(c.fabric_layout().leaves, 512);
  EXPECT_EQ(c.fabric_layout().pods, 16);
  EXPECT_EQ(c.fabric_layout().spines, 512);
  EXPECT_DOUBLE_EQ(BisectionBps(c), 16384 * 25 * kGB / 2);
}

TEST(Builders, ResolveFabricRaisesADefaultRadixOnlyWhereItCannotWire) {
  // Radix 64, rail-optimized, 8 NICs per VM: 32 VMs per leaf group, 32 leaves per pod = 4
  // groups of 8 rails (128 VMs), at most 64 pods: 8,192 VMs in 3 tiers. 16,384 VMs need radix
  // 128 (64 VMs per group, 8 groups per pod = 512 VMs, up to 128 pods = 65,536 VMs).
  TestSize t = testing::H100v5();
  ClusterSpec fits = t.Spec(8192);
  fits.fabric.tiers = 0;
  fits.fabric.default_radix = true;
  EXPECT_EQ(ResolveFabric(&fits), "");
  EXPECT_EQ(fits.fabric.tiers, 3);
  EXPECT_EQ(fits.fabric.switch_radix, 64);
  ClusterSpec big = t.Spec(16384);
  big.fabric.tiers = 0;
  big.fabric.default_radix = true;
  EXPECT_EQ(ResolveFabric(&big),
            "radix 64 cannot wire 16384 VMs in 3 tiers; assumed radix 128 (--radix)");
  EXPECT_EQ(big.fabric.tiers, 3);
  EXPECT_EQ(big.fabric.switch_radix, 128);
  // A radix the user gave is kept (BuildCluster then says why it cannot wire).
  ClusterSpec asked = t.Spec(16384);
  asked.fabric.tiers = 0;
  asked.fabric.default_radix = false;
  EXPECT_EQ(ResolveFabric(&asked), "");
  EXPECT_EQ(asked.fabric.switch_radix, 64);
  EXPECT_FALSE(BuildCluster(asked, Params()).ok());
}

TEST(Validate, ErrorsNameTheFlagAndTheFix) {
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(0);
  Status s = ValidateClusterSpec(spec);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.message(), "--vms must be at least 1 (got 0)");
  spec.vms = 2;
  spec.gpus_per_vm = 9;
  EXPECT_NE(ValidateClusterSpec(spec).message().find("--gpus-per-vm"), std::string::npos);
  spec.gpus_per_vm = 0;
  spec.fabric.tiers = 4;
  EXPECT_NE(ValidateClusterSpec(spec).message().find("--tiers must be 2 or 3"), std::string::npos);
  spec.fabric.tiers = 2;
  spec.fabric.oversubscription = 0.5;
  EXPECT_NE(ValidateClusterSpec(spec).message().find("--oversubscription"), std::string::npos);
  spec.fabric.oversubscription = 1;
  spec.fabric.switch_radix = 2;
  EXPECT_NE(ValidateClusterSpec(spec).message().find("--radix"), std::string::npos);
}

TEST(Validate, FabricWhatIfsHaveSaneBounds) {
  // Oversubscription 1..64 (a leaf whose uplinks carry 1/64 of its NIC ports or less is no GPU
  // fabric, and 1e300 made the flow model crawl); radix 4..1024 (radix 1e9 tried to allocate
  // a billion uplinks).
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(2);
  for (double os : {0.0, 0.99, 64.5, 1e300}) {
    spec.fabric.oversubscription = os;
    Status s = ValidateClusterSpec(spec);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << os;
    EXPECT_NE(s.message().find("--oversubscription must be 1 (non-blocking) to 64"),
              std::string::npos)
        << s.message();
  }
  spec.fabric.oversubscription = 64;
  EXPECT_TRUE(ValidateClusterSpec(spec).ok());
  spec.fabric.oversubscription = 1;
  for (int radix : {3, 1025, 1000000000}) {
    spec.fabric.switch_radix = radix;
    EXPECT_NE(ValidateClusterSpec(spec).message().find("--radix must be 4 to 1024"),
              std::string::npos)
        << radix;
  }
  spec.fabric.switch_radix = 1024;
  EXPECT_TRUE(ValidateClusterSpec(spec).ok());
}

TEST(Validate, TwoTiersTooSmallForTheVmsSaysUseThreeTiers) {
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(2048);  // 512 leaves > 64 spine ports
  Status s = ValidateClusterSpec(spec);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("--tiers 3"), std::string::npos) << s.message();
}

TEST(FabricParams, RejectsAPairListedTwice) {
  const char* yaml =
      "latency:\n"
      "  nvlink_link: 1 us\n  pcie_link: 1 us\n  c2c_link: 1 us\n  cpu_cpu_link: 1 us\n"
      "  nic_link: 1 us\n  switch_link: 1 us\n"
      "cube_mesh:\n  source: x\n  gpus: 2\n  pairs:\n"
      "    - {a: 0, b: 1, lanes: 1}\n    - {a: 1, b: 0, lanes: 1}\n";
  StatusOr<FabricParams> p = ParseFabricParams(yaml, "t.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("listed twice"), std::string::npos);
}

}  // namespace
}  // namespace ndt
