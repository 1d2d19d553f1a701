// Builds every VM size of the shipped catalog (data/) and checks the invariants the catalog's
// numbers must produce (topology.md §1): NVLink per GPU, domain sizes, per-GPU scale-out.
#include <gtest/gtest.h>

#include <memory>

#include "core/units.h"
#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/summary.h"
#include "topo/testing.h"

namespace ndt {
namespace {

class CatalogCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<Catalog> c = Catalog::Load(NDT_DATA_DIR);
    ASSERT_TRUE(c.ok()) << c.status().message();
    catalog_ = std::make_unique<Catalog>(std::move(c).value());
  }
  Cluster Build(const char* sku, int vms) {
    StatusOr<const SkuSpec*> s = catalog_->FindSku(sku);
    EXPECT_TRUE(s.ok()) << s.status().message();
    ClusterSpec spec;
    spec.sku = *s;
    spec.gpu = &catalog_->GpuOf(**s);
    spec.vms = vms;
    StatusOr<Cluster> c = testing::BuildClusterForTest(spec);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return std::move(c).value();
  }
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(CatalogCluster, EverySizeBuildsAndRoutesBetweenTwoVms) {
  for (const SkuSpec& s : catalog_->skus()) {
    ClusterSpec spec;
    spec.sku = &s;
    spec.gpu = &catalog_->GpuOf(s);
    spec.vms = 2;
    StatusOr<Cluster> c = testing::BuildClusterForTest(spec);
    ASSERT_TRUE(c.ok()) << s.name << ": " << c.status().message();
    if (c->gpus_per_vm() > 1) {
      EXPECT_FALSE(c->GpuRoute(0, 1).empty()) << s.name;
    }
    // Across VMs only over InfiniBand; sizes without it have no route.
    EXPECT_EQ(c->GpuRoute(0, c->num_gpus() - 1).empty(), c->fabric_layout().nics == 0) << s.name;
  }
}

TEST_F(CatalogCluster, PerGpuNvlinkMatchesTopologySummaryTable) {
  // topology.md §1: 150 (NDv2), 300 (A100 v4), 450 (H100/H200 v5), 900 (GB200/GB300) GB/s.
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(Build("ND40rs_v2", 1)), 150 * kGB);
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(Build("ND96asr_v4", 1)), 300 * kGB);
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(Build("ND96amsr_A100_v4", 1)), 300 * kGB);
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(Build("ND96isr_H100_v5", 1)), 450 * kGB);
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(Build("ND96isr_H200_v5", 1)), 450 * kGB);
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(Build("ND128isr_NDR_GB200_v6", 18)), 900 * kGB);
  EXPECT_DOUBLE_EQ(GpuNvlinkBps(Build("ND128isr_GB300_v6", 18)), 900 * kGB);
}

TEST_F(CatalogCluster, ScaleOutPerGpuIsTheNicRateOverItsSharers) {
  // NDv2: one 100 Gb/s EDR port for 8 GPUs; H100 v5: 400 Gb/s NDR per GPU.
  EXPECT_DOUBLE_EQ(GpuScaleoutBps(Build("ND40rs_v2", 2)), 100 * kGbit / 8);
  EXPECT_DOUBLE_EQ(GpuScaleoutBps(Build("ND96isr_H100_v5", 2)), 400 * kGbit);
}

TEST_F(CatalogCluster, Gb200RackIs72GpusOver18Vms) {
  Cluster c = Build("ND128isr_NDR_GB200_v6", 18);
  EXPECT_EQ(c.num_gpus(), 72);
  EXPECT_EQ(c.nvlink_domain_gpus(), 72);
  EXPECT_EQ(c.gpu(0).domain, c.gpu(71).domain);
}

}  // namespace
}  // namespace ndt
