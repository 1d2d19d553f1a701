// File: fleet/fleet.cc
// The fleet model of fleet.h: the cluster, checkpoint and placement plans, the failure model
// and its closed form; the Monte Carlo is simulate.cc.
#include "fleet/fleet.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ndt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string GBps(double Bps) {
  char b[64];
  std::snprintf(b, sizeof b, "%.4g GB/s", Bps / 1e9);
  return b;
}

}  // namespace

const char* FailureUnitName(FailureUnit u) {
  switch (u) {
    case FailureUnit::kGpu:
      return "gpu";
    case FailureUnit::kVm:
      return "vm";
    case FailureUnit::kNic:
      return "nic";
    case FailureUnit::kSwitch:
      return "switch";
  }
  return "?";
}

FleetCluster DescribeCluster(const Cluster& cluster) {
  FleetCluster c;
  c.sku = &cluster.sku();
  c.gpus = cluster.num_gpus();
  c.vms = cluster.num_vms();
  c.gpus_per_vm = cluster.gpus_per_vm();
  const FabricLayout& f = cluster.fabric_layout();
  c.nics = f.nics;
  c.switches = f.leaves + f.spines + f.cores;
  c.nic_Bps = c.gpus > 0 && f.nics > 0 ? f.nic_Bps * f.nics / c.gpus : 0;
  // The GPU's own link toward its host: PCIe (to its switch or root) or NVLink-C2C to Grace.
  const NodeId g0 = cluster.gpu(0).node;
  for (LinkId l : cluster.out_links(g0)) {
    const Link& link = cluster.link(l);
    if (link.kind == LinkKind::kPcie || link.kind == LinkKind::kC2c) {
      c.host_link_Bps = std::max(c.host_link_Bps, link.bw_Bps);
    }
  }
  return c;
}

bool ParseCheckpointTarget(const std::string& s, CheckpointTarget* out) {
  const std::pair<const char*, CheckpointTarget> names[] = {
      {"nvme", CheckpointTarget::kNvme},
      {"managed-disk", CheckpointTarget::kManagedDisk},
      {"blob", CheckpointTarget::kBlob},
      {"lustre", CheckpointTarget::kLustre},
      {"memory", CheckpointTarget::kMemory}};
  for (const auto& [n, t] : names) {
    if (s == n) {
      *out = t;
      return true;
    }
  }
  return false;
}

const char* CheckpointTargetName(CheckpointTarget t) {
  switch (t) {
    case CheckpointTarget::kNvme:
      return "nvme";
    case CheckpointTarget::kManagedDisk:
      return "managed-disk";
    case CheckpointTarget::kBlob:
      return "blob";
    case CheckpointTarget::kLustre:
      return "lustre";
    case CheckpointTarget::kMemory:
      return "memory";
  }
  return "?";
}

double CheckpointBytesPerGpu(const MemoryBreakdown& m, const Strategy& s) {
  if (s.zero == 0) return m.weights_bytes + m.optimizer_bytes;  // the first replica writes
  // Deduplicated over the ranks holding a copy: DP x CP, an expert's DP x CP / EP.
  const double replicas = s.weight_replicas();
  const double expert = m.expert_weights_bytes;
  const double weights =
      s.zero >= 3 ? m.weights_bytes
                  : (m.weights_bytes - expert) / replicas + expert / std::max(1.0, replicas / s.ep);
  return weights + m.optimizer_bytes;
}

double CheckpointTotalBytes(double bytes_per_gpu, const Strategy& s, int gpus) {
  const double writers = s.zero == 0 ? static_cast<double>(gpus) / s.weight_replicas() : gpus;
  return bytes_per_gpu * writers;
}

