// File: coll/collective.cc
// TimeCollective: NCCL's tuner (coll/nccl_model.h) picks the (algorithm, protocol) of least time
// in NCCL's own model (latency + bytes / A), as NCCL does; the calibrated constants of
// NcclCalibration then price what that choice achieves. Device time = kernel gap + NCCL latency
// + bytes / (A x efficiency) + the Ring/Simple per-loop step synchronisation (LoopSync); NVLS
// all_reduce inside one NVLink domain is priced by its kernel's pipeline instead (NvlsPipelineUs:
// loops + 2 stage-times at the achieved rate, a step per loop); LL128
// runs at ll128_bw_ratio of NCCL's LL128 bandwidth. nccl-tests issues calls back to back, so a
// call costs max(host call overhead, device time). NCCL's model assumes a non-blocking fabric;
// each algorithm's own inter-node schedule (ring, double binary tree, PAT) is priced on the
// fabric as built and stretches the bandwidth term where it runs longer (Stretch): under kFlow
// on the max-min flow model (shared and oversubscribed links contend), under kAnalytical
// without contention but with uplinks that oversubscription thins below the NIC rate.
// all_to_all and send_recv are point-to-point: their bandwidth term is the schedule's own time
// on the network model.
#include "coll/collective.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "coll/nccl_internal.h"
#include "coll/nccl_model.h"
#include "coll/schedule.h"

