// File: topo/cluster.h
// The cluster graph: nodes (GPU, NVSwitch, PCIe switch, CPU, NIC, leaf/spine/core switch) and
// directed links (bandwidth per direction in B/s, latency in s), plus routes between GPUs.
// A physical full-duplex link is two directed Links, one per direction. Nodes and links are
// referred to by typed ids (indices), never pointers. Built once by BuildCluster
// (topo/builders.h), then read-only: threads may share a const Cluster.
#ifndef NDTWIN_TOPO_CLUSTER_H_
#define NDTWIN_TOPO_CLUSTER_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/spec.h"

namespace ndt {

using NodeId = int32_t;
using LinkId = int32_t;

enum class NodeKind { kGpu, kNvSwitch, kPcieSwitch, kCpu, kNic, kLeaf, kSpine, kCore };
const char* NodeKindName(NodeKind k);

enum class LinkKind {
  kNvlink,  // GPU <-> GPU or GPU <-> NVSwitch
  kPcie,    // GPU/NIC <-> PCIe switch <-> CPU
  kC2c,     // Grace <-> Blackwell NVLink-C2C
  kCpuCpu,  // socket-to-socket (UPI, Infinity Fabric, Grace coherent link)
  kIb,      // NIC <-> leaf and switch <-> switch InfiniBand
};
const char* LinkKindName(LinkKind k);

struct Node {
  NodeId id = 0;
  NodeKind kind = NodeKind::kGpu;
  int vm = -1;       // VM index, -1 for fabric switches and rack-level NVSwitches
  int index = 0;     // index among nodes of this kind in its VM (or in the fabric tier)
  std::string name;  // "vm0/gpu3", "leaf2", "rack0/nvsw5"
};

struct Link {
  LinkId id = 0;
  NodeId src = 0;
  NodeId dst = 0;
  LinkKind kind = LinkKind::kNvlink;
  double bw_Bps = 0;     // per direction
  double latency_s = 0;  // one-way
  int lanes = 1;         // physical links bundled (e.g. 2 NVLinks to one NVSwitch)
};

// One way through the graph, carrying `fraction` of a transfer. A Route spreads a transfer over
// one or more paths whose fractions sum to 1 (NVSwitch planes, ECMP when spreading is chosen).
struct Path {
  std::vector<LinkId> links;
  double fraction = 1.0;
};
using Route = std::vector<Path>;

// Scale-out fabric parameters. Azure does not publish these; the defaults are assumptions
// documented in data/fabric.yaml and README (topology.md §6.1).
struct FabricSpec {
  int tiers = 2;                  // 2 (leaf-spine) or 3 (leaf-spine-core)
  int switch_radix = 64;          // ports per switch (Quantum-2 NDR: 64)
  int vms_per_leaf = 0;           // 0 = radix/2 down ports per rail leaf (non-blocking default)
  double oversubscription = 1.0;  // leaf down:up bandwidth ratio (1 = non-blocking)
  bool rail_optimized = true;     // NIC i of every VM goes to rail i's leaves
  bool ecmp_spread = false;       // false: one hashed path per flow; true: spread over all
  // switch_radix is a default nobody asked for: ResolveFabric may raise it to wire the VMs.
  bool default_radix = false;
};

struct ClusterSpec {
  const SkuSpec* sku = nullptr;
  const GpuSpec* gpu = nullptr;
  int vms = 1;
  int gpus_per_vm = 0;  // 0 = all GPUs of the size; fewer uses the first G of each VM
  FabricSpec fabric;
  // false: each VM is its own NVLink domain even where the size's NVLink spans VMs (an NVL72
  // rack), so GPUs of different VMs reach each other only over InfiniBand; the rack's
  // NVSwitches stay and carry a VM's own traffic. What NCCL sees on a rack when it cannot use
  // multi-node NVLink (MNNVL): releases before 2.20.3, and 2.20.x for a communicator that spans
  // racks (coll/nccl_model.h MnnvlFor). No effect on other fabrics.
  bool nvlink_across_vms = true;
};

// Per-GPU facts the network and collective layers need without walking the graph.
struct GpuInfo {
  NodeId node = 0;
  int vm = 0;
  int local = 0;    // index within the VM
  int domain = 0;   // NVLink domain (VM for 8-GPU VMs, rack for NVL72)
  NodeId nic = -1;  // the NIC this GPU uses for scale-out (-1 if none)
  int rail = 0;     // NIC index within the VM
};

// The shape of the scale-out fat tree as built (all zero when the size has no InfiniBand).
struct FabricLayout {
  int tiers = 0;
  int nics = 0;             // NICs attached to the fabric
  int rails = 0;            // 1 unless rail-optimized with several NICs per VM
  int vms_per_leaf = 0;     // VMs in one leaf group
  int leaf_down_ports = 0;  // NIC ports per leaf (design, full leaf)
  int leaf_up_ports = 0;    // uplinks per leaf = spines per pod
  int leaf_groups = 0;      // groups of vms_per_leaf VMs
  int leaves = 0;
  int pods = 0;  // 1 for 2 tiers
  int spines = 0;
  int cores_per_plane = 0;  // 3 tiers: core switches behind spine u of every pod
  int cores = 0;
  double nic_Bps = 0;            // NIC port rate per direction
  double leaf_up_link_Bps = 0;   // one leaf -> spine link
  double spine_up_link_Bps = 0;  // one spine -> core link (bundled ports)
  // Capacity of a balanced cut: min(all NIC ports, all leaf uplinks if more than one leaf
  // group, all spine uplinks if more than one pod) / 2, per direction.
  double bisection_Bps = 0;
};

class Cluster {
 public:
  const ClusterSpec& spec() const { return spec_; }
  const SkuSpec& sku() const { return *spec_.sku; }
  const GpuSpec& gpu_spec() const { return *spec_.gpu; }
  int num_vms() const { return spec_.vms; }
  int gpus_per_vm() const { return gpus_per_vm_; }
  int num_gpus() const { return static_cast<int>(gpus_.size()); }
  int nvlink_domain_gpus() const { return nvlink_domain_gpus_; }

  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Node& node(NodeId id) const { return nodes_[id]; }
  const Link& link(LinkId id) const { return links_[id]; }
  const GpuInfo& gpu(int rank) const { return gpus_[rank]; }
  // Directed links leaving a node, in id order. A scan of every link (O(links)): for summaries
  // and tests, not for inner loops (no model reads it; the graph keeps no adjacency lists, whose
  // one small allocation per node made up much of a large cluster's build time).
  std::vector<LinkId> out_links(NodeId n) const;

