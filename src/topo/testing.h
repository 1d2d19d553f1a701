// File: topo/testing.h
// Test-only helpers for tests of any module that need a cluster built with the repo's own
// data/fabric.yaml (the library itself never reads it implicitly: see cmd/context.h).
#ifndef NDTWIN_TOPO_TESTING_H_
#define NDTWIN_TOPO_TESTING_H_

#include "core/check.h"
#include "topo/builders.h"
#include "topo/fabric_params.h"

namespace ndt::testing {

// The fabric parameters of the repo's data/ (NDT_DATA_DIR).
inline const FabricParams& BuiltinFabricParams() {
  static const FabricParams params = [] {
    StatusOr<FabricParams> p = LoadFabricParams(NDT_DATA_DIR);
    NDT_CHECK(p.ok(), "data/fabric.yaml: " + p.status().message());
    return *p;
  }();
  return params;
}

inline StatusOr<Cluster> BuildClusterForTest(const ClusterSpec& spec) {
  return BuildCluster(spec, BuiltinFabricParams());
}

}  // namespace ndt::testing

#endif  // NDTWIN_TOPO_TESTING_H_