namespace ndt {
namespace {

Status CheckGroup(const Cluster& c, CollOp op, double bytes, std::span<const int> group) {
  if (!(bytes >= 0)) return Status::InvalidInput("message size must be >= 0 bytes");
  if (group.size() < 2)
    return Status::InvalidInput(std::string(CollOpName(op)) +
                                " needs at least 2 GPUs; use more VMs or --gpus-per-vm > 1");
  if (op == CollOp::kSendRecv && group.size() != 2)
    return Status::InvalidInput(
        "send_recv times one transfer, so it takes exactly 2 GPUs "
        "(sender, receiver), not " +
        std::to_string(group.size()) + "; pass a group of 2 ranks");
  // Ranks seen so far as a bitmap, on the stack up to kStackRanks GPUs: this runs for every
  // collective call of a simulated step, where a std::set cost one allocation per rank.
  constexpr int kStackRanks = 8192;
  const size_t words = (static_cast<size_t>(c.num_gpus()) + 63) / 64;
  uint64_t stack_bits[kStackRanks / 64];
  std::vector<uint64_t> heap_bits;
  uint64_t* seen = stack_bits;
  if (c.num_gpus() > kStackRanks) {
    heap_bits.resize(words);
    seen = heap_bits.data();
  }
  std::fill_n(seen, words, uint64_t{0});
  for (int r : group) {
    if (r < 0 || r >= c.num_gpus())
      return Status::InvalidInput("GPU rank " + std::to_string(r) + " is outside 0.." +
                                  std::to_string(c.num_gpus() - 1));
    const uint64_t bit = uint64_t{1} << (r % 64);
    if (seen[r / 64] & bit)
      return Status::InvalidInput("GPU rank " + std::to_string(r) + " appears twice in the group");
    seen[r / 64] |= bit;
  }
  return Status::Ok();
}

// Achieved / NCCL-model bandwidth of a protocol: bw_efficiency, x ll128_bw_ratio for LL128 and
// x ll_bw_ratio for LL (1 but on Blackwell, CalibrationFor). NVLS inside one NVLink domain runs
// at its own efficiency (NCCL's nvlsEfficiency, or Hopper's fit): the switches' multimem engine
// sets its pace, not the SM-driven copies that bw_efficiency was fitted on.
// The LL128 ratio was fitted on one NVSwitch node, where LL128 runs at NVLink rates and the
// GPUs' flag-polling stores set its pace; between nodes the NICs (12x slower per channel) set
// it, and the fit says nothing about that regime, so NCCL's own LL128 model stands there.
// Across nodes, NVLS and NVLS+Tree run at their NVLS efficiency too (the switches reduce inside
// each domain), and Ring and Tree at the NVLink's SM-copy efficiency where the NVLink, not the
// NICs, caps their channels (NcclCalibration::nvlink_bound_bw_efficiency: an NVL72 rack's 72
// NICs carry 16 channels of 45.1 GB/s, the most its GPUs' NVLink passes on).
double ProtoRatio(Algo a, Proto p, const NcclCalibration& cal, const NcclTopo& t) {
  if (a == Algo::kNvls || a == Algo::kNvlsTree) return 1.0;  // NVLS efficiency (AchievedAlgbwGBps)
  if (t.nodes != 1)
    return a == Algo::kRing || a == Algo::kTree ? cal.nvlink_bound_bw_efficiency
                                                : cal.bw_efficiency;
  return cal.bw_efficiency * (p == Proto::kLL128 ? cal.ll128_bw_ratio
                              : p == Proto::kLL  ? cal.ll_bw_ratio
                                                 : 1.0);
}

// Ring/Simple step synchronisation that NCCL's tuner leaves out: the kernel walks the buffer in
// loops (RingSimpleLoops) and every loop runs all ring steps, each waiting on its peers' flags
// (all_reduce 2(n-1) steps, all_gather and reduce_scatter n-1). A chunk's path crosses the
// network between nodes on NCCL's count of inter-node steps (tuning.cc nInterSteps: 2(nodes-1)
// for all_reduce, nodes-1 otherwise) and stays on NVLink (or PCIe) for the rest, so each step
// pays the wait of the hop it crosses: loops x (intra steps x simple_step_sync_s + network steps
// x simple_net_step_sync_s). It does not depend on contention, so both fidelities add the same.
double LoopSync(const NcclTopo& t, CollOp op, Algo a, Proto p, double bytes,
                const NcclCalibration& cal) {
  if (a != Algo::kRing || p != Proto::kSimple) return 0.0;
  const double hops_between_nodes = t.nodes - 1.0;
  double steps = 0, net = 0;
  if (op == CollOp::kAllReduce) {
    steps = 2.0 * (t.n - 1);
    net = 2.0 * hops_between_nodes;
  }
  if (op == CollOp::kAllGather || op == CollOp::kReduceScatter) {
    steps = t.n - 1.0;
    net = hops_between_nodes;
  }
  return RingSimpleLoops(t, bytes) *
         ((steps - net) * cal.simple_step_sync_s + net * cal.simple_net_step_sync_s);
}

// Host time of one call in nccl-tests' loop: one enqueue and launch per GPU the thread drives
// (CollOptions::gpus_per_thread, 1 by default: one process per GPU); 0 when the workload's host
// runs ahead (host_hidden).
double HostCallS(const NcclCalibration& cal, const CollOptions& o) {
  if (o.host_hidden) return 0.0;
  return std::max(1, o.gpus_per_thread) * cal.call_overhead_per_gpu_s;
}

// Time of one call in nccl-tests' back-to-back loop (src/common.cu BenchTime: iterations are
// launched without waiting and the total is divided by their count): the host cost of a call
// (HostCallS) and the device time overlap, so the slower of the two sets the pace.
double CallTime(const NcclCalibration& cal, double host_s, double device_s) {
  return std::max(host_s, cal.kernel_gap_s + device_s);
}

// Switch-to-switch links slower than a NIC port: leaf uplinks (or spine-core links) thinned by
// --oversubscription below the port rate. Only then can a lone transfer run slower on the fabric
// as built than on a non-blocking one.
bool ThinFabric(const Cluster& c) {
  const FabricLayout& f = c.fabric_layout();
  const double nic = f.nic_Bps * (1 - 1e-9);
  return (f.spines > 0 && f.leaf_up_link_Bps < nic) || (f.cores > 0 && f.spine_up_link_Bps < nic);
}

// The time of algorithm a's inter-node schedule (Ring's ring, Tree's and NVLS+Tree's double
// binary tree, PAT's doubling exchanges) on the fabric as built and on a non-blocking one.
struct NetTimes {
  double built_s = 0;
  double nonblocking_s = 0;
};

// Fabric stretch of algorithm a's bandwidth term bw_s (>= 1). NCCL's model, and so bw_s, assumes
// a non-blocking fabric. The schedule is priced on the fabric as built (kFlow: replayed on the
// max-min flow model, so shared and oversubscribed links contend; kAnalytical: each transfer
// alone at its route's bottleneck, so uplinks thinner than a NIC count but sharing does not) and
// the stretch is how far that time exceeds both its non-blocking closed form and bw_s:
// max(1, built / max(nonblocking, bw_s)). A schedule that needs far less than bw_s (two NVL72
// racks: each GPU's NIC carries 1/72 of its data) absorbs contention up to that margin. NVLS
// stays inside one NVLink domain and CollNet reduces in the switches (no GPU-to-GPU schedule):
// 1. `cache` keeps one NetTimes per schedule kind.
double Stretch(const Cluster& c, CollOp op, Algo a, double bytes, double bw_s,
               std::span<const int> group, const NcclTopo& t, const CollOptions& o,
               std::map<int, NetTimes>* cache) {
  if (t.nodes == 1 || bytes <= 0) return 1.0;
  if (o.fidelity != Fidelity::kFlow && !ThinFabric(c)) return 1.0;
  const int kind = a == Algo::kRing                             ? 0
                   : (a == Algo::kTree || a == Algo::kNvlsTree) ? 1
                   : a == Algo::kPat                            ? 2
                                                                : -1;
  if (kind < 0) return 1.0;
  auto it = cache->find(kind);
  if (it == cache->end()) {
    const Schedule s = kind == 0   ? RingSchedule(c, op, bytes, group)
                       : kind == 1 ? TreeSchedule(c, op, bytes, group)
                                   : PatSchedule(c, op, bytes, group);
    NetTimes nt;
    nt.nonblocking_s = EvaluateClosedForm(c, s, FabricView::kNonBlocking);
    nt.built_s = o.fidelity == Fidelity::kFlow ? EvaluateOnNetwork(c, s, NetFidelity::kFlow)
                                               : EvaluateClosedForm(c, s, FabricView::kAsBuilt);
    it = cache->emplace(kind, nt).first;
  }
  const double base = std::max(it->second.nonblocking_s, bw_s);
  return base > 0 ? std::max(1.0, it->second.built_s / base) : 1.0;
}

StatusOr<CollResult> PointToPoint(const Cluster& c, CollOp op, double bytes,
                                  std::span<const int> group, const NcclTopo& t,
                                  const CollOptions& o, const NcclCalibration& cal, double host_s) {
  if (o.algo && *o.algo != Algo::kP2p)
    return Status::InvalidInput(std::string(CollOpName(op)) +
                                " runs point-to-point in NCCL, with no algorithm to choose; "
                                "drop --algo");
  // NCCL picks a p2p transfer's protocol itself, LL up to NCCL_P2P_LL_THRESHOLD per channel and
  // Simple above (enqueue.cc), whatever NCCL_PROTO says; ndtwin prices it with Simple.
  if (o.proto && *o.proto != Proto::kSimple)
    return Status::InvalidInput(std::string(CollOpName(op)) +
                                " runs point-to-point in NCCL, which picks LL or Simple by size "
                                "(NCCL_P2P_LL_THRESHOLD), not by NCCL_PROTO; drop --proto");
  const int64_t n = static_cast<int64_t>(group.size());
  if (op == CollOp::kAllToAll && o.fidelity == Fidelity::kFlow &&
      n * (n - 1) > kMaxFlowAllToAllPairs) {
    return Status::InvalidInput(
        "the flow model of an all_to_all over " + std::to_string(n) + " GPUs is " +
        std::to_string(n * (n - 1)) + " GPU-pair flows, more than the " +
        std::to_string(kMaxFlowAllToAllPairs) +
        " it holds in memory (2048 GPUs); use --fidelity analytical or fewer --vms");
  }
  Schedule s = op == CollOp::kAllToAll ? AllToAllSchedule(bytes, group)
                                       : Schedule{Step{{{group[0], group[1], bytes}}, 1}};
  NetFidelity f = o.fidelity == Fidelity::kFlow ? NetFidelity::kFlow : NetFidelity::kAnalytical;
  double net_s = EvaluateOnNetwork(c, s, f);
  // NCCL p2p latency: Simple ring base + one hop of the slowest path type used (§8.6), from
  // NCCL's tables (data/nccl.yaml base_latency_us, hw_latency_us).
  const NcclTuning& k = nccl_internal::Tables(t);
  const int ring = nccl_internal::AIdx(Algo::kRing), simple = static_cast<int>(Proto::kSimple);
  const PathType path = t.nodes > 1 ? PathType::kNet : t.intra;
  const double lat_us =
      k.base_latency_us[ring][simple] + k.hw_latency_us[static_cast<int>(path)][ring][simple];
  CollResult r;
  r.time_s = CallTime(cal, host_s, lat_us * 1e-6 + net_s / cal.bw_efficiency);
  r.algo = Algo::kP2p;
  r.proto = Proto::kSimple;
  r.channels = t.ring_channels;
  return r;
}

// The latency a call's device time pays, where NCCL's tuner latency (e.latency_us, which picks
// the protocol) is not a time: a Ring broadcast or reduce is a chain through the ring, and its
// first chunk crosses the same n - 1 ring hops (nodes - 1 of them over the network) as the last
// chunk of a Ring all_gather does, which NCCL's model prices hop by hop. NCCL's tuner charges a
// broadcast one hop ("sameChannels", tuning.cc), so 8 bytes to 4,096 GPUs took 12 us.
double DeviceLatencyUs(const NcclTopo& t, CollOp op, Algo a, Proto p, double bytes, bool collnet,
                       const AlgoEstimate& e) {
  if (a != Algo::kRing || (op != CollOp::kBroadcast && op != CollOp::kReduce)) return e.latency_us;
  const AlgoEstimate chain = EstimateNccl(t, CollOp::kAllGather, Algo::kRing, p, bytes, collnet);
  return chain.ok ? std::max(e.latency_us, chain.latency_us) : e.latency_us;
}

// "2.20" for 22000 and 22003: a release series, as data/nccl.yaml's version rules name them.
std::string MinorName(int version) {
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100);
}

}  // namespace