StatusOr<CheckpointPlan> PlanCheckpoint(const FleetData& data, const FleetCluster& c,
                                        CheckpointTarget target, bool async, double bytes_per_gpu,
                                        double total_bytes, std::optional<double> service_Bps) {
  const SkuSpec& sku = *c.sku;
  const StorageData& st = data.storage;
  CheckpointPlan p;
  p.target = target;
  p.async = async;
  p.bytes_per_gpu = bytes_per_gpu;
  p.total_bytes = total_bytes;
  const double per_vm_bytes = bytes_per_gpu * c.gpus_per_vm;
  if (c.host_link_Bps <= 0) {
    return Status::Internal(sku.name + ": the cluster graph gives the GPU no host link");
  }
  p.d2h_s = bytes_per_gpu / c.host_link_Bps;
  const std::string name = CheckpointTargetName(target);
  double write_Bps = 0, read_Bps = 0;  // per VM, the bottleneck of its path
  switch (target) {
    case CheckpointTarget::kNvme: {
      if (sku.temp_storage_bytes <= 0) {
        return Status::InvalidInput("--checkpoint-to nvme: " + sku.name +
                                    " has no temp storage; use blob, lustre or memory");
      }
      if (2 * per_vm_bytes > sku.temp_storage_bytes) {
        return Status::InvalidInput("--checkpoint-to nvme: two checkpoints of " +
                                    std::to_string(static_cast<long long>(per_vm_bytes / 1e9)) +
                                    " GB per VM exceed " + sku.name +
                                    "'s temp storage; use blob or lustre, or more GPUs");
      }
      int disks = st.nvme_default_disks;
      for (const auto& [n, d] : st.nvme_disks) {
        if (n == sku.name) disks = d;
      }
      write_Bps = disks * st.nvme_write_per_disk_Bps;
      read_Bps = disks * st.nvme_read_per_disk_Bps;
      p.write_limit = std::to_string(disks) + " local NVMe disk(s) per VM, " + GBps(write_Bps);
      p.load_limit = std::to_string(disks) + " local NVMe disk(s) per VM, " + GBps(read_Bps);
      p.warnings.push_back(
          "--checkpoint-to nvme: a VM that fails takes its disk's shard with it; modelled as "
          "readable after the restart (e.g. copied to a peer or to blob in the background)");
      break;
    }
    case CheckpointTarget::kManagedDisk: {
      if (!sku.max_uncached_disk_Bps.has_value()) {
        return Status::InvalidInput("--checkpoint-to managed-disk: " + sku.name +
                                    " publishes no max uncached disk throughput (data/vms); use "
                                    "nvme, blob, lustre or memory");
      }
      write_Bps = read_Bps = *sku.max_uncached_disk_Bps;
      p.write_limit = p.load_limit = "max uncached disk throughput " + GBps(write_Bps) + " per VM";
      break;
    }
    case CheckpointTarget::kBlob:
    case CheckpointTarget::kLustre: {
      const bool blob = target == CheckpointTarget::kBlob;
      double svc_w = blob ? st.blob_write_Bps : st.lustre_write_Bps;
      double svc_r = blob ? st.blob_read_Bps : st.lustre_read_Bps;
      if (service_Bps.has_value()) svc_w = svc_r = *service_Bps;
      const std::string svc = blob ? "the storage account's" : "the Lustre file system's";
      double vm_Bps = kInf;
      if (sku.max_network_Bps.has_value()) {
        vm_Bps = *sku.max_network_Bps;
      } else {
        p.warnings.push_back("--checkpoint-to " + name + ": " + sku.name +
                             " publishes no max network bandwidth; only the service limits");
      }
      // Each VM gets its network's rate or its share of the service, whichever is smaller.
      const double share_w = svc_w / c.vms, share_r = svc_r / c.vms;
      write_Bps = std::min(vm_Bps, share_w);
      read_Bps = std::min(vm_Bps, share_r);
      p.write_limit = vm_Bps <= share_w ? "max network bandwidth " + GBps(vm_Bps) + " per VM"
                                        : svc + " throughput " + GBps(svc_w);
      p.load_limit = vm_Bps <= share_r ? "max network bandwidth " + GBps(vm_Bps) + " per VM"
                                       : svc + " throughput " + GBps(svc_r);
      break;
    }
    case CheckpointTarget::kMemory: {
      const double usable = sku.memory_bytes * st.memory_usable_frac;
      if (2 * per_vm_bytes > usable) {
        return Status::InvalidInput("--checkpoint-to memory: two copies (own and a peer's) of " +
                                    std::to_string(static_cast<long long>(per_vm_bytes / 1e9)) +
                                    " GB per VM exceed the usable host memory of " + sku.name +
                                    "; use nvme, blob or lustre, or more GPUs");
      }
      if (c.nic_Bps <= 0) {
        return Status::InvalidInput("--checkpoint-to memory: " + sku.name +
                                    " has no scale-out network to reach a peer's memory");
      }
      write_Bps = read_Bps = c.nic_Bps * c.gpus_per_vm;
      p.write_limit = p.load_limit = "scale-out NICs to a peer VM, " + GBps(write_Bps) + " per VM";
      break;
    }
  }
  // Sync: copy to the host, then out; async: only the copy blocks, the rest streams behind.
  p.write_s = p.d2h_s + per_vm_bytes / write_Bps;
  p.load_s = per_vm_bytes / read_Bps + p.d2h_s;
  p.block_s = async ? p.d2h_s : p.write_s;
  return p;
}

