// File: coll/nccl_search.cc
// What NCCL v2.30.4's topology search finds for a group (AnalyzeGroup; topology.md §8.2): the
// NVLink or PCIe path, ring channels and their speed inside a node and across nodes, channel
// duplication, and the NVLS graph (heads, speed). NCCL's tables come from data/nccl.yaml.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "coll/nccl_internal.h"
#include "coll/nccl_model.h"
#include "core/check.h"

namespace ndt {
namespace {

using nccl_internal::Tables;

// NCCL NVLink bandwidth per link (GB/s) by compute capability (topo.h): the entry of the
// largest sm at or below the GPU's (the smallest entry below all of them).
double NvlinkPerLink(const NcclTuning& k, int sm) {
  double bw = k.nvlink_GBps_per_link.front().second;
  for (const auto& [at, GBps] : k.nvlink_GBps_per_link)
    if (sm >= at) bw = GBps;
  return bw;
}

// Search speed arrays (GB/s per channel), search.cc.
const std::vector<double>& IntraSpeeds(const NcclTuning& k, int arch) {
  return k.intra_speeds[std::clamp(arch - 1, 0, 2)];
}
const std::vector<double>& InterSpeeds(const NcclTuning& k, int arch) {
  return k.inter_speeds[std::clamp(arch - 1, 0, 2)];
}
double FirstFit(const std::vector<double>& speeds, double limit) {
  for (double s : speeds)
    if (s <= limit + 1e-9) return s;
  return speeds.back();
}

// NCCL's inter-node ring search (search.cc): the speeds of the array are tried from the top
// (at most min(NIC, NVLink total)) and the solution of most bandwidth, channels x speed, is kept
// (ties: the faster speed); a lower speed is tried only while it is more than 0.49 of the best
// solution's speed (search.cc: next speed / found bwInter > .49). Each channel leaves a node
// through a NIC, floor(NIC / speed) per NIC, at most 32 (MAXCHANNELS / 2 before duplication). With
// several ranks per node a channel also crosses the node on NVLink, entering at one GPU and leaving
// at another, so ppn - 1 of the ppn GPUs send it on: channels x speed x (ppn - 1) / ppn must fit
// the per-GPU NVLink total. An NVL72 rack has 72 NICs but one GPU's NVLink; without this bound 2
// racks would get 32 channels of 96 GB/s (3 TB/s per GPU, 4x its NVLink).
void InterNodeChannels(const NcclTopo& t, double nic_GBps, int nics, double* speed, int* channels,
                       bool* nvlink_bound) {
  const std::vector<double>& speeds = InterSpeeds(Tables(t), t.arch);
  const double top = std::min(nic_GBps, t.total_intra_GBps);
  const double through = t.ppn > 1 ? (t.ppn - 1.0) / t.ppn : 0.0;
  double best = 0;
  *speed = speeds.back();
  *channels = 1;
  for (double s : speeds) {
    if (s > top + 1e-9) continue;
    if (best > 0 && s / *speed <= 0.49) break;
    const int by_nics = std::min(32, nics * static_cast<int>(std::floor(nic_GBps / s + 1e-9)));
    int ch = by_nics;
    if (through > 0)
      ch = std::min(ch, static_cast<int>(std::floor(t.total_intra_GBps / (s * through) + 1e-9)));
    if (ch >= 1 && ch * s > best + 1e-9) {
      best = ch * s;
      *speed = s;
      *channels = ch;
      *nvlink_bound = ch < by_nics;
    }
  }
}

// NVLink lanes between two GPUs of a VM linked directly (a cube mesh's pair), else 0.
int DirectNvlinkLanes(const Cluster& c, int a, int b) {
  const Route r = c.GpuRoute(a, b);
  if (r.size() != 1 || r[0].links.size() != 1) return 0;
  const Link& l = c.link(r[0].links[0]);
  return l.kind == LinkKind::kNvlink ? l.lanes : 0;
}

// The fewest NVLink lanes a rank of `group` has to the group's other ranks (a cube mesh inside
// one VM). A ring channel leaves and enters every rank on a link to another rank, so no more
// rings than this fit on single links: 6 for all 8 GPUs of an NDv2, 2 for GPUs 0 and 1.
int FewestGroupLanes(const Cluster& c, std::span<const int> group) {
  int fewest = 1 << 30;
  for (int a : group) {
    int lanes = 0;
    for (int b : group)
      if (b != a) lanes += DirectNvlinkLanes(c, a, b);
    fewest = std::min(fewest, lanes);
  }
  return fewest;
}

// The slowest hop, in GB/s per direction, between consecutive ranks of `group` inside one VM
// over PCIe (what a ring inside the VM crosses: a socket link where its GPUs sit on two
// sockets); +inf when no two consecutive ranks share a VM. NCCL's search caps a ring's speed
// by such a path's bandwidth too (topo.h QPI/SKL_QPI/AMD bandwidths).
double SlowestPcieRingHopGBps(const Cluster& c, std::span<const int> group) {
  double slowest = std::numeric_limits<double>::infinity();
  const size_t n = group.size();
  for (size_t i = 0; i < n && n > 1; ++i) {
    const int a = group[i], b = group[(i + 1) % n];
    if (c.gpu(a).vm != c.gpu(b).vm) continue;
    double route_Bps = 0;  // parallel paths add
    for (const Path& p : c.GpuRoute(a, b)) {
      double path_Bps = std::numeric_limits<double>::infinity();
      for (LinkId id : p.links) path_Bps = std::min(path_Bps, c.link(id).bw_Bps);
      route_Bps += path_Bps;
    }
    slowest = std::min(slowest, route_Bps / 1e9);
  }
  return slowest;
}

}  // namespace

StatusOr<NcclTopo> AnalyzeGroup(const Cluster& c, std::span<const int> group, const NcclTuning& k) {
  NDT_CHECK(k.loaded, "AnalyzeGroup: NCCL's tables (data/nccl.yaml) are not loaded");
  NcclTopo t;
  t.tuning = &k;
  t.n = static_cast<int>(group.size());
  // NVLink domains of the group, ranks per domain (ppn: the most) and distinct NICs per domain,
  // from the (domain, NIC) pairs sorted; on the stack up to kStackRanks ranks, as this runs for
  // every collective call of a simulated step (a map and a set cost ~2 allocations per rank).
  struct DomainNic {
    int domain;
    NodeId nic;  // -1: none
  };
  constexpr size_t kStackRanks = 1024;
  DomainNic stack_pairs[kStackRanks];
  std::vector<DomainNic> heap_pairs;
  DomainNic* pairs = stack_pairs;
  if (group.size() > kStackRanks) {
    heap_pairs.resize(group.size());
    pairs = heap_pairs.data();
  }
  for (size_t i = 0; i < group.size(); ++i) {
    const GpuInfo& g = c.gpu(group[i]);
    pairs[i] = {g.domain, g.nic};
  }
  std::sort(pairs, pairs + group.size(), [](const DomainNic& a, const DomainNic& b) {
    return a.domain != b.domain ? a.domain < b.domain : a.nic < b.nic;
  });
  int domains_with_nics = 0;    // domains where some rank has a NIC
  int nics_per_node = 1 << 30;  // the fewest distinct NICs of those domains
  for (size_t i = 0; i < group.size();) {
    size_t j = i;
    int nics = 0;
    for (; j < group.size() && pairs[j].domain == pairs[i].domain; ++j) {
      if (pairs[j].nic >= 0 && (j == i || pairs[j].nic != pairs[j - 1].nic)) ++nics;
    }
    ++t.nodes;
    t.ppn = std::max(t.ppn, static_cast<int>(j - i));
    if (nics > 0) {
      ++domains_with_nics;
      nics_per_node = std::min(nics_per_node, nics);
    }
    i = j;
  }
  const GpuSpec& gpu = c.gpu_spec();
  t.sm = gpu.sm_version;
  t.arch = t.sm >= 100 ? 3 : t.sm >= 90 ? 2 : t.sm >= 80 ? 1 : 0;
  t.amd_cpu = c.sku().cpu.find("AMD") != std::string::npos;
  const IntraVmFabric fab = c.sku().fabric;
  const bool nvlink = gpu.nvlink_links > 0 && c.nvlink_domain_gpus() > 1;
  t.intra = nvlink ? PathType::kNvl : PathType::kPci;
  t.nvswitch = nvlink && fab != IntraVmFabric::kNvlinkCubeMesh;
  t.nvls = t.nvswitch && t.arch >= 2 && t.ppn > 2;
  if (nvlink) {
    t.total_intra_GBps = gpu.nvlink_links * NvlinkPerLink(k, t.sm);
  } else {
    // PCIe x16 as NCCL counts it (width x rate / 80, topo.h); before Gen3 as Gen3.
    t.total_intra_GBps = k.pcie_x16_GBps[std::clamp(gpu.pcie_gen - 3, 0, 2)];
    // Before, a ring over two sockets ran at the PCIe rate: 4 P40s of an ND24rs (6 GB/s
    // between its Broadwell sockets) reached 11.66 GB/s of all_reduce bus bandwidth.
    t.total_intra_GBps = std::min(t.total_intra_GBps, SlowestPcieRingHopGBps(c, group));
  }
  // Ring search: intra speed, channels, then duplication (search.cc).
  double speed = 0;
  int channels = 0;
  if (t.nodes == 1) {
    const int mesh_lanes =
        t.intra == PathType::kNvl && !t.nvswitch ? FewestGroupLanes(c, group) : 0;
    if (t.intra == PathType::kNvl && !t.nvswitch && mesh_lanes == 0) {
      // A rank with no NVLink to the others (GPUs 0 and 5 of an NDv2): the ring crosses PCIe.
      t.intra = PathType::kPci;
      t.total_intra_GBps = std::min(k.pcie_x16_GBps[std::clamp(gpu.pcie_gen - 3, 0, 2)],
                                    SlowestPcieRingHopGBps(c, group));
    }
    if (t.intra == PathType::kNvl && !t.nvswitch) {
      // NDv2 hybrid cube-mesh: rings over single NVLinks, one channel per link (topology.md §8.8),
      // as many as every rank of the group has links to the others (FewestGroupLanes). Before,
      // every group took the VM's 6: GPUs 0 and 1 (2 links, 50 GB/s) ran all_reduce at 114 GB/s.
      speed = NvlinkPerLink(k, t.sm);
      channels = std::min(gpu.nvlink_links, mesh_lanes);
    } else {
      speed = FirstFit(IntraSpeeds(k, t.arch), t.total_intra_GBps);
      channels = std::max(1, static_cast<int>(std::floor(t.total_intra_GBps / speed + 1e-9)));
    }
  } else {
    // Multi-node: one channel per NIC speed slot; intra and inter share the speed.
    if (domains_with_nics != t.nodes || !c.sku().infiniband)
      return Status::InvalidInput(c.sku().name +
                                  " has no InfiniBand: a collective across VMs "
                                  "needs a scale-out network; use ranks of one VM");
    const double nic_GBps = c.sku().infiniband ? c.sku().infiniband->port_Bps / 1e9 : 0;
    InterNodeChannels(t, nic_GBps, nics_per_node, &speed, &channels, &t.ring_nvlink_bound);
    t.nics_per_node = nics_per_node;
    t.nic_GBps = FirstFit(InterSpeeds(k, t.arch), nic_GBps);
  }
  // Duplication (data/nccl.yaml channel_duplication: bw >= 25, skipped when sm > 80, bw < 50 and
  // more than 4 channels).
  if (speed >= k.dup_min_GBps && !(t.sm > k.dup_skip_above_sm && speed < k.dup_skip_below_GBps &&
                                   channels > k.dup_skip_above_channels)) {
    channels *= 2;
    speed /= 2;
  }
  t.ring_channels = std::min(channels, 64);
  t.bw_intra_GBps = speed;
  t.bw_inter_GBps = t.nodes > 1 ? speed : 0;
  if (t.nvls) {
    t.nvls_channels =
        t.arch >= 3 ? (t.nodes > 1 ? k.nvls_channels_sm100_multi : k.nvls_channels_sm100_single)
                    : k.nvls_channels_sm90;
    t.nvls_heads = std::min(kNvlsMaxArity, t.ppn);
    t.nvls_graph_GBps = FirstFit(IntraSpeeds(k, t.arch), t.total_intra_GBps / (t.nvls_heads + 1));
  }
  return t;
}

int FirstNcclReleaseFor(const NcclTuning& k, int sm) {
  int release = 0;
  for (const auto& [at, since] : k.gpu_support_since)
    if (sm >= at) release = since;
  return release;
}

Status CheckNcclRunsGpu(const NcclTuning& k, const GpuSpec& gpu, int version) {
  const int since = FirstNcclReleaseFor(k, gpu.sm_version);
  if (version >= since) return Status::Ok();
  return Status::InvalidInput("NCCL " + NcclVersionName(version) + " does not run " + gpu.name +
                              " (sm_" + std::to_string(gpu.sm_version) + "): NCCL " +
                              NcclVersionName(since) +
                              " is the first release with its kernels and tuning; pass "
                              "--nccl-version " +
                              NcclVersionName(since) + " or newer");
}

bool NcclUsesNvlinkAcrossVms(const Cluster& c, std::span<const int> group, const NcclTuning& k,
                             int version) {
  // (domain, VM) of every rank, sorted: a domain spans VMs where two neighbours differ in VM.
  std::vector<std::pair<int, int>> dv(group.size());
  for (size_t i = 0; i < group.size(); ++i) dv[i] = {c.gpu(group[i]).domain, c.gpu(group[i]).vm};
  std::sort(dv.begin(), dv.end());
  bool spans_vms = false;
  int domains = dv.empty() ? 0 : 1;
  for (size_t i = 1; i < dv.size(); ++i) {
    if (dv[i].first != dv[i - 1].first)
      ++domains;
    else if (dv[i].second != dv[i - 1].second)
      spans_vms = true;
  }
  if (!spans_vms) return true;
  if (version < k.mnnvl_since) return false;
  return version >= k.mnnvl_full_since || domains == 1;
}

bool MnnvlWithoutNvls(const Cluster& c, const NcclTopo& t, int version) {
  NDT_CHECK(t.tuning != nullptr, "MnnvlWithoutNvls: the topology has no NCCL tables");
  return c.sku().fabric == IntraVmFabric::kNvl72 && t.nodes == 1 &&
         version >= t.tuning->mnnvl_since && version < t.tuning->mnnvl_full_since;
}

}  // namespace ndt
