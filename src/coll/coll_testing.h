// File: coll/coll_testing.h
// Test helpers shared by the collectives tests: clusters built from the catalog, all ranks.
#ifndef NDTWIN_COLL_COLL_TESTING_H_
#define NDTWIN_COLL_COLL_TESTING_H_

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {

struct Env {
  Catalog cat;
  Env() : cat(*Catalog::Load(NDT_DATA_DIR)) {}
  // nvlink_across_vms false: each VM its own NVLink domain (ClusterSpec::nvlink_across_vms).
  Cluster Build(const std::string& sku, int vms, FabricSpec fab = {}, const GpuSpec* gpu = nullptr,
                bool nvlink_across_vms = true) {
    ClusterSpec s;
    s.nvlink_across_vms = nvlink_across_vms;
    s.sku = *cat.FindSku(sku);
    s.gpu = gpu ? gpu : &cat.GpuOf(*s.sku);
    s.vms = vms;
    s.fabric = fab;
    s.fabric.tiers = ChooseTiers(s);
    StatusOr<Cluster> c = testing::BuildClusterForTest(s);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return *c;
  }
};

inline std::vector<int> All(const Cluster& c) {
  std::vector<int> g(c.num_gpus());
  std::iota(g.begin(), g.end(), 0);
  return g;
}

}  // namespace ndt

#endif  // NDTWIN_COLL_COLL_TESTING_H_
