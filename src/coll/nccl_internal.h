// File: coll/nccl_internal.h
// Helpers shared by the NCCL search (nccl_search.cc) and tuner (nccl_model.cc) sources; not part
// of the coll module's interface.
#ifndef NDTWIN_COLL_NCCL_INTERNAL_H_
#define NDTWIN_COLL_NCCL_INTERNAL_H_

#include "coll/nccl_model.h"
#include "core/check.h"

namespace ndt {
namespace nccl_internal {

inline const NcclTuning& Tables(const NcclTopo& t) {
  NDT_CHECK(t.tuning != nullptr && t.tuning->loaded, "NcclTopo without NCCL's tables");
  return *t.tuning;
}

// Index of an algorithm in NcclTuning's latency tables (kTuningAlgos order).
inline int AIdx(Algo a) {
  switch (a) {
    case Algo::kRing:
      return 0;
    case Algo::kTree:
      return 1;
    case Algo::kNvls:
      return 2;
    case Algo::kNvlsTree:
      return 3;
    case Algo::kCollNetDirect:
      return 4;
    case Algo::kCollNetChain:
      return 5;
    default:
      return 6;
  }
}

}  // namespace nccl_internal
}  // namespace ndt

#endif  // NDTWIN_COLL_NCCL_INTERNAL_H_
