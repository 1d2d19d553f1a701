// File: topo/cluster_builder.h
// Internal to topo: the builder that fills a Cluster's nodes, links and routing tables
// (builders.cc: the VM interior; fat_tree.cc: the scale-out fabric). Not for other modules.
#ifndef NDTWIN_TOPO_CLUSTER_BUILDER_H_
#define NDTWIN_TOPO_CLUSTER_BUILDER_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "topo/cluster.h"
#include "topo/fabric_params.h"

namespace ndt {

// The fat tree's dimensions, computed before any node exists.
struct FatTreeShape {
  int tiers = 2;
  int rails = 1;  // leaves per leaf group
  int nics_per_vm = 0;
  int vms_per_leaf = 0;  // VMs per leaf group
  int down_ports = 0;    // NIC ports per leaf
  int up_ports = 0;      // uplinks per leaf (= spines per pod)
  int groups = 0;        // leaf groups
  int leaves = 0;
  int groups_per_pod = 0;
  int pods = 1;
  int cores_per_plane = 0;  // 3 tiers only
};

// NICs per VM that join the fabric: one per used GPU for per-GPU sizes, the ports for per-VM
// sizes, 0 without InfiniBand.
int FabricNicsPerVm(const ClusterSpec& spec);
// Plans the fat tree for `spec.vms` VMs, or says why the radix cannot wire it.
StatusOr<FatTreeShape> PlanFatTree(const ClusterSpec& spec);

class ClusterBuilder {
 public:
  ClusterBuilder(const ClusterSpec& spec, const FabricParams& params);
  StatusOr<Cluster> Build();

 private:
  void ReserveGraph();
  void BuildVm(int vm);
  void BuildCpus(int vm);
  void BuildGpusAndPcie(int vm);
  void BuildNics(int vm);
  void BuildCubeMesh(int vm);
  void BuildVmNvswitches(int vm);
  void BuildRackNvswitches(int vm);
  Status BuildFabric(const FatTreeShape& shape);  // fat_tree.cc
  void Push(Cluster::Hops* h, LinkId l);
  std::string VmName(int vm, const char* what, int i) const;

  const ClusterSpec& spec_;
  const FabricParams& params_;
  Cluster c_;
  int g_ = 0;  // GPUs per VM used
  int nics_per_vm_ = 0;
  std::vector<NodeId> vm_cpus_;  // CPU nodes of the VM being built
  std::vector<NodeId> vm_nics_;  // NIC nodes, all VMs, global NIC index
  std::vector<int> lanes_per_switch_;
  std::vector<NodeId> rack_switches_;  // NVL72: switches of the current rack
  int rack_of_switches_ = -1;
};

}  // namespace ndt

#endif  // NDTWIN_TOPO_CLUSTER_BUILDER_H_
