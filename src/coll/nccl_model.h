// File: coll/nccl_model.h
// NCCL's cost model (v2.30.4 src/graph/tuning.cc, search.cc, topo.h; reference/topology.md §8)
// applied to a group of GPUs on a Cluster: what NCCL's topology search would find (channels,
// per-channel bandwidth intra and inter, path types) and, per (algorithm, protocol), the bus
// and algorithm bandwidth (GB/s) and latency (us) of the tuner. Plus the constants fitted on the
// calibration sweep (data/calibration/nccl.yaml, read by LoadNcclCalibration; the rest is pure).
#ifndef NDTWIN_COLL_NCCL_MODEL_H_
#define NDTWIN_COLL_NCCL_MODEL_H_

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "coll/collective.h"
#include "core/status.h"
#include "topo/cluster.h"

namespace ndt {

// NCCL's own cost-model tables (data/nccl.yaml, read by LoadNcclTuning; nothing here is fitted).
// Indices: arch 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell; nodes 1, 2, >= 3; protocol LL, LL128,
// Simple; algorithm in the order of kTuningAlgos. Empty until loaded: the model checks.
struct NcclTuning {
  bool loaded = false;
  std::vector<std::pair<int, double>> nvlink_GBps_per_link;  // (sm, GB/s), sm ascending
  double pcie_x16_GBps[3] = {};                              // gen3, gen4, gen5
  std::vector<double> intra_speeds[3];                       // pre-Hopper, Hopper, Blackwell
  std::vector<double> inter_speeds[3];
  double dup_min_GBps = 0, dup_skip_below_GBps = 0;
  int dup_skip_above_sm = 0, dup_skip_above_channels = 0;
  int nvls_channels_sm90 = 0, nvls_channels_sm100_single = 0, nvls_channels_sm100_multi = 0;
  int ctas_per_channel = 0;  // thread blocks (SMs) a collective's kernel runs per channel
  double ll_max_bw[4][3] = {};
  double ring_ll_divisor_old_ar = 0, ring_ll_divisor_old_other = 0, ring_ll_divisor_new = 0;
  // Ring LL128 bus factor (0.92), and 0.7 under 2 ranks per node before kNcclLL128PpnDiscountUntil.
  double ring_ll128_factor = 0, ring_ll128_factor_low_ppn_old = 0;
  double per_ch_max_ring_ll128[4][3] = {};
  double per_ch_max_tree_ll128[4][3] = {};
  double per_ch_max_tree[4][3] = {};
  double per_ch_max_nvls_tree[4][3] = {};
  double nvls_efficiency[4] = {};
  double base_latency_us[7][3] = {};   // [algorithm][protocol]
  double hw_latency_us[3][7][3] = {};  // [NVLink, PCI, NET][algorithm][protocol]
  double net_overhead_intel_us = 0, net_overhead_amd_us = 0, net_overhead_simple_x = 0;
  double plateau_pre_ampere = 0, plateau_ampere_plus = 0;
  double simple_buffer_bytes = 0;
  int nccl_steps = 0, simple_chunk_steps = 0, simple_channel_duplication = 0;
  double tree_correction[3][23] = {};  // by log2(bytes / 64), 64 B .. 256 MiB; 1 beyond
  // Multi-node NVLink (data/nccl.yaml mnnvl; NcclUsesNvlinkAcrossVms): the first release with
  // it (one clique per communicator, no NVLS), and the first with any clique and NVLS over it.
  int mnnvl_since = 0, mnnvl_full_since = 0;
  // The first release that runs a GPU, by compute capability (data/nccl.yaml gpu_support_since):
  // (sm, release), sm ascending; FirstNcclReleaseFor reads it.
  std::vector<std::pair<int, int>> gpu_support_since;
};

// The first NCCL release that runs a GPU of compute capability `sm` (sm_version: 100 for GB200,
// 103 for GB300): the entry of the largest sm at or below it in k.gpu_support_since, 0 where
// none applies (every release in ndtwin's range runs it).
int FirstNcclReleaseFor(const NcclTuning& k, int sm);
// Ok when NCCL `version` runs `gpu`; else kInvalidInput naming the first release that does
// (FirstNcclReleaseFor) and the flag to pass.
Status CheckNcclRunsGpu(const NcclTuning& k, const GpuSpec& gpu, int version);

// The algorithms of NcclTuning's latency tables, in order (data/nccl.yaml's keys).
inline constexpr Algo kTuningAlgos[7] = {Algo::kRing,     Algo::kTree,          Algo::kNvls,
                                         Algo::kNvlsTree, Algo::kCollNetDirect, Algo::kCollNetChain,
                                         Algo::kPat};

// Loads data_dir/nccl.yaml strictly (every table, its shape; unknown keys are errors).
StatusOr<NcclTuning> LoadNcclTuning(const std::string& data_dir);
// The same from YAML text; `name` stands in for the file in errors.
StatusOr<NcclTuning> ParseNcclTuning(const std::string& text, const std::string& name);

// The constants fitted on the calibration sweeps (validation/calibration/), as one group of
// GPUs uses them. The defaults are NCCL's own model with nothing fitted; the fitted values and
// how they were fitted live only in data/calibration/nccl.yaml (LoadNcclCalibration).
struct NcclCalibration {
  // Achieved / NCCL-model bandwidth of every algorithm.
  double bw_efficiency = 1.0;
  // Host time of one call per GPU the calling thread drives (one enqueue + kernel launch).
  // nccl-tests (src/common.cu BenchTime) issues its iterations back to back and divides the wall
  // time by their count, so a call costs max(gpus_per_thread x this, device time).
  double call_overhead_per_gpu_s = 0;
  // Device-side gap between back-to-back kernels, added to the device time.
  double kernel_gap_s = 0;
  // Ring/Simple: synchronisation cost of one ring step (flag wait, fence, post over both slices
  // of a chunk), paid by each of the steps of every loop (see RingSimpleLoops). This one is a
  // step whose hop stays inside an NVLink domain (or a node's PCIe); `simple_net_step_sync_s` is
  // a step whose hop crosses the network between nodes (coll/collective.cc LoopSync counts them
  // as NCCL's latency model does: 2(nodes-1) in an all_reduce, nodes-1 in an all_gather).
  double simple_step_sync_s = 0;
  double simple_net_step_sync_s = 0;
  // Achieved / NCCL-model bandwidth of Ring and Tree across nodes whose ring channels the
  // NVLink caps (NcclTopo::ring_nvlink_bound): the SM-driven copy over the NVLink sets the pace
  // there, so its efficiency; elsewhere bw_efficiency.
  double nvlink_bound_bw_efficiency = 1.0;
  // LL128 and Ring LL achieved / NCCL-model bandwidth.
  double ll128_bw_ratio = 1.0;
  double ll_bw_ratio = 1.0;
  // NVLS efficiency of the achieved bandwidth inside one NVLink domain, in place of NCCL's
  // nvlsEfficiency (0: NCCL's own, 0.85 Hopper, 0.74 Blackwell).
  double nvls_efficiency = 0;
  // Per-loop step of the NVLS kernel inside one NVLink domain (NvlsPipelineUs; 0: NCCL's own
  // NVLink Simple step, 3.4 us).
  double nvls_loop_step_s = 0;
};

// data/calibration/nccl.yaml: the A100 fit (the base every group starts from) and the
// per-architecture and per-host values fitted on Azure's H100/H200/GB200 sweeps.
struct NcclCalibrationSet {
  NcclCalibration base;
  // NCCL's own tables (data/nccl.yaml): LoadNcclCalibration reads both files.
  NcclTuning tuning;
  // Blackwell NVLink 5 inside one NVLink domain (GB200 sweep, Ring forced, NCCL 2.25.1).
  double blackwell_bw_efficiency = 1.0;
  double blackwell_ll_bw_ratio = 1.0;
  double blackwell_ll128_bw_ratio = 1.0;
  double blackwell_simple_step_sync_s = 0;
  // Hopper NVLS all_reduce inside one NVLink domain (H100 and H200 sweeps, NVLS forced).
  double hopper_nvls_efficiency = 0;
  double hopper_nvls_loop_step_s = 0;
  // Host cost per GPU a thread drives on a Grace host (GB200 sweep, -g 4).
  double grace_call_overhead_per_gpu_s = 0;
};

// Loads data_dir/calibration/nccl.yaml strictly (every value with its unit, fitted_on and how)
// and data_dir/nccl.yaml (the tuning).
StatusOr<NcclCalibrationSet> LoadNcclCalibration(const std::string& data_dir);
// The fitted values from YAML text (the tuning is left empty); `name` stands in for the file.
StatusOr<NcclCalibrationSet> ParseNcclCalibration(const std::string& text, const std::string& name);

// The calibration for a group on a host CPU (SkuSpec::cpu): the A100 fit, with Blackwell's
// NVLink 5 constants for a Blackwell group inside one NVLink domain (where they were fitted;
// across domains the NICs set the pace), Blackwell's NVLink 5 ring step for the steps of a
// Blackwell group whose hop stays in an NVLink domain (also across racks: a multi-rack ring's
// hops are NVLink 5 but for the few between racks, which keep the A100 fit, the only step
// measured), Hopper's NVLS efficiency for a Hopper group, and
// Grace's launch cost on a Grace host. Other hosts (Xeon 8480C) keep the A100 host's EPYC value:
// their sweeps ran forced NVLS, whose small sizes are device-bound, so they do not show it.
struct NcclTopo;
NcclCalibration CalibrationFor(const NcclCalibrationSet& set, const NcclTopo& t,
                               const std::string& host_cpu);

// Achieved / NCCL-model bandwidth of SM-driven copies (Ring, Tree, p2p kernels) over `group`
// (global GPU ranks) as TimeCollective prices them: CalibrationFor's bw_efficiency for what
// NCCL's search finds there (Blackwell's NVLink 5 fit inside one NVLink domain, the A100 fit
// elsewhere). The one place that chooses it, for coll/ and for callers that price their own
// SM-driven NVLink kernels (serve/comm.cc: TensorRT-LLM's custom all-reduce). The base
// efficiency where the group cannot be analysed (fewer than 2 ranks, or no network between its
// VMs). REQUIRES: set.tuning.loaded.
double SmCopyEfficiency(const Cluster& cluster, std::span<const int> group,
                        const NcclCalibrationSet& set);

enum class PathType { kNvl, kPci, kNet };

// What NCCL's topology search sees for a group (topology.md §8.1-§8.2).
struct NcclTopo {
  int n = 0;      // ranks
  int nodes = 0;  // NVLink domains spanned (NCCL "nodes"; an MNNVL clique counts as one)
  int ppn = 0;    // ranks per node (max over nodes)
  int arch = 0;   // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell (minimum compute capability)
  int sm = 0;
  PathType intra = PathType::kNvl;
  bool nvswitch = false;  // ranks of a node meet at NVSwitches (NVLS/CollNetDirect need it)
  // NVSwitch multicast (NVLink SHARP): Hopper+ NVSwitch and more than 2 GPUs of the group per
  // node (NCCL's ncclNvlsInit returns without NVLS when the node's topology has <= 2 GPUs).
  bool nvls = false;
  double total_intra_GBps = 0;  // per-GPU NVLink (or PCIe) bandwidth in NCCL's units
  int ring_channels = 0;        // after duplication
  double bw_intra_GBps = 0;     // per channel
  double bw_inter_GBps = 0;     // per channel (0 on one node)
  // Scale-out NICs of the node with the fewest and what NCCL's search expects one to carry
  // (the first of its inter-node speeds at or below the port rate: 48 GB/s for 400 Gb/s NDR,
  // 24 for 200 Gb/s HDR, 96 for 800 Gb/s XDR). 0 on one node.
  int nics_per_node = 0;
  double nic_GBps = 0;
  int nvls_channels = 0;  // CTAs the NVLS kernel runs on (nvls.cc: 16 SM90, 24/32 SM100)
  // NCCL's NVLS graph inside one NVLink domain (search.cc NCCL_TOPO_PATTERN_NVLS): one graph
  // channel per head GPU, at most NCCL_MAX_NVLS_ARITY = 32 (maxChannels = min(32, GPUs)), all
  // required (minChannels = maxChannels on one node); each head's search path takes its speed
  // twice on its own NVLink and once on every other GPU's, so the speed is the first of the
  // intra search speeds s with (heads + 1) x s <= the GPU's NVLink total. 8 H100: 8 heads at
  // 40 GB/s; an NVL72 rack: 32 heads at 20 GB/s. 0 without NVLS.
  int nvls_heads = 0;
  double nvls_graph_GBps = 0;
  // Across nodes: the GPU's NVLink, not its node's NICs, caps the ring channels (the NICs
  // would take more channels at the searched speed than the NVLink carries through the node:
  // NVL72 racks, 72 NICs each). The ring then runs at NVLink's pace, as inside one domain.
  bool ring_nvlink_bound = false;
  bool amd_cpu = false;
  int nccl_version = kPinnedNcclVersion;  // major*10000 + minor*100 + patch (tuner revision)
  const NcclTuning* tuning = nullptr;     // NCCL's tables the group was analysed with
  // NCCL runs the group's one NVLink domain of an NVL72 rack as multi-node NVLink without NVLS
  // (2.20: data/nccl.yaml mnnvl), so NVLS and NVLSTree are unavailable. Set by TimeCollective
  // (MnnvlWithoutNvls); false where AnalyzeGroup alone built the topology.
  bool mnnvl_without_nvls = false;
};

// Whether NCCL `version` (tables `k`: data/nccl.yaml mnnvl) reaches the GPUs of `group` that
// share an NVLink domain but not a VM (an NVL72 rack's VMs) over that NVLink, i.e. uses
// multi-node NVLink (MNNVL). Before k.mnnvl_since never; before k.mnnvl_full_since only when
// the whole group lies in one NVLink domain (one clique); from it always. Where it does not,
// NCCL sees every VM as its own node and their GPUs talk over the network: price that on a
// cluster built with ClusterSpec::nvlink_across_vms = false (TimeCollective refuses the
// rack's cluster then). True where no NVLink domain of the group spans VMs (nothing to decide).
bool NcclUsesNvlinkAcrossVms(const Cluster& cluster, std::span<const int> group,
                             const NcclTuning& k, int version);

// Whether NCCL `version` runs `t`'s group on `cluster` as multi-node NVLink without NVLS: an
// NVL72 size's group in one NVLink domain (one clique, even one VM's GPUs: NCCL reads the
// clique from the GPUs' fabric info) under a 2.20 release (k.mnnvl_since <= version <
// k.mnnvl_full_since). REQUIRES: t.tuning.
bool MnnvlWithoutNvls(const Cluster& cluster, const NcclTopo& t, int version);

// NCCL releases before this one price Ring LL at 1/4 of the ring bus bandwidth for all_reduce,
// reduce and multi-node (1/3 otherwise); later ones at 1/2 (src/graph/tuning.cc: 1/4 in
// v2.20.5, 0.5 in v2.21.5; see data/nccl.yaml ring_ll_bus_divisor).
inline constexpr int kNcclRingLLHalfSince = 22100;
// NCCL releases before this one price Ring LL128 at 0.7 (not 0.92) of the ring bus bandwidth
// when ranks / nodes < 2, one GPU sending and receiving through its NIC (src/graph/tuning.cc:
// in v2.22.3, gone in v2.23.4; data/nccl.yaml ring_ll128_bus_factor).
inline constexpr int kNcclLL128PpnDiscountUntil = 22300;
// From this release NCCL's latency model (src/graph/tuning.cc) (1) prices a network step at the
// Tree's network latency when ppn == 1 ("With ppn=1 latencies are fully exposed"), and (2)
// counts 2(nodes - 1) network steps in a multi-node ring all_reduce; v2.12-v2.22 price every
// network step at the algorithm's own network latency and count 2 x nodes network steps (and
// nsteps - 2 x nodes intra steps, negative on one GPU per node, as NCCL writes it).
inline constexpr int kNcclLatencyModel223Since = 22300;
// First releases with an algorithm (NVIDIA NCCL release notes): NVLS (NVLink SHARP) inside a
// node in 2.17.1; NVLS across nodes (with IB SHARP) and NVLSTree in 2.18.1; PAT in 2.23.4.
// EstimateNccl reports an algorithm as unavailable under an older t.nccl_version.
inline constexpr int kNcclNvlsSince = 21700;
inline constexpr int kNcclNvlsTreeSince = 21800;
inline constexpr int kNcclPatSince = 22300;
// NCCL releases before this one run the NVLS kernel on NVLS_NCHANNELS_SM100 = 32 CTAs on every
// Blackwell communicator (src/transport/nvls.cc ncclNvlsInit, v2.25.1 .. v2.26.6: `channels =
// compCap >= 100 ? NVLS_NCHANNELS_SM100 : NVLS_NCHANNELS_SM90`); from v2.27.3 one NVLink domain
// (one node, or an MNNVL clique holding the whole communicator) runs NVLS_NCHANNELS_SM100_NVL =
// 24 ("Use a reduced number of channels for single node/MNNVL domain on Blackwell") and several
// domains keep 32. data/nccl.yaml nvls_channels holds the later rule.
inline constexpr int kNcclNvlsSm100DomainCtasSince = 22700;
// CTAs NCCL `version` runs the NVLS kernel on for t's group: t.nvls_channels (the pinned
// release's rule, AnalyzeGroup), or 32 on one Blackwell NVLink domain before
// kNcclNvlsSm100DomainCtasSince. Sets the NVLS kernel's loop (NvlsLoops).
int NvlsChannelsFor(const NcclTopo& t, int version);

// What NCCL's search finds for `group`, with NCCL's tables `tuning` (kept by pointer in the
// result: it must outlive it). REQUIRES: tuning.loaded.
StatusOr<NcclTopo> AnalyzeGroup(const Cluster& cluster, std::span<const int> group,
                                const NcclTuning& tuning);

struct AlgoEstimate {
  bool ok = false;  // false: not available (WhyUnavailable says why)
  // Why not available: a fixed sentence, or, when needs_nccl > 0, the feature that needs that
  // NCCL release (encoded as kPinnedNcclVersion). A pointer to a literal, not a string: the
  // tuner estimates every (algorithm, protocol) of every collective call, most unavailable.
  const char* why = "";
  int needs_nccl = 0;
  double algbw_GBps = 0;  // NCCL's algorithm bandwidth A
  double latency_us = 0;  // NCCL's L (x numPipeOps = 1)
  int channels = 0;
};

// NCCL tuner entry for (op, algo, proto); all_reduce, all_gather, reduce_scatter, broadcast,
// reduce only. `collnet` is NCCL_COLLNET_ENABLE.
AlgoEstimate EstimateNccl(const NcclTopo& t, CollOp op, Algo algo, Proto proto, double bytes,
                          bool collnet);

// The message of an unavailable estimate (e.ok false) of a group running `nccl_version`.
std::string WhyUnavailable(const AlgoEstimate& e, int nccl_version);

// The algorithm bandwidth a choice achieves where the physics differs from the tuner's model
// (otherwise e.algbw_GBps). Three bounds:
// 1. NVLS all_reduce inside one NVLink domain: each of the h = min(n, 32) heads reduces a 1/h
//    slice with multimem.ld_reduce (the switches pull that slice from all n ranks) and
//    multicasts the result with multimem.st, so S + S/h leave and S/h + S arrive per head:
//    A <= per-rank NVLink bandwidth x NVLS efficiency x h / (h + 1). And no more than NCCL's
//    own NVLS model of its graph (EstimateNccl: heads x graph speed x efficiency x (h-1)/h x 2
//    as bus bandwidth): 8 H100s 476 GB/s bus bandwidth at NCCL's 0.85 (the bound: 490); an
//    NVL72 rack, whose 32 heads search at 20 GB/s (33 x 20 <= 721.8), 918 (the bound: 1,021).
//    With few ranks these fall below the ring's, and forced-NVLS runs on 2-4 H100s report the
//    ring's 365-370 GB/s bus bandwidth (NVIDIA/nccl #1455), so the achieved bandwidth is the
//    larger of the two.
// 2. NVLS+Tree: inside each node the same multimem reduce and multicast (S + S/ppn each way per
//    rank), so no more than bound 1 with n = ppn.
// 3. Across nodes, the bytes each node's NICs must carry per direction, as a multiple of the
//    buffer S: ring all_reduce 2(n-1)/n (every ring enters and leaves each node once), the
//    double binary tree (Tree, NVLS+Tree) 2 beyond 2 nodes (a node is inner in one tree,
//    receiving two children's halves and its parent's, sending as many, and a leaf in the
//    other) and 1 on 2 nodes, CollNet and multi-node NVLS 1 (one send up, one result down),
//    ring all_gather/reduce_scatter (n-1)/n, PAT (N-1)/N, broadcast/reduce 1. So
//    A <= NICs x NIC rate / that multiple. NCCL's tuner prices NVLS+Tree from the per-channel
//    NVLink rate alone, 590 GB/s of bus bandwidth on H100 nodes at any node count, beyond what
//    8 NICs of 400 Gb/s can carry; NCCL's maintainers quote 370-380 GB/s for multi-node H100
//    all_reduce with NVLS+Tree and without SHARP (NVIDIA/nccl #1649, GTC 2024), and a user
//    measured 430 on 2 nodes and 320 beyond (8x 400G RoCE, NVIDIA/nccl #1221).
// Never above the tuner's estimate, except for bound 1's ring floor, and where `nvls_eff` > 0
// (NcclCalibration::nvls_efficiency, fitted for Hopper) replaces NCCL's nvlsEfficiency in
// bound 1 and in the NVLS graph model.
double AchievedAlgbwGBps(const NcclTopo& t, CollOp op, Algo algo, const AlgoEstimate& e,
                         double nvls_eff = 0);

// Loops of NCCL's Simple ring kernel for a buffer of `bytes` (nccl-tests size). NCCL's device
// constants (src/device/all_reduce.h, common.h, via data/nccl.yaml simple_ring): a 4 MiB Simple
// buffer in NCCL_STEPS = 8 steps; a chunk is ALLREDUCE_CHUNKSTEPS = 4 steps (2 MiB); connect.cc
// duplicates the searched ring channels once more, so a collective runs on 2 x ring_channels
// channels (DGX/ND A100: 24). Each loop moves
// 2 x ring_channels x n chunks of chunk_steps x buffer/nccl_steps bytes and runs every
// ring step once; the last loop may be partial. 0 for 0 bytes.
// REQUIRES: t.ring_channels > 0, t.n > 0.
int RingSimpleLoops(const NcclTopo& t, double bytes);

// The NVLS kernel's loop inside one NVLink domain. NCCL (src/enqueue.cc, NVLS chunk size)
// starts from nvlsChunkSize = 128 KiB (NCCL_NVLS_CHUNKSIZE) and, with concurrentOps = NVLS
// channels x heads (a head per rank of the domain), takes 64 KiB below 64 x concurrentOps x
// 128 KiB, then 32 KiB below 8 x concurrentOps x 64 KiB, then 16 KiB below 2 x concurrentOps x
// 32 KiB; the kernel (src/device/all_reduce.h, NVLS) walks the buffer in loops of
// concurrentOps x chunk bytes, each channel taking heads x chunk of a loop. On 8 H100s
// (16 channels): 128 KiB from 1 GiB up, 64 KiB from 64 MiB, 32 KiB from 8 MiB, 16 KiB below.
// Heads are t.nvls_heads (at most 32: on an NVL72 rack 40 of the 72 ranks reduce nothing).
struct NvlsLoop {
  double chunk_bytes = 0;
  double loop_bytes = 0;
  int loops = 0;  // ceil(bytes / loop_bytes); 0 for 0 bytes
};
inline constexpr double kNvlsMaxChunkBytes = 128.0 * 1024;
inline constexpr int kNvlsMaxArity = 32;  // NCCL_MAX_NVLS_ARITY (src/include/device.h)
// REQUIRES: t.nvls_channels > 0, t.n > 0.
NvlsLoop NvlsLoops(const NcclTopo& t, double bytes);

// Whether the NVLS kernel's pipeline (NvlsPipelineUs) prices the device time: NVLS all_reduce
// inside one NVLink domain.
bool NvlsPipelined(const NcclTopo& t, CollOp op, Algo algo);

// Device time (us) of the NVLS all_reduce kernel inside one NVLink domain (NvlsPipelined), in
// place of NCCL's tuner latency and bandwidth terms; 0 where it does not apply or for 0 bytes.
// The kernel runs three roles per channel as a pipeline over the loops of NvlsLoops: scatter
// warps copy the rank's buffer into the multicast-bound buffer, reduce warps multimem.ld_reduce a
// head's slice and multimem.st the sum to every rank, gather warps copy the result out
// (src/device/all_reduce.h, NVLS). Each stage moves one loop at a time at the achieved rate
// `algbw_GBps` (AchievedAlgbwGBps) and every loop waits once on its peers' flags, `step_s`
// (0: NCCL's own per-step latency of a Simple step over NVLink, hwLat[NVLINK][RING][SIMPLE] =
// 3.4 us; Hopper's is fitted, NcclCalibration::nvls_loop_step_s). A three-stage pipeline over
// L loops runs L + 2 stage-times: the first loop's scatter and the last loop's gather overlap
// nothing. So: bytes / A + loops x step + 2 x (min(bytes, loop) / A + step). NCCL's tuner
// latency for NVLS (0 us in 2.18, 23 in 2.20, 25 in 2.30) is a selection constant, not a
// measurement; the pipeline's fill stands in for it. Azure's H100/H200 sweeps show the
// structure (VALIDATION.md): per-loop slopes of 13.3, 20.0, 33.8 and 61.1 us at 16, 32, 64 and
// 128 KiB chunks (loops of 2, 4, 8 and 16 MiB) fit loop / 308 GB/s + 6.5 us, and the fixed cost
// grows with the loop as two stage-times do.
double NvlsPipelineUs(const NcclTopo& t, CollOp op, Algo algo, double bytes, double algbw_GBps,
                      double step_s);

}  // namespace ndt

#endif  // NDTWIN_COLL_NCCL_MODEL_H_
