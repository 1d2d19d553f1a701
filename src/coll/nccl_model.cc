// File: coll/nccl_model.cc
// NCCL v2.30.4's tuner (topology.md §8.3-§8.7; the topology search is nccl_search.cc). NCCL's
// tables (NVIDIA/nccl v2.30.4 src/graph/tuning.cc, topo.h, search.cc via topology.md §8) are read
// from data/nccl.yaml (NcclTuning, nccl_tuning_io.cc); the formulas and NCCL's scalar constants
// that use them are here, each with its source.
#include "coll/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "coll/nccl_internal.h"
#include "core/check.h"

namespace ndt {
namespace {

using nccl_internal::AIdx;
using nccl_internal::Tables;

double TreeCorrection(const NcclTuning& k, int proto, double bytes) {
  if (bytes < 64) return k.tree_correction[proto][0];
  const int log_size = static_cast<int>(std::floor(std::log2(bytes / 64)));
  return log_size < 23 ? k.tree_correction[proto][log_size] : 1.0;
}

}  // namespace

int RingSimpleLoops(const NcclTopo& t, double bytes) {
  NDT_CHECK(t.ring_channels > 0 && t.n > 0, "RingSimpleLoops: empty topology");
  const NcclTuning& k = Tables(t);
  const double chunk = k.simple_chunk_steps * k.simple_buffer_bytes / k.nccl_steps;
  const double loop =
      static_cast<double>(k.simple_channel_duplication) * t.ring_channels * t.n * chunk;
  return bytes > 0 ? static_cast<int>(std::ceil(bytes / loop)) : 0;
}

NvlsLoop NvlsLoops(const NcclTopo& t, double bytes) {
  NDT_CHECK(t.nvls_channels > 0 && t.n > 0, "NvlsLoops: no NVLS channels");
  NvlsLoop l;
  const int heads = t.nvls_heads > 0 ? t.nvls_heads : t.n;
  const double ops = static_cast<double>(t.nvls_channels) * heads;  // channels x heads
  double chunk = kNvlsMaxChunkBytes;
  if (bytes < 64 * ops * chunk && chunk > 65536) chunk = 65536;
  if (bytes < 8 * ops * chunk && chunk > 32768) chunk = 32768;
  if (bytes < 2 * ops * chunk && chunk > 16384) chunk = 16384;
  l.chunk_bytes = chunk;
  l.loop_bytes = ops * chunk;
  l.loops = bytes > 0 ? static_cast<int>(std::ceil(bytes / l.loop_bytes)) : 0;
  return l;
}

int NvlsChannelsFor(const NcclTopo& t, int version) {
  if (!t.nvls || t.arch < 3 || t.nodes > 1 || version >= kNcclNvlsSm100DomainCtasSince)
    return t.nvls_channels;
  return Tables(t).nvls_channels_sm100_multi;  // NVLS_NCHANNELS_SM100, before the NVL rule
}

bool NvlsPipelined(const NcclTopo& t, CollOp op, Algo algo) {
  return algo == Algo::kNvls && op == CollOp::kAllReduce && t.nodes == 1;
}

double NvlsPipelineUs(const NcclTopo& t, CollOp op, Algo algo, double bytes, double algbw_GBps,
                      double step_s) {
  if (!NvlsPipelined(t, op, algo) || bytes <= 0 || algbw_GBps <= 0) return 0.0;
  const NvlsLoop l = NvlsLoops(t, bytes);
  const double step_us =
      step_s > 0 ? step_s * 1e6
                 : Tables(t).hw_latency_us[0][AIdx(Algo::kRing)][static_cast<int>(Proto::kSimple)];
  const double us_per_byte = 1.0 / (algbw_GBps * 1e3);
  return bytes * us_per_byte + l.loops * step_us +
         2.0 * (std::min(bytes, l.loop_bytes) * us_per_byte + step_us);
}

std::string WhyUnavailable(const AlgoEstimate& e, int nccl_version) {
  if (e.needs_nccl == 0) return e.why;
  return std::string(e.why) + " needs NCCL " + std::to_string(e.needs_nccl / 10000) + "." +
         std::to_string(e.needs_nccl / 100 % 100) + " or newer (NCCL " +
         NcclVersionName(nccl_version) + " here); pass --nccl-version " +
         NcclVersionName(kPinnedNcclVersion) + " or choose another algorithm";
}

AlgoEstimate EstimateNccl(const NcclTopo& t, CollOp op, Algo algo, Proto proto, double bytes,
                          bool collnet) {
  const NcclTuning& k = Tables(t);
  AlgoEstimate e;
  const int n = t.n, N = t.nodes, ppn = t.ppn;
  const int ni = N == 1 ? 0 : N == 2 ? 1 : 2;
  const int p = static_cast<int>(proto);
  const bool ar = op == CollOp::kAllReduce;
  const bool agrs = op == CollOp::kAllGather || op == CollOp::kReduceScatter;
  const bool bcred = op == CollOp::kBroadcast || op == CollOp::kReduce;
  auto no = [&](const char* why) {
    e.ok = false;
    e.why = why;
    return e;
  };
  auto too_old = [&](const char* what, int since) {
    e.needs_nccl = since;
    return no(what);
  };
  // Availability (§8.3, §8.7).
  switch (algo) {
    case Algo::kRing:
      break;
    case Algo::kTree:
      if (!ar) return no("Tree is modelled by NCCL for all_reduce only");
      break;
    case Algo::kNvls:
      if (!t.nvls)
        return no(
            "NVLS needs NVSwitch multicast (Hopper or newer with NVSwitch); this GPU/VM has none");
      if (!(ar || agrs)) return no("NVLS runs all_reduce, all_gather, reduce_scatter only");
      if (t.nccl_version < kNcclNvlsSince) return too_old("NVLS", kNcclNvlsSince);
      if (t.mnnvl_without_nvls) return too_old("NVLS over multi-node NVLink", k.mnnvl_full_since);
      if (N > 1 && !collnet) return no("multi-node NVLS needs CollNet (IB SHARP): pass --collnet");
      if (N > 1 && t.nccl_version < kNcclNvlsTreeSince)
        return too_old("multi-node NVLS", kNcclNvlsTreeSince);
      if (agrs && N > 1)
        return no(
            "NVLS all_gather/reduce_scatter across nodes needs a CollNet plugin with iallgather");
      if (agrs && ppn > 32)
        return no("NVLS all_gather/reduce_scatter is limited to 32 local ranks");
      if (proto != Proto::kSimple) return no("NVLS runs the Simple protocol only");
      break;
    case Algo::kNvlsTree:
      if (!t.nvls)
        return no(
            "NVLSTree needs NVSwitch multicast (Hopper or newer with NVSwitch); this GPU/VM has "
            "none");
      if (!ar) return no("NVLSTree runs all_reduce only");
      if (N == 1) return no("NVLSTree is off on a single node");
      if (t.nccl_version < kNcclNvlsTreeSince) return too_old("NVLSTree", kNcclNvlsTreeSince);
      if (t.mnnvl_without_nvls)
        return too_old("NVLSTree over multi-node NVLink", k.mnnvl_full_since);
      if (proto != Proto::kSimple) return no("NVLSTree runs the Simple protocol only");
      break;
    case Algo::kCollNetDirect:
    case Algo::kCollNetChain:
      if (!collnet) return no("CollNet (IB SHARP) is off; pass --collnet to enable it");
      if (N == 1) return no("CollNet needs more than one node");
      if (algo == Algo::kCollNetDirect && !t.nvswitch) return no("CollNetDirect needs NVSwitch");
      if (ppn > 8) return no("CollNet is skipped with more than 8 local GPUs");
      if (!(ar || (agrs && algo == Algo::kCollNetDirect)))
        return no("CollNet does not run this operation");
      if (proto != Proto::kSimple) return no("CollNet runs the Simple protocol only");
      break;
    case Algo::kPat:
      if (!agrs) return no("PAT runs all_gather and reduce_scatter only");
      if (ppn != 1) return no("PAT needs one rank per node");
      if (t.nccl_version < kNcclPatSince) return too_old("PAT", kNcclPatSince);
      // tuning.cc (v2.23.4 .. v2.30.4): "a == NCCL_ALGO_PAT && (p != NCCL_PROTO_SIMPLE || ...)
      // continue".
      if (proto != Proto::kSimple) return no("PAT runs the Simple protocol only");
      break;
    case Algo::kP2p:
      return no("P2P is not a tuned collective algorithm");
  }
  if (proto == Proto::kLL128 && t.intra != PathType::kNvl && N == 1)
    return no("LL128 is off when GPUs are not connected by NVLink");
  const double steps = ar ? 2.0 * (n - 1) : agrs ? n - 1.0 : static_cast<double>(n);
  const int C =
      (algo == Algo::kNvls || algo == Algo::kNvlsTree) ? t.nvls_channels : t.ring_channels;
  const double b = (N <= 2 || algo == Algo::kCollNetDirect || algo == Algo::kCollNetChain)
                       ? t.bw_intra_GBps
                       : t.bw_inter_GBps;
  double B = C * b;
  const int llrow = N == 1 ? t.arch : (t.amd_cpu ? 1 : 0);
  const double ll_max = k.ll_max_bw[llrow][ni];
  if (algo == Algo::kRing) {
    if (proto == Proto::kLL) {
      // Pre-2.21 tuners: B/4 for all_reduce, reduce or multi-node, B/3 otherwise; later B/2.
      const bool quarter = ar || op == CollOp::kReduce || N > 1;
      const double div = t.nccl_version >= kNcclRingLLHalfSince ? k.ring_ll_divisor_new
                         : quarter                              ? k.ring_ll_divisor_old_ar
                                                                : k.ring_ll_divisor_old_other;
      B = std::min(ll_max, 1.0 / div * B);
    }
    if (proto == Proto::kLL128) {
      // NCCL's ppn is ranks / nodes (a float): under 2, one GPU sends and receives through its
      // NIC, which releases before 2.23 discount to 0.7 (data/nccl.yaml ring_ll128_bus_factor).
      const bool low_ppn = static_cast<double>(n) / N < 2.0;
      const double f = low_ppn && t.nccl_version < kNcclLL128PpnDiscountUntil
                           ? k.ring_ll128_factor_low_ppn_old
                           : k.ring_ll128_factor;
      B = std::min(f * B, C * k.per_ch_max_ring_ll128[t.arch][ni]);
    }
  } else if (algo == Algo::kTree) {
    B = std::min(0.92 * B, C * k.per_ch_max_tree[t.arch][ni]);
    if (proto == Proto::kLL) B = std::min(B / 3.8, ll_max);
    if (proto == Proto::kLL128)
      B = std::min(B * (N == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                   C * k.per_ch_max_tree_ll128[t.arch][ni]);
  } else if (algo == Algo::kPat) {
    B *= 0.75;
  } else if (algo == Algo::kCollNetDirect || algo == Algo::kCollNetChain) {
    if (agrs) {
      B = ppn * std::min(t.bw_intra_GBps, 0.9 * t.bw_inter_GBps);
    } else {
      double r = static_cast<double>(ppn) / C;
      double f = r - (r - 1) / 2;
      if (f > 0) B /= std::max(f, 1.0);
      if (t.arch >= 2) B *= 0.85;
    }
  } else if (algo == Algo::kNvls || algo == Algo::kNvlsTree) {
    if (C < 2) return no("NVLS needs at least 2 channels");
    // NCCL prices NVLS per channel of its NVLS graph (tuning.cc): graph channels x bwIntra x
    // efficiency x (channels-1)/channels, x2 for all_reduce. Inside one NVLink domain the graph
    // has one channel per head at the searched speed (NcclTopo::nvls_heads, nvls_graph_GBps);
    // across nodes the graph follows the NICs and is taken as C channels sharing the NVLink.
    const double gc = N == 1 && t.nvls_heads > 0 ? t.nvls_heads : C;
    if (gc < 2) return no("NVLS needs at least 2 channels");
    const double gbw = N == 1 && t.nvls_heads > 0 ? t.nvls_graph_GBps : t.total_intra_GBps / C;
    double intra = gbw * k.nvls_efficiency[t.arch] * (gc - 1.0) / gc;
    intra = ar ? intra * 2 : intra * (ppn - 1.0) / ppn;
    double inter = N > 1 ? t.bw_inter_GBps * (algo == Algo::kNvlsTree && N <= 2 ? 2 : 1) : 1e30;
    double per = std::min(intra, inter);
    if (algo == Algo::kNvlsTree) per = std::min(per, k.per_ch_max_nvls_tree[t.arch][ni]);
    B = gc * per;
  }
  if (B <= 0) return no("bandwidth 0 in NCCL's model for this combination");
  double A;
  if (agrs && algo != Algo::kRing)
    A = B;
  else if (algo == Algo::kTree || algo == Algo::kCollNetDirect || algo == Algo::kCollNetChain)
    A = 0.5 * B;
  else
    A = B * n / steps;
  if (algo == Algo::kTree) A *= TreeCorrection(k, p, bytes);
  // Latency (§8.6).
  const int path = t.intra == PathType::kNvl ? 0 : 1;
  const double intra_lat = k.hw_latency_us[path][AIdx(algo)][p];
  const double net_over = (t.amd_cpu ? k.net_overhead_amd_us : k.net_overhead_intel_us) *
                          (proto == Proto::kSimple ? k.net_overhead_simple_x : 1.0);
  const bool lat223 = t.nccl_version >= kNcclLatencyModel223Since;
  const double inter_lat =
      k.hw_latency_us[2][ppn == 1 && lat223 ? AIdx(Algo::kTree) : AIdx(algo)][p];
  const double base = k.base_latency_us[AIdx(algo)][p];
  const double log2N = std::log2(static_cast<double>(N));
  double L = 0;
  switch (algo) {
    case Algo::kRing:
      if (bcred) {
        L = base + (N > 1 ? inter_lat : intra_lat);
      } else {
        double snet = N > 1 ? (ar ? 2.0 * (lat223 ? N - 1 : N) : N - 1.0) : 0.0;
        L = base + (steps - snet) * std::max(intra_lat, N > 1 ? net_over : 0.0) + snet * inter_lat;
        // Multi-node Ring-Simple all_reduce "plateau effect" (§8.7).
        if (ar && N > 1 && proto == Proto::kSimple && bytes / (C * n) >= 64)
          L *= t.arch >= 1 ? k.plateau_ampere_plus : k.plateau_pre_ampere;
      }
      break;
    case Algo::kTree:
      L = base + 2 * ((ppn - 1) * intra_lat + log2N * inter_lat);
      break;
    case Algo::kCollNetDirect:
      L = 2 * (std::min(1, ppn - 1) * intra_lat + 0.4 * (ppn - 1)) + inter_lat;
      break;
    case Algo::kCollNetChain:
      L = 2 * (ppn - 1) * intra_lat + inter_lat;
      break;
    case Algo::kNvls:
      L = intra_lat + (N > 1 ? inter_lat : 0);
      break;
    case Algo::kNvlsTree:
      L = intra_lat + 2 * log2N * inter_lat;
      break;
    case Algo::kPat:
      L = 8 + log2N * inter_lat / 3.5 + 2.8 * n;
      break;
    default:
      break;
  }
  e.ok = true;
  e.algbw_GBps = A;
  e.latency_us = L;
  e.channels = C;
  return e;
}

namespace {

// Bound 1 of AchievedAlgbwGBps: NVLS multimem reduce + multicast over n ranks of one node. Only
// the h = min(n, 32) heads reduce: a head's 1/h slice leaves and the sum comes back on top of
// the S every rank serves and receives, S + S/h each way.
double NvlsIntraAlgbwGBps(const NcclTopo& t, int n) {
  const double h = std::min(n, kNvlsMaxArity);
  return t.total_intra_GBps * Tables(t).nvls_efficiency[t.arch] * h / (h + 1.0);
}

// Bound 3: bytes per direction through one node's NICs per byte of the buffer (0: no bound).
double NicBytesPerByte(const NcclTopo& t, CollOp op, Algo algo) {
  const double n = t.n, N = t.nodes;
  const bool ar = op == CollOp::kAllReduce;
  const bool agrs = op == CollOp::kAllGather || op == CollOp::kReduceScatter;
  switch (algo) {
    case Algo::kRing:
      return ar ? 2 * (n - 1) / n : agrs ? (n - 1) / n : 1.0;
    case Algo::kTree:
    case Algo::kNvlsTree:
      return N <= 2 ? 1.0 : 2.0;
    case Algo::kCollNetDirect:
    case Algo::kCollNetChain:
    case Algo::kNvls:
      return ar ? 1.0 : (N - 1) / N;
    case Algo::kPat:
      return (N - 1) / N;
    default:
      return 0.0;
  }
}

}  // namespace

double AchievedAlgbwGBps(const NcclTopo& t, CollOp op, Algo algo, const AlgoEstimate& e,
                         double nvls_eff) {
  double a = e.algbw_GBps;
  if (algo == Algo::kNvls && op == CollOp::kAllReduce && t.nodes == 1 && t.n > 1) {
    const AlgoEstimate ring = EstimateNccl(t, op, Algo::kRing, Proto::kSimple, 1 << 30, false);
    const double scale = nvls_eff > 0 ? nvls_eff / Tables(t).nvls_efficiency[t.arch] : 1.0;
    a = std::max(std::min(a, NvlsIntraAlgbwGBps(t, t.n)) * scale, ring.ok ? ring.algbw_GBps : 0.0);
    return a;  // one NVLink domain: no NICs
  }
  if (algo == Algo::kNvlsTree) {
    // NVLSTree reduces and multicasts inside each NVLink domain with NVLS, and pipelines the
    // tree between domains behind it: it cannot beat one domain's own NVLS all_reduce. Price
    // that phase as NVLS on one node of ppn ranks (same graph: min(ppn, 32) heads at the
    // searched speed, the multimem bound, the fitted efficiency; never above the multimem bound
    // at NCCL's efficiency, the bound used before), so that two NVL72 racks are not priced
    // above one rack's NVLS bandwidth term.
    NcclTopo d = t;
    d.nodes = 1;
    d.n = t.ppn;
    d.nics_per_node = 0;
    d.nic_GBps = 0;
    d.bw_inter_GBps = 0;
    const AlgoEstimate one =
        EstimateNccl(d, CollOp::kAllReduce, Algo::kNvls, Proto::kSimple, 1 << 30, false);
    const double scale = nvls_eff > 0 ? nvls_eff / Tables(t).nvls_efficiency[t.arch] : 1.0;
    const double multimem = NvlsIntraAlgbwGBps(t, t.ppn);
    a = std::min(a, multimem);
    if (one.ok) a = std::min(a, std::min(one.algbw_GBps, multimem) * scale);
  }
  if (t.nics_per_node > 0) {  // set across nodes only
    const double f = NicBytesPerByte(t, op, algo);
    if (f > 0) a = std::min(a, t.nics_per_node * t.nic_GBps / f);
  }
  return a;
}

NcclCalibration CalibrationFor(const NcclCalibrationSet& set, const NcclTopo& t,
                               const std::string& host_cpu) {
  NcclCalibration c = set.base;
  c.simple_net_step_sync_s = set.base.simple_step_sync_s;
  // A ring step over NVLink 5 waits on its peer's flag over NVLink 5, whether or not the ring
  // also leaves the rack: the step is priced by the hop it crosses.
  if (t.arch == 3 && t.intra == PathType::kNvl)
    c.simple_step_sync_s = set.blackwell_simple_step_sync_s;
  c.nvlink_bound_bw_efficiency = c.bw_efficiency;
  if (t.arch == 3 && t.nodes > 1 && t.ring_nvlink_bound)
    c.nvlink_bound_bw_efficiency = set.blackwell_bw_efficiency;
  if (t.arch == 3 && t.nodes == 1) {
    c.ll_bw_ratio = set.blackwell_ll_bw_ratio;
    c.ll128_bw_ratio = set.blackwell_ll128_bw_ratio;
    c.bw_efficiency = set.blackwell_bw_efficiency;
  }
  if (t.arch == 2) {
    c.nvls_efficiency = set.hopper_nvls_efficiency;
    c.nvls_loop_step_s = set.hopper_nvls_loop_step_s;
  }
  if (host_cpu.find("Grace") != std::string::npos)
    c.call_overhead_per_gpu_s = set.grace_call_overhead_per_gpu_s;
  return c;
}

double SmCopyEfficiency(const Cluster& cluster, std::span<const int> group,
                        const NcclCalibrationSet& set) {
  if (group.size() < 2) return set.base.bw_efficiency;
  StatusOr<NcclTopo> t = AnalyzeGroup(cluster, group, set.tuning);
  if (!t.ok()) return set.base.bw_efficiency;
  return CalibrationFor(set, *t, cluster.sku().cpu).bw_efficiency;
}

}  // namespace ndt
