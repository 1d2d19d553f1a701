// Tests of Cluster::GpuRoute / NetRoute: NCCL's preference order, the GPU's own rail NIC, the
// NDv2 socket crossing, fractions and contiguity (every link starts where the previous ended).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "topo/builders.h"
#include "topo/summary.h"
#include "topo/test_specs.h"
#include "topo/testing.h"

namespace ndt {
namespace {

using testing::TestSize;

Cluster Build(const ClusterSpec& spec) {
  StatusOr<FabricParams> p = LoadFabricParams(NDT_DATA_DIR);
  EXPECT_TRUE(p.ok());
  StatusOr<Cluster> c = BuildCluster(spec, *p);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return std::move(c).value();
}

// Checks that every path runs from GPU a to GPU b link after link, and fractions sum to 1.
void ExpectWellFormed(const Cluster& c, const Route& r, int a, int b) {
  ASSERT_FALSE(r.empty());
  double sum = 0;
  for (const Path& p : r) {
    ASSERT_FALSE(p.links.empty());
    EXPECT_EQ(c.link(p.links.front()).src, c.gpu(a).node);
    EXPECT_EQ(c.link(p.links.back()).dst, c.gpu(b).node);
    for (size_t i = 0; i + 1 < p.links.size(); ++i) {
      EXPECT_EQ(c.link(p.links[i]).dst, c.link(p.links[i + 1]).src)
          << "hop " << i << " of " << a << "->" << b;
    }
    sum += p.fraction;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
}

void ExpectAllRoutesWellFormed(const Cluster& c, int stride) {
  for (int a = 0; a < c.num_gpus(); a += stride) {
    for (int b = 0; b < c.num_gpus(); ++b) {
      if (a == b) continue;
      ExpectWellFormed(c, c.GpuRoute(a, b), a, b);
      ExpectWellFormed(c, c.NetRoute(a, b), a, b);
    }
  }
}

TEST(Route, NvswitchRouteHasOnePathPerSwitchWithLaneFractions) {
  TestSize t = testing::H100v5();
  Cluster c = Build(t.Spec(1));
  Route r = c.GpuRoute(0, 6);
  ASSERT_EQ(r.size(), 4u);
  // 18 lanes split 5/4/4/5.
  EXPECT_DOUBLE_EQ(r[0].fraction, 5.0 / 18);
  EXPECT_DOUBLE_EQ(r[1].fraction, 4.0 / 18);
  double sum = 0;
  for (const Path& p : r) {
    sum += p.fraction;
    ASSERT_EQ(p.links.size(), 2u);
    EXPECT_EQ(c.node(c.link(p.links[0]).dst).kind, NodeKind::kNvSwitch);
  }
  EXPECT_DOUBLE_EQ(sum, 1.0);
}

TEST(Route, InterVmRouteLeavesThroughTheGpusOwnRailNic) {
  TestSize t = testing::A100v4();
  Cluster c = Build(t.Spec(4));
  for (int local = 0; local < 8; ++local) {
    int a = local;          // VM0
    int b = 8 * 3 + local;  // VM3, same rail
    Route r = c.GpuRoute(a, b);
    ASSERT_EQ(r.size(), 1u);
    const Path& p = r[0];
    // GPU -> PCIe switch -> NIC (GPUDirect RDMA), and that NIC is the GPU's rail.
    ASSERT_GE(p.links.size(), 4u);
    EXPECT_EQ(c.node(c.link(p.links[0]).dst).kind, NodeKind::kPcieSwitch);
    EXPECT_EQ(c.link(p.links[1]).dst, c.gpu(a).nic);
    EXPECT_EQ(c.gpu(a).rail, local);
    EXPECT_EQ(c.node(c.gpu(a).nic).index, local);
    EXPECT_EQ(c.link(p.links[p.links.size() - 2]).src, c.gpu(b).nic);
    // Same rail and leaf group: NIC -> leaf -> NIC, no spine.
    EXPECT_EQ(p.links.size(), 6u);
  }
}

TEST(Route, Ndv2InterVmRouteCrossesTheSocketLinkOnlyForGpus4To7) {
  TestSize t = testing::Ndv2();
  Cluster c = Build(t.Spec(2));
  auto crosses = [&](int a, int b) {
    Route r = c.GpuRoute(a, b);
    int n = 0;
    for (LinkId l : r.at(0).links) n += c.link(l).kind == LinkKind::kCpuCpu ? 1 : 0;
    return n;
  };
  for (int g = 0; g < 4; ++g) EXPECT_EQ(crosses(g, 8 + g), 0) << g;
  for (int g = 4; g < 8; ++g) EXPECT_EQ(crosses(g, 8 + g), 2) << g;  // out of VM0, into VM1
  // Staged through the host: GPU -> CPU, never GPU -> NIC directly.
  EXPECT_EQ(c.node(c.link(c.GpuRoute(1, 9)[0].links[0]).dst).kind, NodeKind::kCpu);
}

TEST(Route, PerGpuNicWithoutGpuDirectIsStagedThroughTheHost) {
  TestSize t = testing::A100v4();
  t.sku.infiniband->gpudirect_rdma = false;
  Cluster c = Build(t.Spec(2));
  Route r = c.GpuRoute(0, 8);
  ASSERT_EQ(r.size(), 1u);
  // GPU -> PCIe switch -> CPU -> PCIe switch -> NIC.
  EXPECT_EQ(c.node(c.link(r[0].links[1]).dst).kind, NodeKind::kCpu);
  EXPECT_EQ(c.link(r[0].links[3]).dst, c.gpu(0).nic);
  ExpectWellFormed(c, r, 0, 8);
}

TEST(Route, Ndv2UnconnectedPairGoesThroughThePcieHost) {
  TestSize t = testing::Ndv2();
  Cluster c = Build(t.Spec(1));
  Route r = c.GpuRoute(0, 5);  // '.' in the §2.2 matrix; 0 on socket 0, 5 on socket 1
  ASSERT_EQ(r.size(), 1u);
  ASSERT_EQ(r[0].links.size(), 3u);
  EXPECT_EQ(c.link(r[0].links[0]).kind, LinkKind::kPcie);
  EXPECT_EQ(c.link(r[0].links[1]).kind, LinkKind::kCpuCpu);
  EXPECT_EQ(c.link(r[0].links[2]).kind, LinkKind::kPcie);
}

TEST(Route, Nvl72InterRackRouteUsesC2cGraceAndNic) {
  TestSize t = testing::Gb300();
  Cluster c = Build(t.Spec(36));
  Route r = c.GpuRoute(1, 72 + 1);  // rack 0 to rack 1
  ASSERT_EQ(r.size(), 1u);
  const Path& p = r[0];
  EXPECT_EQ(c.link(p.links[0]).kind, LinkKind::kC2c);
  EXPECT_EQ(c.node(c.link(p.links[0]).dst).kind, NodeKind::kCpu);
  EXPECT_EQ(c.link(p.links[1]).dst, c.gpu(1).nic);
  ExpectWellFormed(c, r, 1, 73);
}

TEST(Route, EcmpSpreadSplitsEquallyOverAllUplinks) {
  TestSize t = testing::A100v4();
  ClusterSpec spec = t.Spec(64);
  spec.fabric.ecmp_spread = true;
  Cluster c = Build(spec);
  Route r = c.NetRoute(0, 8 * 40 + 3);  // other leaf group, other rail
  ASSERT_EQ(r.size(), static_cast<size_t>(c.fabric_layout().leaf_up_ports));
  for (const Path& p : r) EXPECT_DOUBLE_EQ(p.fraction, 1.0 / r.size());
  ExpectWellFormed(c, r, 0, 8 * 40 + 3);
}

// The uplink of a cross-leaf flow is a fixed function of the GPU pair, splitmix64((a << 32) | b)
// modulo the leaf's uplinks (route.cc), the same in every build and process (no address, no
// std::hash, no state). The hashes, computed offline (splitmix64 in Python, 64-bit wraparound):
//   (5, 300) 0x91ff364c40bbe7ed, (300, 5) 0x5b681a5751b88a04,
//   (0, 320) 0x02da1170236b0050, (7, 511) 0x7d9ed4651d6fb495.
// With ecmp_spread the route lists every uplink in order, so the hashed route must be the spread
// route's entry h % uplinks (one pod here: one core choice).
TEST(Route, HashedUplinkIsAFixedFunctionOfThePair) {
  TestSize t = testing::A100v4();
  Cluster hashed = Build(t.Spec(64));
  ClusterSpec spread_spec = t.Spec(64);
  spread_spec.fabric.ecmp_spread = true;
  Cluster spread = Build(spread_spec);
  const uint64_t uplinks = hashed.fabric_layout().leaf_up_ports;
  struct Pair {
    int a, b;
    uint64_t hash;
  };
  const Pair pairs[] = {{5, 300, 0x91ff364c40bbe7edULL},
                        {300, 5, 0x5b681a5751b88a04ULL},
                        {0, 320, 0x02da1170236b0050ULL},
                        {7, 511, 0x7d9ed4651d6fb495ULL}};
  for (const Pair& p : pairs) {
    const Route r = hashed.NetRoute(p.a, p.b);
    const Route all = spread.NetRoute(p.a, p.b);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(all.size(), uplinks) << p.a << "->" << p.b;
    EXPECT_EQ(r[0].links, all[p.hash % uplinks].links) << p.a << "->" << p.b;
  }
}

// The IB part of a path's latency: its InfiniBand links' latencies summed.
double IbLatency(const Cluster& c, const Path& p) {
  double s = 0;
  for (LinkId l : p.links) {
    if (c.link(l).kind == LinkKind::kIb) s += c.link(l).latency_s;
  }
  return s;
}

// A packet between two VMs crosses the HCAs at both ends (nic_link 1 us each in data/fabric.yaml)
// and every switch on its way once (switch_link 0.13 us each): NIC -> leaf -> NIC is 1 switch,
// leaf -> spine -> leaf 3, leaf -> spine -> core -> spine -> leaf 5. So the IB links of a route
// sum to 2 + 0.13 k us: 2.13, 2.39, 2.65. (Before, the links counted one switch too few: 2.0,
// 2.26, 2.52.) The whole README route, 2 x ND A100 v4 GPU 0 -> GPU 8: 4 PCIe links of 0.3 us
// (GPU -> PCIe switch -> NIC at each end) + 2.13 = 3.33 us.
TEST(Route, LatencyCountsEverySwitchThePacketCrosses) {
  const FabricParams& fp = testing::BuiltinFabricParams();
  ASSERT_DOUBLE_EQ(fp.nic_latency_s, 1e-6);
  ASSERT_DOUBLE_EQ(fp.switch_latency_s, 0.13e-6);
  ASSERT_DOUBLE_EQ(fp.pcie_latency_s, 0.3e-6);
  {
    TestSize t = testing::A100v4();
    Cluster c = Build(t.Spec(2));  // one leaf group: rail 0's leaf joins GPU 0 and GPU 8
    const Route r = c.GpuRoute(0, 8);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NEAR(IbLatency(c, r[0]), 2.13e-6, 1e-12);
    EXPECT_NEAR(PathLatency(c, r[0]), 3.33e-6, 1e-12);
  }
  {
    TestSize t = testing::A100v4();
    ClusterSpec s = t.Spec(3);
    s.fabric.vms_per_leaf = 2;  // VM 2 sits on the second leaf group: leaf -> spine -> leaf
    Cluster c = Build(s);
    const Route r = c.NetRoute(0, 16);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NEAR(IbLatency(c, r[0]), 2.39e-6, 1e-12);
  }
  {
    TestSize t = testing::H100v5();
    ClusterSpec s = t.Spec(12);
    s.fabric.tiers = 3;
    s.fabric.switch_radix = 16;  // non-rail: 1 VM per leaf, 8 leaves per pod: VM 11 in pod 1
    s.fabric.vms_per_leaf = 1;
    s.fabric.rail_optimized = false;
    Cluster c = Build(s);
    const Route r = c.NetRoute(0, 8 * 11);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_NEAR(IbLatency(c, r[0]), 2.65e-6, 1e-12);
  }
}

TEST(Route, EveryRouteIsContiguousForEveryFamily) {
  {
    TestSize t = testing::Ndv2();
    ExpectAllRoutesWellFormed(Build(t.Spec(3)), 1);
  }
  {
    TestSize t = testing::A100v4();
    ClusterSpec s = t.Spec(6);
    s.fabric.vms_per_leaf = 2;
    ExpectAllRoutesWellFormed(Build(s), 3);
  }
  {
    TestSize t = testing::H100v5();
    ClusterSpec s = t.Spec(12);
    s.fabric.tiers = 3;
    s.fabric.switch_radix = 16;  // non-rail: 1 VM (8 NICs) per leaf, 8 leaves per pod: 2 pods
    s.fabric.vms_per_leaf = 1;
    s.fabric.ecmp_spread = true;
    s.fabric.rail_optimized = false;
    ExpectAllRoutesWellFormed(Build(s), 7);
  }
  {
    TestSize t = testing::Gb300();
    ExpectAllRoutesWellFormed(Build(t.Spec(20)), 5);
  }
  {
    TestSize t = testing::Nd24s();
    Cluster c = Build(t.Spec(1));
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b) {
        if (a != b) ExpectWellFormed(c, c.GpuRoute(a, b), a, b);
      }
    }
  }
}

TEST(Summary, FormatRoutePrintsEachHop) {
  TestSize t = testing::H100v5();
  Cluster c = Build(t.Spec(1));
  std::string s = FormatRoute(c, c.GpuRoute(0, 1));
  EXPECT_NE(s.find("vm0/gpu0 -> vm0/nvsw0  nvlink  125 GB/s (5 lanes)"), std::string::npos) << s;
}

}  // namespace
}  // namespace ndt

namespace ndt {
namespace {

TEST(Summary, DotHasOneNodePerNodeAndOneEdgePerDuplexLink) {
  TestSize t = testing::Ndv2();
  Cluster c = Build(t.Spec(2));
  std::ostringstream out;
  WriteDot(c, out);
  std::string dot = out.str();
  size_t edges = 0, nodes = 0;
  for (size_t p = dot.find(" -- "); p != std::string::npos; p = dot.find(" -- ", p + 1)) ++edges;
  for (size_t p = dot.find("shape="); p != std::string::npos; p = dot.find("shape=", p + 1))
    ++nodes;
  EXPECT_EQ(edges, static_cast<size_t>(DuplexLinks(c)));
  EXPECT_EQ(nodes, c.nodes().size());
  EXPECT_EQ(dot.rfind("graph cluster {", 0), 0u);
}

}  // namespace
}  // namespace ndt
