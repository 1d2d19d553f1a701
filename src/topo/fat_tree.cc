// File: topo/fat_tree.cc
// The scale-out InfiniBand fabric: a folded-Clos fat tree of `radix`-port switches.
// Leaf groups of `vms_per_leaf` VMs; rail-optimized: NIC r of each VM of a group goes to the
// group's rail-r leaf; otherwise all NICs of a VM go to the group's one leaf. A leaf has D NIC
// ports and U = ceil(D / oversubscription) uplinks carrying D x port / oversubscription in all.
// 2 tiers: U spines shared by all leaves (spine u takes uplink u of every leaf; at most radix
// leaves). 3 tiers: pods of radix/2 leaves with U spines each; spine u of every pod joins the
// K core switches of plane u with bundled ports, non-blocking above the leaf. Azure publishes
// none of these numbers (topology.md §6.1): all are FabricSpec parameters.
#include <algorithm>
#include <cmath>
#include <string>

#include "topo/cluster_builder.h"

namespace ndt {
namespace {
int CeilDiv(int a, int b) { return (a + b - 1) / b; }
std::string N(int i) { return std::to_string(i); }
}  // namespace

StatusOr<FatTreeShape> PlanFatTree(const ClusterSpec& spec) {
  const FabricSpec& f = spec.fabric;
  FatTreeShape t;
  t.tiers = f.tiers;
  t.nics_per_vm = FabricNicsPerVm(spec);
  NDT_CHECK(t.nics_per_vm > 0, "PlanFatTree on a size without InfiniBand");
  const bool rail = f.rail_optimized && t.nics_per_vm > 1;
  const int radix = f.switch_radix;
  const int half = radix / 2;
  t.rails = rail ? t.nics_per_vm : 1;
  t.vms_per_leaf = f.vms_per_leaf > 0 ? f.vms_per_leaf
                   : rail             ? half
                                      : std::max(1, half / t.nics_per_vm);
  t.down_ports = rail ? t.vms_per_leaf : t.vms_per_leaf * t.nics_per_vm;
  t.up_ports = std::max(1, static_cast<int>(std::ceil(t.down_ports / f.oversubscription - 1e-9)));
  if (t.down_ports + t.up_ports > radix) {
    return Status::InvalidInput(
        "a leaf of radix " + N(radix) + " cannot take " + N(t.down_ports) + " NIC ports and " +
        N(t.up_ports) + " uplinks (" + N(t.vms_per_leaf) +
        " VMs per leaf); lower --vms-per-leaf, raise --oversubscription or raise --radix");
  }
  t.groups = CeilDiv(spec.vms, t.vms_per_leaf);
  t.leaves = t.groups * t.rails;
  if (t.tiers == 2) {
    if (t.leaves > radix) {
      return Status::InvalidInput("a 2-tier fat tree of radix " + N(radix) + " wires at most " +
                                  N(radix) + " leaves, and " + N(spec.vms) + " VMs need " +
                                  N(t.leaves) + "; use --tiers 3 or a larger --radix");
    }
    t.groups_per_pod = t.groups;
    t.pods = 1;
    return t;
  }
  t.groups_per_pod = half / t.rails;
  if (t.groups_per_pod < 1) {
    return Status::InvalidInput("a pod of radix " + N(radix) + " holds " + N(half) +
                                " leaves, fewer than the " + N(t.rails) +
                                " rails of one leaf group; raise --radix");
  }
  t.pods = CeilDiv(t.groups, t.groups_per_pod);
  if (t.pods > radix) {
    return Status::InvalidInput("a 3-tier fat tree of radix " + N(radix) + " wires at most " +
                                N(radix) + " pods, and " + N(spec.vms) + " VMs need " + N(t.pods) +
                                "; raise --radix");
  }
  const int pod_leaves = t.groups_per_pod * t.rails;
  t.cores_per_plane = std::max(1, CeilDiv(pod_leaves * t.pods, radix));
  return t;
}

Status ClusterBuilder::BuildFabric(const FatTreeShape& t) {
  const FabricSpec& f = spec_.fabric;
  const double port = spec_.sku->infiniband->port_Bps;
  const int u_n = t.up_ports;
  const double up_bw = t.down_ports * port / f.oversubscription / u_n;
  // A packet crosses one switch more than it crosses switch-to-switch links (NIC -> leaf -> NIC:
  // 1 switch; leaf -> spine -> leaf: 3; across pods: 5). Each switch's traversal is charged half
  // to each IB link that ends at it, so the links of any route sum to one traversal per switch:
  // a NIC link carries the HCA's latency and half its leaf's, a switch-to-switch link two
  // halves. (Charging it to switch-to-switch links alone missed one switch per route.)
  const double sw_lat = params_.switch_latency_s;
  const double nic_lat = params_.nic_latency_s + sw_lat / 2;

  std::vector<NodeId> leaves(t.leaves);
  c_.leaf_pod_.resize(t.leaves);
  for (int g = 0; g < t.groups; ++g) {
    for (int r = 0; r < t.rails; ++r) {
      int l = g * t.rails + r;
      std::string name = t.rails > 1 ? "rail" + N(r) + "/leaf" + N(g) : "leaf" + N(g);
      leaves[l] = c_.AddNode(NodeKind::kLeaf, -1, l, std::move(name));
      c_.leaf_pod_[l] = g / t.groups_per_pod;
    }
  }
  const int nics = static_cast<int>(vm_nics_.size());
  c_.nic_up_.resize(nics);
  c_.nic_leaf_.resize(nics);
  for (int i = 0; i < nics; ++i) {
    int vm = i / nics_per_vm_;
    int n = i % nics_per_vm_;
    int leaf = (vm / t.vms_per_leaf) * t.rails + (t.rails > 1 ? n : 0);
    c_.nic_leaf_[i] = leaf;
    c_.nic_up_[i] = c_.AddDuplex(vm_nics_[i], leaves[leaf], LinkKind::kIb, port, nic_lat);
  }
  // A single leaf needs no spines, a single pod no cores: every route stays below them.
  const bool has_spines = t.leaves > 1;
  const bool has_cores = t.tiers == 3 && t.pods > 1;
  std::vector<NodeId> spines(has_spines ? static_cast<size_t>(t.pods) * u_n : 0);
  for (int p = 0; p < t.pods && has_spines; ++p) {
    for (int u = 0; u < u_n; ++u) {
      std::string name = t.tiers == 3 ? "pod" + N(p) + "/spine" + N(u) : "spine" + N(u);
      spines[p * u_n + u] = c_.AddNode(NodeKind::kSpine, -1, p * u_n + u, std::move(name));
    }
  }
  c_.leaf_up_.resize(has_spines ? static_cast<size_t>(t.leaves) * u_n : 0);
  for (int l = 0; l < t.leaves && has_spines; ++l) {
    int p = c_.leaf_pod_[l];
    for (int u = 0; u < u_n; ++u) {
      c_.leaf_up_[static_cast<size_t>(l) * u_n + u] =
          c_.AddDuplex(leaves[l], spines[p * u_n + u], LinkKind::kIb, up_bw, sw_lat);
    }
  }
  double spine_bw = 0;
  const int k_n = has_cores ? t.cores_per_plane : 0;
  if (has_cores) {
    const int pod_leaves = t.groups_per_pod * t.rails;
    spine_bw = pod_leaves * up_bw / k_n;
    const int lanes = std::max(1, pod_leaves / k_n);
    std::vector<NodeId> cores(static_cast<size_t>(u_n) * k_n);
    for (int u = 0; u < u_n; ++u) {
      for (int k = 0; k < k_n; ++k) {
        cores[u * k_n + k] =
            c_.AddNode(NodeKind::kCore, -1, u * k_n + k, "core" + N(u) + "." + N(k));
      }
    }
    c_.spine_up_.resize(static_cast<size_t>(t.pods) * u_n * k_n);
    for (int p = 0; p < t.pods; ++p) {
      for (int u = 0; u < u_n; ++u) {
        for (int k = 0; k < k_n; ++k) {
          c_.spine_up_[(static_cast<size_t>(p) * u_n + u) * k_n + k] = c_.AddDuplex(
              spines[p * u_n + u], cores[u * k_n + k], LinkKind::kIb, spine_bw, sw_lat, lanes);
        }
      }
    }
  }

  FabricLayout& L = c_.layout_;
  L.tiers = t.tiers;
  L.nics = nics;
  L.rails = t.rails;
  L.vms_per_leaf = t.vms_per_leaf;
  L.leaf_down_ports = t.down_ports;
  L.leaf_up_ports = u_n;
  L.leaf_groups = t.groups;
  L.leaves = t.leaves;
  L.pods = t.pods;
  L.spines = static_cast<int>(spines.size());
  L.cores_per_plane = k_n;
  L.cores = u_n * k_n;
  L.nic_Bps = port;
  L.leaf_up_link_Bps = up_bw;
  L.spine_up_link_Bps = spine_bw;
  double cut = nics * port;
  if (t.groups > 1) cut = std::min(cut, t.leaves * u_n * up_bw);
  if (t.pods > 1) cut = std::min(cut, static_cast<double>(t.pods) * u_n * k_n * spine_bw);
  L.bisection_Bps = cut / 2;
  return Status::Ok();
}

}  // namespace ndt