StatusOr<CollResult> TimeCollective(const Cluster& c, CollOp op, double bytes,
                                    std::span<const int> group, const CollOptions& o) {
  if (Status s = CheckGroup(c, op, bytes, group); !s.ok()) return s;
  NDT_CHECK(
      o.calibration != nullptr,
      "TimeCollective: no NCCL calibration (CollOptions::calibration; cmd/context.h loads it)");
  StatusOr<NcclTopo> ts = AnalyzeGroup(c, group, o.calibration->tuning);
  if (!ts.ok()) return ts.status();
  NcclTopo t = *ts;
  if (o.nccl_version < kOldestNcclVersion || o.nccl_version > kNewestNcclVersion)
    return Status::InvalidInput("NCCL " + NcclVersionName(o.nccl_version) +
                                " is not a release this model follows; use " +
                                NcclVersionName(kOldestNcclVersion) + " to 2." +
                                std::to_string(kNewestNcclVersion / 100 % 100) + ".x");
  t.nccl_version = o.nccl_version;
  if (Status s = CheckNcclRunsGpu(o.calibration->tuning, c.gpu_spec(), o.nccl_version); !s.ok())
    return s;
  if (!NcclUsesNvlinkAcrossVms(c, group, o.calibration->tuning, o.nccl_version)) {
    return Status::InvalidInput(
        "NCCL " + NcclVersionName(o.nccl_version) +
        " does not reach GPUs of other VMs over the rack's NVLink (multi-node NVLink needs NCCL " +
        MinorName(o.calibration->tuning.mnnvl_since) + " for one NVLink domain, " +
        MinorName(o.calibration->tuning.mnnvl_full_since) +
        " for several); build the cluster with ClusterSpec::nvlink_across_vms = false");
  }
  t.mnnvl_without_nvls = MnnvlWithoutNvls(c, t, o.nccl_version);
  t.nvls_channels = NvlsChannelsFor(t, o.nccl_version);
  const NcclCalibration cal = CalibrationFor(*o.calibration, t, c.sku().cpu);
  const double host_s = HostCallS(cal, o);
  const int n = static_cast<int>(group.size());
  StatusOr<CollResult> out = Status::Internal("unset");
  if (op == CollOp::kAllToAll || op == CollOp::kSendRecv) {
    out = PointToPoint(c, op, bytes, group, t, o, cal, host_s);
  } else {
    std::map<int, NetTimes> stretch_cache;
    const Algo algos[] = {Algo::kTree,         Algo::kRing, Algo::kCollNetDirect,
                          Algo::kCollNetChain, Algo::kNvls, Algo::kNvlsTree,
                          Algo::kPat};
    const Proto protos[] = {Proto::kLL, Proto::kLL128, Proto::kSimple};
    bool found = false;
    AlgoEstimate first_unavailable;  // its reason is the error when nothing is available
    CollResult best;
    double best_model_us = 0;
    for (Algo a : algos) {
      if (o.algo && *o.algo != a) continue;
      for (Proto p : protos) {
        if (o.proto && *o.proto != p) continue;
        AlgoEstimate e = EstimateNccl(t, op, a, p, bytes, o.collnet);
        if (!e.ok) {
          if (first_unavailable.why[0] == '\0') first_unavailable = e;
          continue;
        }
        // NCCL's tuner: time = L + bytes / (1000 x A) us; strict <, ties keep NCCL's order.
        const double model_us = e.latency_us + bytes / (1e3 * e.algbw_GBps);
        if (!found || model_us < best_model_us) {
          found = true;
          best_model_us = model_us;
          const double algbw_GBps =
              AchievedAlgbwGBps(t, op, a, e, cal.nvls_efficiency) * ProtoRatio(a, p, cal, t);
          double device_s = 0;
          if (NvlsPipelined(t, op, a)) {
            device_s = NvlsPipelineUs(t, op, a, bytes, algbw_GBps, cal.nvls_loop_step_s) * 1e-6;
          } else {
            const double bw_s = bytes / (algbw_GBps * 1e9);
            const double stretch = Stretch(c, op, a, bytes, bw_s, group, t, o, &stretch_cache);
            device_s = DeviceLatencyUs(t, op, a, p, bytes, o.collnet, e) * 1e-6 + stretch * bw_s +
                       LoopSync(t, op, a, p, bytes, cal);
          }
          best.time_s = CallTime(cal, host_s, device_s);
          best.algo = a;
          best.proto = p;
          best.channels = e.channels;
        }
      }
    }
    if (!found)
      return Status::InvalidInput("no algorithm/protocol available for " +
                                  std::string(CollOpName(op)) +
                                  " here: " + WhyUnavailable(first_unavailable, t.nccl_version));
    out = best;
  }
  if (!out.ok()) return out;
  CollResult r = *out;
  r.algbw_Bps = r.time_s > 0 ? bytes / r.time_s : 0;
  r.busbw_Bps = r.algbw_Bps * BusBwFactor(op, n);
  return r;
}

}  // namespace ndt
