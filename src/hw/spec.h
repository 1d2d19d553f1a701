// File: hw/spec.h
// Plain structs for the hardware catalog: one GpuSpec per GPU model, one SkuSpec per Azure VM
// size, as loaded from data/gpus/*.yaml and data/vms/*.yaml (hw/catalog.h). Every quantity is
// SI with its unit in the name (bytes, B/s per direction, FLOP/s, W); `sources` maps a field
// name to where its value came from. Built once by the loader, then read-only.
#ifndef NDTWIN_HW_SPEC_H_
#define NDTWIN_HW_SPEC_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ndt {

// Numeric precisions for tensor math and storage.
enum class Precision { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kFp4, kInt8 };
// Bytes per element of a precision (fp4 = 0.5).
double BytesPer(Precision p);
const char* PrecisionName(Precision p);
// Parses "bf16", "fp8", ... (case-insensitive). Returns false if unknown.
bool ParsePrecision(const std::string& s, Precision* out);

struct GpuSpec {
  std::string name;                  // "A100-SXM4-80GB"
  std::vector<std::string> aliases;  // "A100 80GB"
  std::string arch;                  // pascal, volta, ampere, hopper, blackwell, blackwell_ultra
  int sm_version = 0;                // compute capability x10: 61, 70, 80, 90, 100, 103
  int sms = 0;                       // streaming multiprocessors (0 if unknown)
  // Per SM per clock: 16-bit dense tensor-core FLOPs and special-function-unit exponentials
  // (MUFU.EX2); 0 if unknown. Hardware facts shown by `sku show`; fused attention is not priced
  // from them (GB300's is measured against GB200's: compute.yaml fused_attention_ratio).
  int tensor_16bit_flops_per_clk_per_sm = 0;
  int sfu_exp_per_clk_per_sm = 0;
  std::string form_factor;  // "SXM4", "PCIe", "Superchip"

  double memory_bytes = 0;  // HBM/GDDR capacity
  double memory_Bps = 0;    // peak memory bandwidth
  std::string memory_type;  // "HBM2e"
  double l2_bytes = 0;      // 0 if unknown

  // Dense peak tensor/vector rates in FLOP/s; 0 where the GPU has no such path.
  double fp64_flops = 0;
  double fp64_tensor_flops = 0;
  double fp32_flops = 0;
  double tf32_flops = 0;
  double fp16_flops = 0;  // fp16 tensor (mixed precision)
  double bf16_flops = 0;
  double fp8_flops = 0;
  double fp4_flops = 0;
  double int8_ops = 0;

  int nvlink_gen = 0;          // 0 = no NVLink
  int nvlink_links = 0;        // NVLink links per GPU
  double nvlink_link_Bps = 0;  // per link, per direction
  int pcie_gen = 0;
  double pcie_Bps = 0;  // host link per direction (x16), or NVLink-C2C where noted
  bool c2c = false;     // attached to a Grace CPU by NVLink-C2C
  double c2c_Bps = 0;   // per direction
  double tdp_w = 0;

  std::map<std::string, std::string> sources;  // field -> source
  std::vector<std::string> notes;

  // Peak dense rate for a precision (0 if unsupported).
  double PeakFlops(Precision p) const;
  // Total NVLink bandwidth per direction.
  double nvlink_Bps() const { return nvlink_links * nvlink_link_Bps; }
};

// What sits between the GPUs of one VM.
enum class IntraVmFabric {
  kPcie,            // no NVLink: GPUs talk over PCIe through the host (ND, NG)
  kNvlinkCubeMesh,  // NVLink2 hybrid cube-mesh (ND40rs_v2)
  kNvswitch,        // NVLink through NVSwitches inside the VM (A100 v4, H100/H200 v5)
  kNvl72,           // rack-scale NVLink domain across VMs (GB200/GB300 NVL72)
};
const char* IntraVmFabricName(IntraVmFabric f);

// How GPUs reach the scale-out NICs.
enum class NicAffinity {
  kNone,       // no scale-out network
  kPerGpu,     // one NIC per GPU on the GPU's PCIe switch (v4, v5), GPUDirect RDMA
  kPerVm,      // NICs shared by all GPUs of the VM, reached through the host (NDv2, ND24rs)
  kPerGpuC2c,  // one NIC per GPU reached through Grace over C2C + PCIe (GB200/GB300)
};
const char* NicAffinityName(NicAffinity a);

struct InfinibandSpec {
  int ports = 0;           // per VM
  double port_Bps = 0;     // per port, per direction
  std::string generation;  // "EDR", "HDR", "NDR", "XDR", "" if not stated
  bool gpudirect_rdma = false;
};

struct PriceSpec {
  double usd_per_hour = 0;  // pay-as-you-go, Linux
  std::optional<double> spot_usd_per_hour;
  std::string region;
  std::string source;
  std::string os;    // "Linux"
  std::string note;  // caveats of the source row, "" if none
};

// One disagreement between sources, and what the catalog keeps.
struct Conflict {
  std::string field;
  std::string kept;        // the value the catalog uses
  std::string other;       // what the other source says
  std::string resolution;  // why
  std::string sources;
};

struct SkuSpec {
  std::string name;                  // "Standard_ND96amsr_A100_v4"
  std::vector<std::string> aliases;  // "ND96amsr_A100_v4", "NDm A100 v4"
  std::string series;                // "NDm A100 v4"
  std::string description;

  // The seeds' table columns.
  int vcpus = 0;
  double memory_bytes = 0;        // host memory (GiB in the tables)
  double temp_storage_bytes = 0;  // temp SSD (GiB)
  int gpus = 0;                   // per VM
  std::string gpu;                // GpuSpec name
  double gpu_memory_bytes = 0;    // per GPU, as the size's table states it
  std::optional<int> max_data_disks;
  std::optional<int> max_uncached_disk_iops;
  std::optional<double> max_uncached_disk_Bps;
  std::optional<double> max_network_Bps;  // front-end Ethernet
  std::optional<int> max_nics;

  // Host.
  std::string cpu;
  int cpu_sockets = 0;
  int numa_nodes = 0;
  double cpu_interconnect_Bps = 0;  // socket-to-socket per direction (0 = single socket)

  // Interconnect.
  IntraVmFabric fabric = IntraVmFabric::kPcie;
  int nvswitches = 0;             // NVSwitch chips per VM (per rack for NVL72)
  int nvlink_domain_gpus = 1;     // GPUs in one NVLink domain (8, or 72 for NVL72)
  int vms_per_nvlink_domain = 1;  // 18 for NVL72
  std::optional<InfinibandSpec> infiniband;
  NicAffinity nic_affinity = NicAffinity::kNone;
  int pcie_switches = 0;  // per VM, as Azure's NCCL topology file shows them
  int gpus_per_pcie_switch = 0;

  // Feature flags as the seeds list them: key -> "Supported", "Not Supported", "Generation 2"...
  std::map<std::string, std::string> features;
  std::vector<std::string> supported_os;  // OS and kernel versions

  std::optional<PriceSpec> price;
  std::vector<PriceSpec> other_prices;  // other regions, in file order
  std::string price_note;               // why there is no price, when there is none
  std::vector<std::string> sources;
  std::vector<Conflict> conflicts;
  std::vector<std::string> notes;

  std::map<std::string, std::string> field_sources;  // field -> source, as for GpuSpec
  std::string file;                                  // the YAML file it was loaded from
};

}  // namespace ndt

#endif  // NDTWIN_HW_SPEC_H_
