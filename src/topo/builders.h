// File: topo/builders.h
// Builds the cluster graph of N VMs of one Azure size: the VM interior (PCIe-only, NVLink2
// hybrid cube-mesh, NVSwitch, NVL72 rack) from SkuSpec/GpuSpec numbers, and the scale-out
// InfiniBand fat tree (2 or 3 tiers, rail-optimized or not, oversubscribed at the leaf) from
// FabricSpec. Bandwidths are per direction in B/s; latencies come from data/fabric.yaml.
// Sources: topology.md §2-§6 (reference/topology.md).
#ifndef NDTWIN_TOPO_BUILDERS_H_
#define NDTWIN_TOPO_BUILDERS_H_

#include <optional>
#include <string>

#include "core/status.h"
#include "topo/cluster.h"
#include "topo/fabric_params.h"

namespace ndt {

// Bounds of the fabric what-ifs. Radix: switches are built port by port, and the largest IB
// switches have 144 (Quantum-X800); 1024 leaves room and keeps the graph in memory.
// Oversubscription: leaf down:up bandwidth; deployed fat trees run 1:1 to about 4:1, and past
// 64:1 a leaf's uplinks carry less than one NIC port's worth per 64 NICs, not a fabric anyone
// builds for GPUs (the flow model then spends its time on absurd rates).
inline constexpr int kMaxSwitchRadix = 1024;
inline constexpr double kMaxOversubscription = 64;
// GPUs one cluster graph holds (VMs x GPUs used per VM): the largest clusters built are ~100k
// GPUs, and the graph's memory and every model's work grow with it.
inline constexpr int64_t kMaxClusterGpus = 131072;

// Checks a spec before building: vms >= 1, gpus_per_vm in 0..sku.gpus, at most
// kMaxClusterGpus GPUs, tiers 2 or 3,
// radix in 4..kMaxSwitchRadix, oversubscription in 1..kMaxOversubscription, and that the
// size's data is complete enough to build. Errors are kInvalidInput with one line naming the
// flag and a fix.
Status ValidateClusterSpec(const ClusterSpec& spec);

// Builds the graph with the latencies of `params`. Fails (kInvalidInput) on a bad spec or a
// fabric the radix cannot wire (e.g. more leaves than a 2-tier spine has ports).
StatusOr<Cluster> BuildCluster(const ClusterSpec& spec, const FabricParams& params);

// The smallest tier count (2, else 3) whose fat tree the radix can wire for this spec; the CLI
// uses it when --tiers is not given.
int ChooseTiers(const ClusterSpec& spec);

// Resolves what the spec leaves open: tiers 0 becomes ChooseTiers; with fabric.default_radix, a
// radix that cannot wire the VMs even in 3 tiers is doubled (at most kMaxSwitchRadix) until one
// can, so a default never decides that a size cannot be built (a 3-tier radix-64 rail-optimized
// tree of 8-NIC VMs holds 8,192 VMs). Returns that assumption in one line ("radix 64 cannot wire
// 16384 VMs in 3 tiers; assumed radix 128 (--radix)"), or "" when the default held.
std::string ResolveFabric(ClusterSpec* spec);

}  // namespace ndt

#endif  // NDTWIN_TOPO_BUILDERS_H_
