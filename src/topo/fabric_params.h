// File: topo/fabric_params.h
// Assumptions the cluster graph needs that the VM catalog does not carry: per-link latencies
// (one way, seconds) and the NVLink2 hybrid cube-mesh link matrix of ND40rs_v2. Loaded from
// data/fabric.yaml (every value with a source or "assumption"; topology.md §2.2, §6.1).
#ifndef NDTWIN_TOPO_FABRIC_PARAMS_H_
#define NDTWIN_TOPO_FABRIC_PARAMS_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace ndt {

// One GPU pair of the cube-mesh and the NVLink lanes joining them.
struct MeshPair {
  int a = 0;
  int b = 0;
  int lanes = 1;
};

struct FabricParams {
  // One-way latency of one directed link of each kind, in seconds.
  double nvlink_latency_s = 0;
  double pcie_latency_s = 0;
  double c2c_latency_s = 0;
  double cpu_cpu_latency_s = 0;
  double nic_latency_s = 0;  // NIC <-> leaf (HCA processing and cable)
  // One IB switch traversal (port to port), paid once per switch a route crosses: the builder
  // charges half of it to each IB link ending at a switch (topo/fat_tree.cc).
  double switch_latency_s = 0;
  int cube_mesh_gpus = 0;
  std::vector<MeshPair> cube_mesh;  // a < b, each pair once
  std::string cube_mesh_source;
};

// Loads data_dir/fabric.yaml. Errors carry file:line.
StatusOr<FabricParams> LoadFabricParams(const std::string& data_dir);
// The same from YAML text (tests); `name` stands in for the file name in errors.
StatusOr<FabricParams> ParseFabricParams(const std::string& text, const std::string& name);

}  // namespace ndt

#endif  // NDTWIN_TOPO_FABRIC_PARAMS_H_
