// File: serve/comm.h
// Communication a serving replica needs, priced on the cluster graph: the TP all-reduce of each
// layer (over the replica's first TP GPUs), the activation send between pipeline stages, and
// the KV-cache transfer from a prefill replica to a decode replica (disaggregation), and
// attention-DP's MoE dispatch and combine (grouped NCCL broadcasts and reduces). Times come
// from coll/TimeCollective (NCCL's algorithms and protocols, NVLS where the size has it); if it
// reports an error, a ring over the cluster's routes stands in. Memoized by (op, group, bytes).
// Bytes in, seconds out.
#ifndef NDTWIN_SERVE_COMM_H_
#define NDTWIN_SERVE_COMM_H_

#include <memory>

#include "coll/nccl_model.h"
#include "core/status.h"
#include "serve/service.h"
#include "topo/cluster.h"

namespace ndt {

// REQUIRES: `cluster` and `nccl` outlive the returned functions. The TP group is GPUs
// 0..tp-1; the stage sends and the KV transfer go between the GPUs their callers name
// (serve/disaggregate.h StageFirstGpu, ReplicaFirstGpu).
CommFns MakeCommFns(const Cluster& cluster, const NcclCalibrationSet& nccl);

}  // namespace ndt

#endif  // NDTWIN_SERVE_COMM_H_
