#include "hpc/micro.h"

#include <numeric>

#include "coll/collective.h"

namespace ndt {
namespace {

// The link kind a route between two GPUs takes: inside the NVLink domain or over the fabric.
std::string PathName(const Cluster& c, int a, int b) {
  const SkuSpec& sku = c.sku();
  if (c.gpu(a).domain == c.gpu(b).domain) {
    if (sku.fabric == IntraVmFabric::kPcie) return "PCIe";
    return c.gpu(a).vm == c.gpu(b).vm ? "NVLink" : "NVLink (NVL72 rack)";
  }
  return sku.infiniband ? "InfiniBand" : "Ethernet";
}

}  // namespace

StreamResult RunStream(const Cluster& cluster, const ComputeCalibration& compute) {
  const GpuSpec& gpu = cluster.gpu_spec();
  const ArchCalibration& cal = compute.For(gpu.arch);
  StreamResult s;
  s.peak_gpu_Bps = gpu.memory_Bps;
  s.fraction = cal.hbm_fraction;
  s.gpu_Bps = gpu.memory_Bps * cal.hbm_fraction;
  s.vm_Bps = s.gpu_Bps * cluster.gpus_per_vm();
  s.cluster_Bps = s.gpu_Bps * cluster.num_gpus();
  return s;
}

StatusOr<std::vector<OsuPair>> RunOsuPairs(const Cluster& cluster, const NcclCalibrationSet& nccl,
                                           double bytes) {
  CollOptions co;
  co.calibration = &nccl;
  std::vector<std::pair<std::string, std::pair<int, int>>> pairs;
  if (cluster.gpus_per_vm() >= 2) pairs.push_back({"intra-vm", {0, 1}});
  if (cluster.num_vms() >= 2) pairs.push_back({"inter-vm", {0, cluster.gpus_per_vm()}});
  // A rack-scale NVLink domain (NVL72): also a pair in two racks, over InfiniBand.
  const int domain = cluster.nvlink_domain_gpus();
  if (domain > cluster.gpus_per_vm() && cluster.num_gpus() > domain)
    pairs.push_back({"inter-rack", {0, domain}});
  if (pairs.empty())
    return Status::InvalidInput(
        "OSU point-to-point needs 2 GPUs; use --vms 2 or a size with "
        "several GPUs");
  std::vector<OsuPair> out;
  for (const auto& [scope, ab] : pairs) {
    const int grp[2] = {ab.first, ab.second};
    NDT_ASSIGN_OR_RETURN(CollResult r, TimeCollective(cluster, CollOp::kSendRecv, bytes, grp, co));
    OsuPair p;
    p.scope = scope;
    p.path = PathName(cluster, ab.first, ab.second);
    p.from = ab.first;
    p.to = ab.second;
    p.bytes = bytes;
    p.time_s = r.time_s;
    p.bandwidth_Bps = bytes / r.time_s;
    out.push_back(p);
  }
  return out;
}

StatusOr<OsuAllreduce> RunOsuAllreduce(const Cluster& cluster, const NcclCalibrationSet& nccl,
                                       double bytes) {
  if (cluster.num_gpus() < 2)
    return Status::InvalidInput("osu-allreduce needs at least 2 GPUs; use more VMs");
  CollOptions co;
  co.calibration = &nccl;
  std::vector<int> group(cluster.num_gpus());
  std::iota(group.begin(), group.end(), 0);
  NDT_ASSIGN_OR_RETURN(CollResult r, TimeCollective(cluster, CollOp::kAllReduce, bytes, group, co));
  OsuAllreduce a;
  a.bytes = bytes;
  a.time_s = r.time_s;
  a.busbw_Bps = r.busbw_Bps;
  a.algorithm = AlgoName(r.algo);
  a.protocol = ProtoName(r.proto);
  return a;
}

}  // namespace ndt
