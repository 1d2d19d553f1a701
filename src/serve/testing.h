// File: serve/testing.h
// Test-only: the loaded data of the repo's data/ (NDT_DATA_DIR) as a ServeData, for tests and
// benchmarks below cmd/ (which loads the same through cmd/context.h).
#ifndef NDTWIN_SERVE_TESTING_H_
#define NDTWIN_SERVE_TESTING_H_

#include "core/check.h"
#include "serve/run.h"
#include "topo/testing.h"

namespace ndt::testing {

inline const ServeData& BuiltinServeData() {
  struct Owned {
    Catalog catalog;
    ComputeCalibration compute;
    EngineParams engine;
    NcclCalibrationSet nccl;
  };
  static const Owned owned = [] {
    StatusOr<Catalog> c = Catalog::Load(NDT_DATA_DIR);
    NDT_CHECK(c.ok(), c.status().message());
    StatusOr<ComputeCalibration> cal = LoadComputeCalibration(NDT_DATA_DIR);
    NDT_CHECK(cal.ok(), cal.status().message());
    StatusOr<EngineParams> e = LoadEngineParams(NDT_DATA_DIR);
    NDT_CHECK(e.ok(), e.status().message());
    StatusOr<NcclCalibrationSet> n = LoadNcclCalibration(NDT_DATA_DIR);
    NDT_CHECK(n.ok(), n.status().message());
    return Owned{*std::move(c), *std::move(cal), *std::move(e), *std::move(n)};
  }();
  static const ServeData data{&owned.catalog, &BuiltinFabricParams(),
                              &owned.compute, &owned.engine,
                              &owned.nccl,    NDT_DATA_DIR};
  return data;
}

}  // namespace ndt::testing

#endif  // NDTWIN_SERVE_TESTING_H_