StatusOr<Placement> PlanPlacement(const PlacementData& d, const SkuSpec& sku, int vms, int spares,
                                  bool strict) {
  Placement p;
  const bool rack = sku.vms_per_nvlink_domain > 1;
  if (rack) p.racks = (vms + spares + d.rack_vms - 1) / d.rack_vms;
  const bool ib = sku.infiniband.has_value() || rack;
  const int total = vms + spares;
  if (!ib || total <= 1) return p;
  p.scale_sets = (total + d.scale_set_max_vms - 1) / d.scale_set_max_vms;
  if (vms <= d.scale_set_max_vms && total > d.scale_set_max_vms) {
    return Status::InvalidInput(
        "--spares " + std::to_string(spares) + ": " + std::to_string(vms) + " + " +
        std::to_string(spares) + " VMs exceed one scale set (" +
        std::to_string(d.scale_set_max_vms) +
        " VMs; azure_limits.csv, setup-infiniband.md), and a spare in another scale set cannot "
        "join the InfiniBand domain; use --spares " +
        std::to_string(d.scale_set_max_vms - vms) + " or fewer");
  }
  if (total > d.scale_set_max_vms) {
    const std::string msg =
        std::to_string(total) + " VMs exceed one scale set's InfiniBand reach (" +
        std::to_string(d.scale_set_default_vms) + " VMs by default, " +
        std::to_string(d.scale_set_max_vms) +
        " on request; azure_limits.csv, learn.microsoft.com setup-infiniband): RDMA does not "
        "cross scale sets";
    if (strict) {
      return Status::Infeasible("--strict-placement: " + msg + "; use at most " +
                                std::to_string(d.scale_set_max_vms) + " VMs (spares included)");
    }
    p.azure_arranged = true;
    p.warnings.push_back(msg + "; modelled as one cluster Azure arranges (as for Eagle)");
  } else if (total > d.scale_set_default_vms) {
    p.warnings.push_back(std::to_string(total) + " VMs exceed a scale set's default " +
                         std::to_string(d.scale_set_default_vms) +
                         " VMs (azure_limits.csv): ask support to raise it to " +
                         std::to_string(d.scale_set_max_vms));
  }
  if (rack && spares > 0) {
    p.warnings.push_back(
        "NVL72: a spare VM outside the failed VM's rack cannot join its NVLink domain; spares "
        "are modelled as if they could (keep spare VMs inside the job's racks)");
  }
  return p;
}

std::string DescribePlacement(const Placement& p, const PlacementData& limits) {
  std::string s = std::to_string(p.scale_sets) + (p.scale_sets == 1 ? " scale set" : " scale sets");
  if (p.racks > 0) {
    s += ", " + std::to_string(p.racks) + (p.racks == 1 ? " NVL72 rack" : " NVL72 racks") + " of " +
         std::to_string(limits.rack_vms) + " VMs";
  }
  if (p.azure_arranged) {
    return s + "; beyond one scale set's InfiniBand (" + std::to_string(limits.scale_set_max_vms) +
           " VMs at most: data/placement.yaml): an Azure-arranged cluster";
  }
  return s + "; InfiniBand reaches within one scale set (" +
         std::to_string(limits.scale_set_default_vms) + " VMs by default, " +
         std::to_string(limits.scale_set_max_vms) + " on request: data/placement.yaml)";
}

