// File: coll/testing.h
// Test-only: the NCCL calibration of the repo's data/calibration/nccl.yaml (NDT_DATA_DIR), and
// TimeCollective with it filled in, for tests and benchmarks below cmd/ (which loads the same
// through cmd/context.h).
#ifndef NDTWIN_COLL_TESTING_H_
#define NDTWIN_COLL_TESTING_H_

#include "coll/collective.h"
#include "coll/nccl_model.h"
#include "core/check.h"

namespace ndt::testing {

inline const NcclCalibrationSet& BuiltinNcclCalibration() {
  static const NcclCalibrationSet set = [] {
    StatusOr<NcclCalibrationSet> s = LoadNcclCalibration(NDT_DATA_DIR);
    NDT_CHECK(s.ok(), s.status().message());
    return *s;
  }();
  return set;
}

// TimeCollective with the built-in calibration when `options` names none.
inline StatusOr<CollResult> TimeCollectiveCal(const Cluster& cluster, CollOp op, double bytes,
                                              std::span<const int> group,
                                              CollOptions options = {}) {
  if (options.calibration == nullptr) options.calibration = &BuiltinNcclCalibration();
  return TimeCollective(cluster, op, bytes, group, options);
}

}  // namespace ndt::testing

#endif  // NDTWIN_COLL_TESTING_H_
