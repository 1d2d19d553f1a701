// File: coll/collective.h
// Public API of the collectives layer: the time of one NCCL collective (op, bytes, group of
// global GPU ranks) on a Cluster. Algorithms (Ring, Tree, NVLS, NVLSTree, CollNetDirect,
// CollNetChain, PAT) and protocols (LL, LL128, Simple) follow NCCL v2.30.4's tuner
// (src/graph/tuning.cc, summarised in reference/topology.md §8); the selection is the minimum
// predicted time among enabled (algo, proto) pairs, as NCCL's tuner does. Units: bytes, seconds,
// bytes per second. `bytes` is nccl-tests' "size": the per-rank buffer for all_reduce,
// broadcast, reduce and send_recv; the total output buffer (n x per-rank chunk) for
// all_gather; the total input buffer for reduce_scatter; the per-rank send buffer (all peers
// together) for all_to_all. busbw follows nccl-tests: algbw x 2(n-1)/n for all_reduce,
// x (n-1)/n for all_gather, reduce_scatter and all_to_all, x 1 for broadcast, reduce,
// send_recv.
#ifndef NDTWIN_COLL_COLLECTIVE_H_
#define NDTWIN_COLL_COLLECTIVE_H_

#include <optional>
#include <span>
#include <string>

#include "core/status.h"
#include "topo/cluster.h"

namespace ndt {

enum class CollOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv
};
enum class Algo { kRing, kTree, kNvls, kNvlsTree, kCollNetDirect, kCollNetChain, kPat, kP2p };
// kP2p: all_to_all and send_recv, which NCCL runs as point-to-point transfers (no tuner).
enum class Proto { kLL, kLL128, kSimple };
enum class Fidelity { kAnalytical, kFlow };

const char* CollOpName(CollOp op);  // "all_reduce", ...
// The prediction-interval workload of a collective of `bytes` (report/intervals.h): its size
// band, as the model's error differs by regime: "collectives-small" below 1 MiB (latency-bound),
// "collectives-medium" from 1 MiB to below 64 MiB, "collectives-large" from 64 MiB
// (bandwidth-bound).
const char* CollectivesWorkload(double bytes);
const char* AlgoName(Algo a);    // "Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect", ...
const char* ProtoName(Proto p);  // "LL", "LL128", "Simple"
// Accept nccl-tests / NCCL spellings, case-insensitive: "allreduce", "all_reduce", "ar", ...
Status ParseCollOp(const std::string& s, CollOp* out);
Status ParseAlgo(const std::string& s, Algo* out);
Status ParseProto(const std::string& s, Proto* out);

// The NCCL release whose tuner the model follows unless a caller names another (v2.30.4, what
// Azure images install; data/nccl.yaml). Encoded major*10000 + minor*100 + patch.
inline constexpr int kPinnedNcclVersion = 23004;
// The NCCL releases whose tuner the model can stand for: 2.12.0 to 2.30.x. Within the range the
// model follows v2.30.4 except where a release is known to differ (Ring LL pricing, and the
// algorithms a release has: NVLS from 2.17, NVLSTree and multi-node NVLS from 2.18, PAT from
// 2.23; see coll/nccl_model.h). Older tuners differ in more than that and newer ones are not
// known yet, so a version outside is refused rather than priced as if it were 2.30.
inline constexpr int kOldestNcclVersion = 21200;
inline constexpr int kNewestNcclVersion = 23099;

// "2.18.5" or "2.18" (patch 0) -> 21805. Errors (kInvalidInput): not MAJOR.MINOR[.PATCH] with
// numbers, or outside kOldestNcclVersion..kNewestNcclVersion; the message gives the range.
Status ParseNcclVersion(const std::string& s, int* out);
// 21805 -> "2.18.5".
std::string NcclVersionName(int version);

struct NcclCalibrationSet;  // coll/nccl_model.h: the fitted constants of data/calibration/nccl.yaml

struct CollOptions {
  // The fitted constants (cmd/context.h loads them from data/calibration/nccl.yaml). REQUIRED:
  // TimeCollective refuses to run without them rather than price with made-up defaults.
  const NcclCalibrationSet* calibration = nullptr;
  std::optional<Algo> algo;    // force (NCCL_ALGO); error if not available here
  std::optional<Proto> proto;  // force (NCCL_PROTO)
  Fidelity fidelity = Fidelity::kAnalytical;
  bool collnet = false;                   // NCCL_COLLNET_ENABLE=1 (IB SHARP), off by default
  int nccl_version = kPinnedNcclVersion;  // NCCL release whose tuner picks (algo, proto)
  // Whose clock a call runs on. false: nccl-tests' back-to-back loop, where nothing else is
  // queued, so a call costs max(host call cost, device time). true: a workload whose host runs
  // ahead of the GPU (an eager training loop between long kernels, a CUDA-graph serving engine),
  // so the host cost is hidden and a call costs its device time (kernel gap + latency + bytes/bw).
  bool host_hidden = false;
  // GPUs one host thread enqueues each call on (nccl-tests -g): its host cost is that many
  // enqueues and kernel launches. 1, the default: one process per GPU, as PyTorch, Megatron-LM,
  // TensorRT-LLM and `mpirun -np <GPUs> ..._perf -g 1` run. A single-process sweep over a whole
  // VM (Azure's AI-benchmarking-guide runs `all_reduce_perf -g <GPUs of the VM>`) passes the
  // VM's GPUs. Values below 1 count as 1.
  int gpus_per_thread = 1;
};

struct CollResult {
  double time_s = 0;
  double algbw_Bps = 0;
  double busbw_Bps = 0;
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
  int channels = 0;
};

// Work budget of the flow model's all_to_all: one max-min subflow per GPU pair, n(n-1) of them,
// each with its route held in memory (~300 bytes with the solver's state). 2^22 (2,048 GPUs)
// runs in tens of seconds and ~1.5 GB; 4,096 GPUs would be 16.7M subflows, past 6 GB.
inline constexpr int64_t kMaxFlowAllToAllPairs = int64_t{1} << 22;

// nccl-tests' bus-bandwidth factor for `op` over n ranks.
double BusBwFactor(CollOp op, int n);

// Time of one collective over `group` (global GPU ranks, distinct, in ring order; e.g. a TP
// group inside a VM or a DP group across VMs with a stride). send_recv takes exactly 2 ranks
// (group[0] sends to group[1]). Errors (kInvalidInput): fewer than 2 ranks, a rank out of range
// or repeated, bytes < 0, nccl_version outside kOldestNcclVersion..kNewestNcclVersion, a forced
// algorithm or protocol not available for this op/hardware/NCCL release, an all_to_all at flow
// fidelity over more than kMaxFlowAllToAllPairs GPU pairs (refused before any work).
StatusOr<CollResult> TimeCollective(const Cluster& cluster, CollOp op, double bytes,
                                    std::span<const int> group, const CollOptions& options = {});

}  // namespace ndt

#endif  // NDTWIN_COLL_COLLECTIVE_H_