FleetModel BuildFleetModel(const ReliabilityData& rel, const FleetCluster& c,
                           const CheckpointPlan& ckpt, double failure_scale, int spares,
                           bool unoptimized_init, double step_s) {
  FleetModel m;
  m.gpus = c.gpus;
  m.vms = c.vms;
  m.spares = spares;
  for (const FailureClass& fc : rel.classes) {
    double units = 0;
    switch (fc.unit) {
      case FailureUnit::kGpu:
        units = c.gpus;
        break;
      case FailureUnit::kVm:
        units = c.vms;
        break;
      case FailureUnit::kNic:
        units = c.nics;
        break;
      case FailureUnit::kSwitch:
        units = c.switches;
        break;
    }
    ClassRate r{fc.name, fc.planned, fc.needs_new_vm,
                fc.rate_per_unit_hour * units * failure_scale / 3600.0};
    (r.planned ? m.planned_per_s : m.unexpected_per_s) += r.per_s;
    m.classes.push_back(r);
  }
  m.detection_s = rel.detection_s;
  m.spare_swap_s = rel.spare_swap_s;
  m.new_vm_s = rel.new_vm_s;
  m.init_s = (unoptimized_init ? rel.init_per_gpu_unoptimized_s : rel.init_per_gpu_s) * c.gpus;
  m.load_s = ckpt.load_s;
  m.write_s = ckpt.write_s;
  m.block_s = ckpt.block_s;
  m.step_s = step_s;
  return m;
}

namespace {

double ReplaceS(const FleetModel& m) { return m.spares > 0 ? m.spare_swap_s : m.new_vm_s; }

}  // namespace

double MeanUnexpectedRestartS(const FleetModel& m) {
  double vm_share = 0;
  for (const ClassRate& c : m.classes) {
    if (!c.planned && c.needs_new_vm && m.unexpected_per_s > 0) {
      vm_share += c.per_s / m.unexpected_per_s;
    }
  }
  return m.detection_s + vm_share * ReplaceS(m) + m.init_s + m.load_s;
}

double MeanPlannedRestartS(const FleetModel& m) { return ReplaceS(m) + m.init_s + m.load_s; }

ClosedForm EvaluateClosedForm(const FleetModel& m, double tau) {
  ClosedForm f;
  const double lu = m.unexpected_per_s, lp = m.planned_per_s, lt = lu + lp;
  f.mtbi_s = lu > 0 ? 1 / lu : kInf;
  const double b = m.block_s, c = tau + b;
  // A checkpoint becomes durable write_s after it starts: async adds write_s - b of exposure.
  const double extra = std::max(0.0, m.write_s - b);
  // Detection, init and load start over when an interruption hits them (Daly's R); a
  // replacement VM already ordered keeps coming, so its wait w is paid once per failure.
  const double r = m.detection_s + m.init_s + m.load_s;
  const double w = MeanUnexpectedRestartS(m) - r;
  double cycle = c;
  if (lu > 0) cycle = std::exp(lt * r + lu * extra) * std::expm1(lu * c) * (1 / lu + w);
  const double planned_share = 1 - lp * (MeanPlannedRestartS(m) + m.write_s);
  f.goodput = std::max(0.0, tau / cycle * planned_share);
  if (lu > 0) {
    const double mt = f.mtbi_s;
    f.young_interval_s = std::sqrt(2 * b * mt);
    const double x = b / (2 * mt);
    f.daly_interval_s =
        b < 2 * mt ? std::sqrt(2 * b * mt) * (1 + std::sqrt(x) / 3 + x / 9) - b : mt;
  } else {
    f.young_interval_s = f.daly_interval_s = kInf;
  }
  return f;
}

}  // namespace ndt
