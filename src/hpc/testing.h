// File: hpc/testing.h
// Test-only fixtures shared by the hpc tests: the data directory loaded once, and a cluster of
// N VMs of a size. Include from *_test.cc only.
#ifndef NDTWIN_HPC_TESTING_H_
#define NDTWIN_HPC_TESTING_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "hpc/params.h"
#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/fabric_params.h"

namespace ndt::hpc_testing {

struct Data {
  Catalog cat;
  FabricParams fabric;
  ComputeCalibration compute;
  NcclCalibrationSet nccl;
  HpcParams params;
};

inline const Data& D() {
  static const Data d = [] {
    Data x;
    x.cat = *Catalog::Load(NDT_DATA_DIR);
    x.fabric = *LoadFabricParams(NDT_DATA_DIR);
    x.compute = *LoadComputeCalibration(NDT_DATA_DIR);
    x.nccl = *LoadNcclCalibration(NDT_DATA_DIR);
    x.params = *LoadHpcParams(NDT_DATA_DIR);
    return x;
  }();
  return d;
}

// N VMs of `sku_name` (a failed build fails the test and returns what BuildCluster gave).
inline Cluster Make(const std::string& sku_name, int vms) {
  const SkuSpec* sku = *D().cat.FindSku(sku_name);
  ClusterSpec spec;
  spec.sku = sku;
  spec.gpu = &D().cat.GpuOf(*sku);
  spec.vms = vms;
  StatusOr<Cluster> c = BuildCluster(spec, D().fabric);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *std::move(c);
}

}  // namespace ndt::hpc_testing

#endif  // NDTWIN_HPC_TESTING_H_
