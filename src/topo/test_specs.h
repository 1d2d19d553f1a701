// File: topo/test_specs.h
// Hand-built GpuSpec/SkuSpec for the topo tests, shaped like the catalog's entries
// (topology.md §1-§5) but independent of data/ so the tests check the builder, not the data.
// Test-only: included by *_test.cc.
#ifndef NDTWIN_TOPO_TEST_SPECS_H_
#define NDTWIN_TOPO_TEST_SPECS_H_

#include "core/units.h"
#include "hw/spec.h"
#include "topo/cluster.h"

namespace ndt::testing {

struct TestSize {
  GpuSpec gpu;
  SkuSpec sku;
  ClusterSpec Spec(int vms) const {
    ClusterSpec s;
    s.sku = &sku;
    s.gpu = &gpu;
    s.vms = vms;
    return s;
  }
};

inline InfinibandSpec Ib(int ports, double port_Bps, bool gdr) {
  InfinibandSpec ib;
  ib.ports = ports;
  ib.port_Bps = port_Bps;
  ib.gpudirect_rdma = gdr;
  return ib;
}

// ND40rs_v2: 8 V100 on the hybrid cube-mesh, 2 sockets, one EDR NIC on NUMA0, no GDR.
inline TestSize Ndv2() {
  TestSize t;
  t.gpu.name = "V100";
  t.gpu.nvlink_links = 6;
  t.gpu.nvlink_link_Bps = 25 * kGB;
  t.gpu.pcie_Bps = 16 * kGB;
  t.sku.name = "ND40rs_v2";
  t.sku.gpus = 8;
  t.sku.cpu_sockets = 2;
  t.sku.cpu_interconnect_Bps = 10 * kGB;
  t.sku.fabric = IntraVmFabric::kNvlinkCubeMesh;
  t.sku.nvlink_domain_gpus = 8;
  t.sku.infiniband = Ib(1, 100 * kGbit, false);
  t.sku.nic_affinity = NicAffinity::kPerVm;
  return t;
}

// ND96amsr_A100_v4: 6 NVSwitches, 4 PCIe switches x 2 GPUs + 2 NICs, 8 HDR NICs.
inline TestSize A100v4() {
  TestSize t;
  t.gpu.name = "A100";
  t.gpu.nvlink_links = 12;
  t.gpu.nvlink_link_Bps = 25 * kGB;
  t.gpu.pcie_Bps = 32 * kGB;
  t.sku.name = "ND96amsr_A100_v4";
  t.sku.gpus = 8;
  t.sku.cpu_sockets = 2;
  t.sku.cpu_interconnect_Bps = 16 * kGB;
  t.sku.fabric = IntraVmFabric::kNvswitch;
  t.sku.nvswitches = 6;
  t.sku.nvlink_domain_gpus = 8;
  t.sku.pcie_switches = 4;
  t.sku.gpus_per_pcie_switch = 2;
  t.sku.infiniband = Ib(8, 200 * kGbit, true);
  t.sku.nic_affinity = NicAffinity::kPerGpu;
  return t;
}

// ND96isr_H100_v5: 4 NVSwitches, 8 PCIe switches x (1 GPU + 1 NIC), 8 NDR NICs.
inline TestSize H100v5() {
  TestSize t = A100v4();
  t.gpu.name = "H100";
  t.gpu.nvlink_links = 18;
  t.gpu.pcie_Bps = 64 * kGB;
  t.sku.name = "ND96isr_H100_v5";
  t.sku.nvswitches = 4;
  t.sku.pcie_switches = 8;
  t.sku.gpus_per_pcie_switch = 1;
  t.sku.infiniband = Ib(8, 400 * kGbit, true);
  return t;
}

// ND128isr_GB300_v6: 4 GPUs + 2 Grace per VM, NVL72 rack of 18 VMs, 18 rack NVSwitch chips.
inline TestSize Gb300() {
  TestSize t;
  t.gpu.name = "GB300";
  t.gpu.nvlink_links = 18;
  t.gpu.nvlink_link_Bps = 50 * kGB;
  t.gpu.pcie_Bps = 64 * kGB;
  t.gpu.c2c = true;
  t.gpu.c2c_Bps = 450 * kGB;
  t.sku.name = "ND128isr_GB300_v6";
  t.sku.gpus = 4;
  t.sku.cpu_sockets = 2;
  t.sku.cpu_interconnect_Bps = 100 * kGB;
  t.sku.fabric = IntraVmFabric::kNvl72;
  t.sku.nvswitches = 18;
  t.sku.nvlink_domain_gpus = 72;
  t.sku.vms_per_nvlink_domain = 18;
  t.sku.infiniband = Ib(4, 800 * kGbit, true);
  t.sku.nic_affinity = NicAffinity::kPerGpuC2c;
  return t;
}

// ND24s: 4 P40 on PCIe, one socket, no InfiniBand.
inline TestSize Nd24s() {
  TestSize t;
  t.gpu.name = "P40";
  t.gpu.pcie_Bps = 16 * kGB;
  t.sku.name = "ND24s";
  t.sku.gpus = 4;
  t.sku.cpu_sockets = 2;
  t.sku.cpu_interconnect_Bps = 10 * kGB;
  t.sku.fabric = IntraVmFabric::kPcie;
  return t;
}

}  // namespace ndt::testing

#endif  // NDTWIN_TOPO_TEST_SPECS_H_