  // The route NCCL would use between two GPUs (global ranks): NVLink/NVSwitch inside an NVLink
  // domain, otherwise GPU -> own NIC (GPUDirect RDMA where the size has it) -> fabric -> peer
  // NIC -> GPU. REQUIRES: 0 <= a, b < num_gpus(), a != b.
  Route GpuRoute(int a, int b) const;
  // Route between two GPUs forced over the scale-out network (for inter-VM algorithm steps).
  Route NetRoute(int a, int b) const;

  const FabricLayout& fabric_layout() const { return layout_; }

  // Construction, for builders and tests.
  NodeId AddNode(NodeKind kind, int vm, int index, std::string name);
  // Adds both directions; returns the id of the a->b direction (b->a is id + 1).
  LinkId AddDuplex(NodeId a, NodeId b, LinkKind kind, double bw_Bps, double latency_s,
                   int lanes = 1);

 private:
  friend class ClusterBuilder;
  ClusterSpec spec_;
  int gpus_per_vm_ = 0;
  int nvlink_domain_gpus_ = 1;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<GpuInfo> gpus_;
  FabricLayout layout_;

  // Structural tables filled by ClusterBuilder (topo/builders.cc), read by GpuRoute/NetRoute
  // (topo/route.cc). Directed links come in pairs (AddDuplex): the reverse of link l is l ^ 1.
  struct Hops {
    std::array<LinkId, 4> l{};
    int n = 0;
  };
  std::vector<Hops> to_host_;      // per rank: GPU -> (PCIe switch | C2C) -> its CPU
  std::vector<NodeId> host_cpu_;   // per rank: that CPU
  std::vector<int> host_cpu_idx_;  // per rank: CPU index within the VM
  std::vector<NodeId> pcie_sw_;    // per rank: the GPU's PCIe switch, -1 if none
  std::vector<Hops> to_nic_;       // per rank: GPU -> its NIC (empty if no NIC)
  std::vector<int> nic_of_;        // per rank: global NIC index, -1 if none
  int cpus_per_vm_ = 0;
  std::vector<LinkId> cpu_cpu_;  // (vm * C + i) * C + j: CPU i -> CPU j, -1 if none
  enum class Intra { kPcie, kMesh, kSwitch };
  Intra intra_ = Intra::kPcie;
  int nvsw_ = 0;                   // NVSwitch chips per domain
  std::vector<LinkId> nvsw_up_;    // rank * nvsw_ + s: GPU -> switch s
  std::vector<double> nvsw_frac_;  // per switch: its lanes / all of a GPU's lanes
  int mesh_n_ = 0;
  std::vector<LinkId> mesh_;      // (vm * n + i) * n + j: direct NVLink i -> j, -1 if none
  std::vector<LinkId> nic_up_;    // per global NIC: NIC -> leaf
  std::vector<int> nic_leaf_;     // per global NIC: leaf index
  std::vector<int> leaf_pod_;     // per leaf
  std::vector<LinkId> leaf_up_;   // leaf * U + u: leaf -> spine u of its pod
  std::vector<LinkId> spine_up_;  // ((pod * U) + u) * K + k: spine -> core k of plane u

  void AppendFabric(int a, int b, int choice_u, int choice_k, std::vector<LinkId>* out) const;
  void AppendHost(int a, int b, std::vector<LinkId>* out) const;
};

}  // namespace ndt

#endif  // NDTWIN_TOPO_CLUSTER_H_
