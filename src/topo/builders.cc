// File: topo/builders.cc
// The VM interior of the cluster graph and spec validation. Per VM: CPUs (one per socket, or
// Grace) joined by the socket link; GPUs on PCIe switches, directly on a CPU, or on Grace by
// NVLink-C2C; NICs on the GPU's PCIe switch (GPUDirect RDMA, v4/v5), on Grace (GB200/GB300),
// or on NUMA0 shared by the VM (NDv2, topology.md §2.4); NVLink as the NDv2 hybrid cube-mesh
// (data/fabric.yaml), in-VM NVSwitches (A100 v4: 6, H100/H200 v5: 4) or the 18 rack NVSwitch
// chips of an NVL72 rack shared by 18 VMs (§3-§5). The fat tree is in fat_tree.cc.
#include "topo/builders.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "topo/cluster_builder.h"

namespace ndt {
namespace {

int Cpus(const SkuSpec& s) { return std::max(1, s.cpu_sockets); }
std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
int UsedGpus(const ClusterSpec& spec) {
  return spec.gpus_per_vm == 0 ? spec.sku->gpus : spec.gpus_per_vm;
}
bool HasFabric(const SkuSpec& s) {
  return s.infiniband.has_value() && s.infiniband->ports > 0 &&
         s.nic_affinity != NicAffinity::kNone;
}
bool PerGpuNics(const SkuSpec& s) {
  return s.nic_affinity == NicAffinity::kPerGpu || s.nic_affinity == NicAffinity::kPerGpuC2c;
}
bool OnC2c(const SkuSpec& s, const GpuSpec& g) {
  return s.fabric == IntraVmFabric::kNvl72 || g.c2c;
}
// Lanes from one GPU to each of `switches` NVSwitch chips: an even split, the remainder given
// to the outer switches (18 over 4 -> 5/4/4/5, topology.md §4.1).
std::vector<int> SplitLanes(int lanes, int switches) {
  std::vector<int> out(switches, lanes / switches);
  int extra = lanes % switches;
  for (int s = 0; s < switches; ++s) {
    if (s < (extra + 1) / 2 || s >= switches - extra / 2) ++out[s];
  }
  return out;
}
Status DataError(const SkuSpec& s, const std::string& what) {
  return Status::InvalidInput("VM size " + s.name + ": " + what +
                              "; fix its entry in data/vms/ or data/gpus/");
}

Status ValidateData(const ClusterSpec& spec) {
  const SkuSpec& s = *spec.sku;
  const GpuSpec& g = *spec.gpu;
  if (OnC2c(s, g)) {
    if (g.c2c_Bps <= 0) return DataError(s, "GPU " + g.name + " has no NVLink-C2C bandwidth");
  } else if (g.pcie_Bps <= 0) {
    return DataError(s, "GPU " + g.name + " has no PCIe bandwidth");
  }
  if (Cpus(s) > 1 && s.cpu_interconnect_Bps <= 0) {
    return DataError(s, "2 or more CPU sockets need cpu_interconnect bandwidth");
  }
  bool nvlink = s.fabric != IntraVmFabric::kPcie;
  if (nvlink && (g.nvlink_links < 1 || g.nvlink_link_Bps <= 0)) {
    return DataError(s, "GPU " + g.name + " needs nvlink_links and nvlink_link bandwidth");
  }
  if (s.fabric == IntraVmFabric::kNvswitch || s.fabric == IntraVmFabric::kNvl72) {
    if (s.nvswitches < 1 || s.nvswitches > g.nvlink_links) {
      return DataError(s, "nvswitches must be 1.." + std::to_string(g.nvlink_links) + " (got " +
                              std::to_string(s.nvswitches) + ")");
    }
  }
  if (s.fabric == IntraVmFabric::kNvl72 && s.vms_per_nvlink_domain < 1) {
    return DataError(s, "an NVL72 size needs vms_per_nvlink_domain >= 1");
  }
  if (HasFabric(s)) {
    if (s.infiniband->port_Bps <= 0) return DataError(s, "InfiniBand port rate must be > 0");
    if (PerGpuNics(s) && s.infiniband->ports != s.gpus) {
      return DataError(s, "one NIC per GPU needs as many InfiniBand ports as GPUs (" +
                              std::to_string(s.infiniband->ports) + " ports, " +
                              std::to_string(s.gpus) + " GPUs)");
    }
  }
  return Status::Ok();
}

}  // namespace

int FabricNicsPerVm(const ClusterSpec& spec) {
  const SkuSpec& s = *spec.sku;
  if (!HasFabric(s)) return 0;
  return PerGpuNics(s) ? UsedGpus(spec) : s.infiniband->ports;
}

namespace {

// Every field of the spec, before any arithmetic on it (the fat tree divides by the radix and
// the VMs per leaf, so nothing may reach PlanFatTree unchecked).
Status ValidateFields(const ClusterSpec& spec) {
  if (spec.sku == nullptr || spec.gpu == nullptr) {
    return Status::InvalidInput("no VM size given; pass --sku NAME (see: ndtwin sku list)");
  }
  const SkuSpec& s = *spec.sku;
  const FabricSpec& f = spec.fabric;
  if (spec.vms < 1) {
    return Status::InvalidInput("--vms must be at least 1 (got " + std::to_string(spec.vms) + ")");
  }
  if (s.gpus < 1) {
    return Status::InvalidInput("VM size " + s.name +
                                " has no GPUs; choose a GPU size (see: ndtwin sku list)");
  }
  if (spec.gpus_per_vm < 0 || spec.gpus_per_vm > s.gpus) {
    return Status::InvalidInput("--gpus-per-vm must be 0 (all) to " + std::to_string(s.gpus) +
                                " for " + s.name + " (got " + std::to_string(spec.gpus_per_vm) +
                                ")");
  }
  // The cluster graph holds every GPU, NIC and switch: beyond the largest clusters built
  // (~100k GPUs) it is a typo, and its memory and the models' work grow with it.
  const int64_t gpus =
      static_cast<int64_t>(spec.vms) * (spec.gpus_per_vm > 0 ? spec.gpus_per_vm : s.gpus);
  if (spec.vms > kMaxClusterGpus || gpus > kMaxClusterGpus) {
    return Status::InvalidInput("--vms " + std::to_string(spec.vms) + " of " + s.name + " is " +
                                std::to_string(gpus) + " GPUs, more than the " +
                                std::to_string(kMaxClusterGpus) +
                                " one cluster model holds; lower --vms");
  }
  if (f.tiers != 2 && f.tiers != 3) {
    return Status::InvalidInput("--tiers must be 2 or 3 (got " + std::to_string(f.tiers) + ")");
  }
  if (f.switch_radix < 4 || f.switch_radix > kMaxSwitchRadix) {
    return Status::InvalidInput("--radix must be 4 to " + std::to_string(kMaxSwitchRadix) +
                                " ports per switch (Quantum-2: 64; got " +
                                std::to_string(f.switch_radix) + ")");
  }
  if (!(f.oversubscription >= 1.0 && f.oversubscription <= kMaxOversubscription)) {
    return Status::InvalidInput("--oversubscription must be 1 (non-blocking) to " +
                                Num(kMaxOversubscription) + " (leaf down:up bandwidth; got " +
                                Num(f.oversubscription) + ")");
  }
  if (f.vms_per_leaf < 0 || f.vms_per_leaf > f.switch_radix) {
    return Status::InvalidInput("--vms-per-leaf must be 1 to the radix " +
                                std::to_string(f.switch_radix) + ", or 0 for radix/2 (got " +
                                std::to_string(f.vms_per_leaf) + ")");
  }
  return ValidateData(spec);
}

}  // namespace

Status ValidateClusterSpec(const ClusterSpec& spec) {
  NDT_RETURN_IF_ERROR(ValidateFields(spec));
  const SkuSpec& s = *spec.sku;
  if (HasFabric(s)) {
    StatusOr<FatTreeShape> shape = PlanFatTree(spec);
    if (!shape.ok()) return shape.status();
  }
  return Status::Ok();
}

int ChooseTiers(const ClusterSpec& spec) {
  ClusterSpec two = spec;
  two.fabric.tiers = 2;
  // A bad field: 2, and the build that follows names the field.
  if (!ValidateFields(two).ok()) return 2;
  if (!HasFabric(*spec.sku) || PlanFatTree(two).ok()) return 2;
  return 3;
}

std::string ResolveFabric(ClusterSpec* spec) {
  const bool pick_tiers = spec->fabric.tiers == 0;
  if (pick_tiers) spec->fabric.tiers = ChooseTiers(*spec);
  if (!spec->fabric.default_radix || spec->sku == nullptr || !HasFabric(*spec->sku) ||
      PlanFatTree(*spec).ok()) {
    return "";
  }
  ClusterSpec wider = *spec;
  wider.fabric.tiers = 3;
  if (!pick_tiers && spec->fabric.tiers != 3) return "";  // 2 tiers were asked for
  const int from = spec->fabric.switch_radix;
  for (int radix = from * 2; radix <= kMaxSwitchRadix; radix *= 2) {
    wider.fabric.switch_radix = radix;
    if (PlanFatTree(wider).ok()) {
      spec->fabric = wider.fabric;
      return "radix " + std::to_string(from) + " cannot wire " + std::to_string(spec->vms) +
             " VMs in 3 tiers; assumed radix " + std::to_string(radix) + " (--radix)";
    }
  }
  return "";
}

StatusOr<Cluster> BuildCluster(const ClusterSpec& spec, const FabricParams& params) {
  ClusterBuilder b(spec, params);
  return b.Build();
}

ClusterBuilder::ClusterBuilder(const ClusterSpec& spec, const FabricParams& params)
    : spec_(spec), params_(params) {}

StatusOr<Cluster> ClusterBuilder::Build() {
  NDT_RETURN_IF_ERROR(ValidateClusterSpec(spec_));
  const SkuSpec& s = *spec_.sku;
  const GpuSpec& gs = *spec_.gpu;
  if (s.fabric == IntraVmFabric::kNvlinkCubeMesh && params_.cube_mesh_gpus != s.gpus) {
    return DataError(s, "the cube-mesh of data/fabric.yaml has " +
                            std::to_string(params_.cube_mesh_gpus) + " GPUs, the size " +
                            std::to_string(s.gpus));
  }
  c_.spec_ = spec_;
  g_ = UsedGpus(spec_);
  c_.gpus_per_vm_ = g_;
  nics_per_vm_ = FabricNicsPerVm(spec_);
  c_.cpus_per_vm_ = Cpus(s);
  const int vms = spec_.vms;
  const int ranks = vms * g_;
  c_.gpus_.reserve(ranks);
  c_.to_host_.reserve(ranks);
  c_.host_cpu_.reserve(ranks);
  c_.host_cpu_idx_.reserve(ranks);
  c_.pcie_sw_.reserve(ranks);
  c_.to_nic_.reserve(ranks);
  c_.nic_of_.reserve(ranks);
  c_.cpu_cpu_.assign(static_cast<size_t>(vms) * c_.cpus_per_vm_ * c_.cpus_per_vm_, -1);
  switch (s.fabric) {
    case IntraVmFabric::kPcie:
      c_.intra_ = Cluster::Intra::kPcie;
      c_.nvlink_domain_gpus_ = 1;
      break;
    case IntraVmFabric::kNvlinkCubeMesh:
      c_.intra_ = Cluster::Intra::kMesh;
      c_.mesh_n_ = s.gpus;
      c_.mesh_.assign(static_cast<size_t>(vms) * s.gpus * s.gpus, -1);
      c_.nvlink_domain_gpus_ = g_;
      break;
    case IntraVmFabric::kNvswitch:
    case IntraVmFabric::kNvl72: {
      c_.intra_ = Cluster::Intra::kSwitch;
      c_.nvsw_ = s.nvswitches;
      lanes_per_switch_ = SplitLanes(gs.nvlink_links, s.nvswitches);
      for (int l : lanes_per_switch_) {
        c_.nvsw_frac_.push_back(static_cast<double>(l) / gs.nvlink_links);
      }
      c_.nvsw_up_.assign(static_cast<size_t>(ranks) * s.nvswitches, -1);
      int domain_vms = s.fabric == IntraVmFabric::kNvl72 && spec_.nvlink_across_vms
                           ? std::min(vms, s.vms_per_nvlink_domain)
                           : 1;
      c_.nvlink_domain_gpus_ = domain_vms * g_;
      break;
    }
  }
  ReserveGraph();
  for (int vm = 0; vm < vms; ++vm) BuildVm(vm);
  if (nics_per_vm_ > 0) {
    NDT_ASSIGN_OR_RETURN(FatTreeShape shape, PlanFatTree(spec_));
    NDT_RETURN_IF_ERROR(BuildFabric(shape));
  }
  return std::move(c_);
}

// Sizes the node and link vectors once (growing them by doubling dominated build time at
// 16k GPUs).
void ClusterBuilder::ReserveGraph() {
  const SkuSpec& s = *spec_.sku;
  const size_t vms = spec_.vms;
  const size_t c = c_.cpus_per_vm_;
  const size_t nvsw = c_.nvsw_;
  const size_t pcie_sw = OnC2c(s, *spec_.gpu) ? 0 : s.pcie_switches;
  const size_t mesh = s.fabric == IntraVmFabric::kNvlinkCubeMesh ? params_.cube_mesh.size() : 0;
  size_t nodes = vms * (c + pcie_sw + g_ + nics_per_vm_ + nvsw);
  size_t duplex = vms * (c * (c - 1) / 2 + pcie_sw + g_ * (1 + nvsw) + 2 * nics_per_vm_ + mesh);
  if (nics_per_vm_ > 0) {
    StatusOr<FatTreeShape> t = PlanFatTree(spec_);
    if (t.ok()) {
      size_t up = t->up_ports;
      nodes += t->leaves + t->pods * up + up * t->cores_per_plane;
      duplex += t->leaves * up + t->pods * up * t->cores_per_plane;
    }
  }
  c_.nodes_.reserve(nodes);
  c_.links_.reserve(2 * duplex);
}

std::string ClusterBuilder::VmName(int vm, const char* what, int i) const {
  std::string n = "vm";
  n += std::to_string(vm);
  n += '/';
  n += what;
  n += std::to_string(i);
  return n;
}

void ClusterBuilder::Push(Cluster::Hops* h, LinkId l) {
  NDT_CHECK(h->n < static_cast<int>(h->l.size()), "route prefix longer than 4 links");
  h->l[h->n++] = l;
}

void ClusterBuilder::BuildVm(int vm) {
  BuildCpus(vm);
  BuildGpusAndPcie(vm);
  BuildNics(vm);
  switch (spec_.sku->fabric) {
    case IntraVmFabric::kPcie:
      break;
    case IntraVmFabric::kNvlinkCubeMesh:
      BuildCubeMesh(vm);
      break;
    case IntraVmFabric::kNvswitch:
      BuildVmNvswitches(vm);
      break;
    case IntraVmFabric::kNvl72:
      BuildRackNvswitches(vm);
      break;
  }
}

void ClusterBuilder::BuildCpus(int vm) {
  const int c = c_.cpus_per_vm_;
  vm_cpus_.clear();
  for (int i = 0; i < c; ++i)
    vm_cpus_.push_back(c_.AddNode(NodeKind::kCpu, vm, i, VmName(vm, "cpu", i)));
  for (int i = 0; i < c; ++i) {
    for (int j = i + 1; j < c; ++j) {
      LinkId l = c_.AddDuplex(vm_cpus_[i], vm_cpus_[j], LinkKind::kCpuCpu,
                              spec_.sku->cpu_interconnect_Bps, params_.cpu_cpu_latency_s);
      c_.cpu_cpu_[(static_cast<size_t>(vm) * c + i) * c + j] = l;
      c_.cpu_cpu_[(static_cast<size_t>(vm) * c + j) * c + i] = l + 1;
    }
  }
}

void ClusterBuilder::BuildGpusAndPcie(int vm) {
  const SkuSpec& s = *spec_.sku;
  const GpuSpec& gs = *spec_.gpu;
  const int c = c_.cpus_per_vm_;
  const bool c2c = OnC2c(s, gs);
  const int p = c2c ? 0 : s.pcie_switches;
  const int per_sw = p == 0                       ? 0
                     : s.gpus_per_pcie_switch > 0 ? s.gpus_per_pcie_switch
                                                  : (s.gpus + p - 1) / p;
  std::vector<NodeId> sw;
  std::vector<LinkId> sw_cpu;
  if (p > 0) {
    int used = std::min(p, (g_ + per_sw - 1) / per_sw);
    for (int k = 0; k < used; ++k) {
      sw.push_back(c_.AddNode(NodeKind::kPcieSwitch, vm, k, VmName(vm, "pcie", k)));
      sw_cpu.push_back(c_.AddDuplex(sw.back(), vm_cpus_[k * c / p], LinkKind::kPcie, gs.pcie_Bps,
                                    params_.pcie_latency_s));
    }
  }
  const int domain = s.fabric == IntraVmFabric::kNvl72 && spec_.nvlink_across_vms
                         ? vm / s.vms_per_nvlink_domain
                         : vm;
  for (int i = 0; i < g_; ++i) {
    NodeId gpu = c_.AddNode(NodeKind::kGpu, vm, i, VmName(vm, "gpu", i));
    c_.gpus_.push_back(GpuInfo{gpu, vm, i, domain, -1, 0});
    Cluster::Hops h;
    int cpu = i * c / s.gpus;
    NodeId pcie_sw = -1;
    if (c2c) {
      Push(&h, c_.AddDuplex(gpu, vm_cpus_[cpu], LinkKind::kC2c, gs.c2c_Bps, params_.c2c_latency_s));
    } else if (!sw.empty()) {
      int k = i / per_sw;
      pcie_sw = sw[k];
      cpu = k * c / p;
      Push(&h, c_.AddDuplex(gpu, sw[k], LinkKind::kPcie, gs.pcie_Bps, params_.pcie_latency_s));
      Push(&h, sw_cpu[k]);
    } else {
      Push(&h,
           c_.AddDuplex(gpu, vm_cpus_[cpu], LinkKind::kPcie, gs.pcie_Bps, params_.pcie_latency_s));
    }
    c_.to_host_.push_back(h);
    c_.host_cpu_.push_back(vm_cpus_[cpu]);
    c_.host_cpu_idx_.push_back(cpu);
    c_.pcie_sw_.push_back(pcie_sw);
  }
}

void ClusterBuilder::BuildNics(int vm) {
  const SkuSpec& s = *spec_.sku;
  const int first = vm * g_;
  if (nics_per_vm_ == 0) {
    for (int i = 0; i < g_; ++i) {
      c_.to_nic_.emplace_back();
      c_.nic_of_.push_back(-1);
    }
    return;
  }
  const double port = s.infiniband->port_Bps;
  // The NIC's host slot is assumed no slower than its port (data/fabric.yaml).
  const double host_bw = OnC2c(s, *spec_.gpu) ? port : std::max(port, spec_.gpu->pcie_Bps);
  const int c = c_.cpus_per_vm_;
  std::vector<LinkId> attach;  // per NIC: host -> NIC link
  std::vector<NodeId> nics;
  for (int n = 0; n < nics_per_vm_; ++n) {
    NodeId host;
    if (s.nic_affinity == NicAffinity::kPerVm) {
      host = vm_cpus_[0];  // NUMA0, as ndv2-topo.xml places the HCA
    } else {
      int r = first + n;
      host = c_.pcie_sw_[r] >= 0 ? c_.pcie_sw_[r] : c_.host_cpu_[r];
    }
    NodeId nic = c_.AddNode(NodeKind::kNic, vm, n, VmName(vm, "nic", n));
    nics.push_back(nic);
    attach.push_back(c_.AddDuplex(host, nic, LinkKind::kPcie, host_bw, params_.pcie_latency_s));
    vm_nics_.push_back(nic);
  }
  for (int i = 0; i < g_; ++i) {
    const int r = first + i;
    const int n = s.nic_affinity == NicAffinity::kPerVm ? i % nics_per_vm_ : i;
    Cluster::Hops h;
    const Cluster::Hops& host = c_.to_host_[r];
    if (s.nic_affinity == NicAffinity::kPerGpu && c_.pcie_sw_[r] >= 0) {
      Push(&h, host.l[0]);                  // GPUDirect RDMA: GPU -> PCIe switch -> NIC
      if (!s.infiniband->gpudirect_rdma) {  // staged in host memory: up to the CPU and back
        Push(&h, host.l[1]);
        Push(&h, host.l[1] ^ 1);
      }
    } else {
      for (int k = 0; k < host.n; ++k) Push(&h, host.l[k]);
      int from = c_.host_cpu_idx_[r];
      if (s.nic_affinity == NicAffinity::kPerVm && from != 0) {
        Push(&h, c_.cpu_cpu_[(static_cast<size_t>(vm) * c + from) * c + 0]);
      }
    }
    Push(&h, attach[n]);
    c_.to_nic_.push_back(h);
    c_.nic_of_.push_back(vm * nics_per_vm_ + n);
    c_.gpus_[r].nic = nics[n];
    c_.gpus_[r].rail = n;
  }
}

void ClusterBuilder::BuildCubeMesh(int vm) {
  const int n = c_.mesh_n_;
  const double link_bw = spec_.gpu->nvlink_link_Bps;
  for (const MeshPair& m : params_.cube_mesh) {
    if (m.a >= g_ || m.b >= g_) continue;
    NodeId a = c_.gpus_[vm * g_ + m.a].node;
    NodeId b = c_.gpus_[vm * g_ + m.b].node;
    LinkId l =
        c_.AddDuplex(a, b, LinkKind::kNvlink, m.lanes * link_bw, params_.nvlink_latency_s, m.lanes);
    c_.mesh_[(static_cast<size_t>(vm) * n + m.a) * n + m.b] = l;
    c_.mesh_[(static_cast<size_t>(vm) * n + m.b) * n + m.a] = l + 1;
  }
}

void ClusterBuilder::BuildVmNvswitches(int vm) {
  std::vector<NodeId> sw;
  for (int k = 0; k < c_.nvsw_; ++k)
    sw.push_back(c_.AddNode(NodeKind::kNvSwitch, vm, k, VmName(vm, "nvsw", k)));
  const double link_bw = spec_.gpu->nvlink_link_Bps;
  for (int i = 0; i < g_; ++i) {
    const int r = vm * g_ + i;
    for (int k = 0; k < c_.nvsw_; ++k) {
      int lanes = lanes_per_switch_[k];
      c_.nvsw_up_[static_cast<size_t>(r) * c_.nvsw_ + k] =
          c_.AddDuplex(c_.gpus_[r].node, sw[k], LinkKind::kNvlink, lanes * link_bw,
                       params_.nvlink_latency_s, lanes);
    }
  }
}

void ClusterBuilder::BuildRackNvswitches(int vm) {
  const int rack = vm / spec_.sku->vms_per_nvlink_domain;
  if (rack != rack_of_switches_) {
    rack_switches_.clear();
    for (int k = 0; k < c_.nvsw_; ++k) {
      std::string name = "rack" + std::to_string(rack) + "/nvsw" + std::to_string(k);
      rack_switches_.push_back(c_.AddNode(NodeKind::kNvSwitch, -1, k, std::move(name)));
    }
    rack_of_switches_ = rack;
  }
  const double link_bw = spec_.gpu->nvlink_link_Bps;
  for (int i = 0; i < g_; ++i) {
    const int r = vm * g_ + i;
    for (int k = 0; k < c_.nvsw_; ++k) {
      int lanes = lanes_per_switch_[k];
      c_.nvsw_up_[static_cast<size_t>(r) * c_.nvsw_ + k] =
          c_.AddDuplex(c_.gpus_[r].node, rack_switches_[k], LinkKind::kNvlink, lanes * link_bw,
                       params_.nvlink_latency_s, lanes);
    }
  }
}

}  // namespace ndt
