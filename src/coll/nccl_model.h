// File: coll/nccl_model.h
// NCCL's cost model (v2.30.4 src/graph/tuning.cc, search.cc, topo.h; reference/topology.md §8)
// applied to a group of GPUs on a Cluster: what NCCL's topology search would find (channels,
// per-channel bandwidth intra and inter, path types) and, per (algorithm, protocol), the bus
// and algorithm bandwidth (GB/s) and latency (us) of the tuner. Plus the constants fitted on the
// calibration sweep (data/calibration/nccl.yaml). Pure functions; no I/O.
#ifndef NDTWIN_COLL_NCCL_MODEL_H_
#define NDTWIN_COLL_NCCL_MODEL_H_

#include <span>
#include <string>

#include "coll/collective.h"
#include "topo/cluster.h"

namespace ndt {

// Constants fitted on /work/shared/validation/calibration/nccl_allreduce_ndm_a100_v4_1vm.csv.
// Values and the fitting procedure are recorded in data/calibration/nccl.yaml; a test checks the
// file and these defaults agree.
struct NcclCalibration {
  // Achieved / NCCL-model bandwidth: 231.58 GB/s measured busbw at 8 GiB over the 240 GB/s of
  // NCCL's ring model for 12 channels x 20 GB/s (0.965).
  double bw_efficiency = 0.965;
  // Per-call overhead outside NCCL's latency model (launch, nccl-tests timing): median over
  // 1 KiB..64 KiB of measured time minus the model LL ring latency, rounded (30 us).
  double call_overhead_s = 30e-6;
};

enum class PathType { kNvl, kPci, kNet };

// What NCCL's topology search sees for a group (topology.md §8.1-§8.2).
struct NcclTopo {
  int n = 0;          // ranks
  int nodes = 0;      // NVLink domains spanned (NCCL "nodes"; an MNNVL clique counts as one)
  int ppn = 0;        // ranks per node (max over nodes)
  int arch = 0;       // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell (minimum compute capability)
  int sm = 0;
  PathType intra = PathType::kNvl;
  bool nvswitch = false;  // ranks of a node meet at NVSwitches (NVLS/CollNetDirect need it)
  bool nvls = false;      // NVSwitch multicast (NVLink SHARP): Hopper+ NVSwitch
  double total_intra_GBps = 0;  // per-GPU NVLink (or PCIe) bandwidth in NCCL's units
  int ring_channels = 0;        // after duplication
  double bw_intra_GBps = 0;     // per channel
  double bw_inter_GBps = 0;     // per channel (0 on one node)
  int nvls_channels = 0;
  bool amd_cpu = false;
};

StatusOr<NcclTopo> AnalyzeGroup(const Cluster& cluster, std::span<const int> group);

struct AlgoEstimate {
  bool ok = false;        // false: not available (why says so)
  std::string why;
  double algbw_GBps = 0;  // NCCL's algorithm bandwidth A
  double latency_us = 0;  // NCCL's L (x numPipeOps = 1)
  int channels = 0;
};

// NCCL tuner entry for (op, algo, proto); all_reduce, all_gather, reduce_scatter, broadcast,
// reduce only. `collnet` is NCCL_COLLNET_ENABLE.
AlgoEstimate EstimateNccl(const NcclTopo& t, CollOp op, Algo algo, Proto proto, double bytes,
                          bool collnet);

}  // namespace ndt

#endif  // NDTWIN_COLL_NCCL_MODEL_H_
