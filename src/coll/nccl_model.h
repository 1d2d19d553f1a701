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
  // Achieved / NCCL-model bandwidth. 1.0: the shortfall at 8 GiB (231.58 of 240 GB/s) is the
  // per-loop step synchronisation below, not a bandwidth loss.
  double bw_efficiency = 1.0;
  // Per-call overhead outside NCCL's latency model (launch, nccl-tests timing): median over
  // 1 KiB..64 KiB of measured time minus the model LL ring latency, rounded (30 us).
  double call_overhead_s = 30e-6;
  // Ring/Simple: synchronisation cost of one ring step (flag wait, fence, post over both slices
  // of a chunk), paid by each of the steps of every loop (see RingSimpleLoops). 8 us.
  double simple_step_sync_s = 8e-6;
  // LL128 achieved / NCCL-model bandwidth (0.72).
  double ll128_bw_ratio = 0.72;
};

// NCCL device-code constants of the Simple ring (src/device/all_reduce.h, common.h, via
// data/nccl.yaml): 4 MiB Simple buffer in NCCL_STEPS = 8 steps; a chunk is
// ALLREDUCE_CHUNKSTEPS = 4 steps (2 MiB); connect.cc duplicates the searched ring channels once
// more, so a collective runs on 2 x ring_channels channels (DGX/ND A100: 24).
inline constexpr double kSimpleBufferBytes = 4.0 * 1024 * 1024;
inline constexpr int kNcclSteps = 8;
inline constexpr int kSimpleChunkSteps = 4;

enum class PathType { kNvl, kPci, kNet };

// What NCCL's topology search sees for a group (topology.md §8.1-§8.2).
struct NcclTopo {
  int n = 0;      // ranks
  int nodes = 0;  // NVLink domains spanned (NCCL "nodes"; an MNNVL clique counts as one)
  int ppn = 0;    // ranks per node (max over nodes)
  int arch = 0;   // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell (minimum compute capability)
  int sm = 0;
  PathType intra = PathType::kNvl;
  bool nvswitch = false;        // ranks of a node meet at NVSwitches (NVLS/CollNetDirect need it)
  bool nvls = false;            // NVSwitch multicast (NVLink SHARP): Hopper+ NVSwitch
  double total_intra_GBps = 0;  // per-GPU NVLink (or PCIe) bandwidth in NCCL's units
  int ring_channels = 0;        // after duplication
  double bw_intra_GBps = 0;     // per channel
  double bw_inter_GBps = 0;     // per channel (0 on one node)
  int nvls_channels = 0;
  bool amd_cpu = false;
};

StatusOr<NcclTopo> AnalyzeGroup(const Cluster& cluster, std::span<const int> group);

struct AlgoEstimate {
  bool ok = false;  // false: not available (why says so)
  std::string why;
  double algbw_GBps = 0;  // NCCL's algorithm bandwidth A
  double latency_us = 0;  // NCCL's L (x numPipeOps = 1)
  int channels = 0;
};

// NCCL tuner entry for (op, algo, proto); all_reduce, all_gather, reduce_scatter, broadcast,
// reduce only. `collnet` is NCCL_COLLNET_ENABLE.
AlgoEstimate EstimateNccl(const NcclTopo& t, CollOp op, Algo algo, Proto proto, double bytes,
                          bool collnet);

// Loops of NCCL's Simple ring kernel for a buffer of `bytes` (nccl-tests size): each loop moves
// 2 x ring_channels x n chunks of kSimpleChunkSteps x buffer/kNcclSteps bytes and runs every
// ring step once; the last loop may be partial. 0 for 0 bytes.
// REQUIRES: t.ring_channels > 0, t.n > 0.
int RingSimpleLoops(const NcclTopo& t, double bytes);

}  // namespace ndt

#endif  // NDTWIN_COLL_NCCL_MODEL_H_
