// File: parallel/cluster_costs.cc
// Ring-model communication on the Cluster's links and calibrated operator times; see header.
#include "parallel/cluster_costs.h"

#include <algorithm>
#include <map>

namespace ndt {

bool ParseFidelity(const std::string& s, Fidelity* out) {
  if (s == "analytical") {
    *out = Fidelity::kAnalytical;
  } else if (s == "flow") {
    *out = Fidelity::kFlow;
  } else {
    return false;
  }
  return true;
}

ClusterCosts::ClusterCosts(const Cluster& cluster, const ComputeCalibration& cal, Dtype precision,
                           Fidelity fidelity)
    : cluster_(cluster), cal_(cal), precision_(precision), fidelity_(fidelity) {
  const GpuSpec& gpu = cluster.gpu_spec();
  nvlink_Bps_ = gpu.nvlink_Bps() > 0 ? gpu.nvlink_Bps() : gpu.pcie_Bps;
  const SkuSpec& sku = cluster.sku();
  if (sku.infiniband && sku.gpus > 0) {
    nic_Bps_ = sku.infiniband->ports * sku.infiniband->port_Bps / sku.gpus;
  }
  // Latencies: sum of one route's links (GPU 0 to GPU 1, and to the first GPU of VM 1).
  auto route_latency = [&](const Route& r) {
    double lat = 0;
    if (!r.empty()) {
      for (LinkId l : r.front().links) lat += cluster.link(l).latency_s;
    }
    return lat;
  };
  if (cluster.num_gpus() > 1) nvlink_lat_s_ = route_latency(cluster.GpuRoute(0, 1));
  if (cluster.num_vms() > 1 && cluster.gpus_per_vm() > 0) {
    net_lat_s_ = route_latency(cluster.GpuRoute(0, cluster.gpus_per_vm()));
  }
}

double ClusterCosts::OpsTime(const std::vector<Op>& ops) const {
  return ndt::OpsTime(cluster_.gpu_spec(), ops, cal_);
}

double ClusterCosts::PeakFlops() const {
  return cluster_.gpu_spec().PeakFlops(EffectivePrecision(cluster_.gpu_spec(), precision_));
}

double ClusterCosts::CommTime(CommKind kind, double bytes, std::span<const int> group) const {
  if (group.size() < 2 || bytes <= 0) return 0;
  CollOp op = CollOp::kAllReduce;
  switch (kind) {
    case CommKind::kAllReduce:
      op = CollOp::kAllReduce;
      break;
    case CommKind::kReduceScatter:
      op = CollOp::kReduceScatter;
      break;
    case CommKind::kAllGather:
      op = CollOp::kAllGather;
      break;
    case CommKind::kAllToAll:
      op = CollOp::kAllToAll;
      break;
  }
  CollOptions o;
  o.fidelity = fidelity_;
  o.host_hidden = true;  // the training loop's host runs ahead of the GPU
  StatusOr<CollResult> r = TimeCollective(cluster_, op, bytes, group, o);
  if (r.ok()) return r->time_s;
  return RingTime(kind, bytes, group);
}

double ClusterCosts::RingTime(CommKind kind, double bytes, std::span<const int> group) const {
  const double n = static_cast<double>(group.size());
  if (group.size() < 2 || bytes <= 0) return 0;
  std::map<int, int> per_vm;
  for (int r : group) ++per_vm[cluster_.gpu(r).domain];
  const bool one_domain = per_vm.size() == 1;
  int k = group.size();
  for (const auto& [vm, c] : per_vm) k = std::min(k, c);
  const double bus =
      one_domain ? nvlink_Bps_ : std::min(nvlink_Bps_ > 0 ? nvlink_Bps_ : 1e300, k * nic_Bps_);
  const double lat = one_domain ? nvlink_lat_s_ : net_lat_s_;
  switch (kind) {
    case CommKind::kAllReduce:
      return 2 * (n - 1) / n * bytes / bus + 2 * (n - 1) * lat;
    case CommKind::kReduceScatter:
    case CommKind::kAllGather:
      return (n - 1) / n * bytes / bus + (n - 1) * lat;
    case CommKind::kAllToAll: {
      // bytes is this rank's send buffer: (n - kv)/n of it leaves the VM on its NIC.
      const double local = one_domain ? n : static_cast<double>(k);
      const double inter = one_domain ? 0 : bytes * (n - local) / n / nic_Bps_;
      const double intra = bytes * (local - 1) / n / nvlink_Bps_;
      return std::max(inter, intra) + (one_domain ? nvlink_lat_s_ : net_lat_s_);
    }
  }
  return 0;
}

double ClusterCosts::P2pTime(double bytes, int src, int dst) const {
  const int pair[2] = {src, dst};
  CollOptions o;
  o.fidelity = fidelity_;
  o.host_hidden = true;  // the training loop's host runs ahead of the GPU
  StatusOr<CollResult> r = TimeCollective(cluster_, CollOp::kSendRecv, bytes, pair, o);
  if (r.ok()) return r->time_s;
  const bool same = cluster_.gpu(src).domain == cluster_.gpu(dst).domain;
  return same ? bytes / nvlink_Bps_ + nvlink_lat_s_ : bytes / nic_Bps_ + net_lat_s_;
}

}  // namespace ndt
