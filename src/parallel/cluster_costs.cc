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

ClusterCosts::ClusterCosts(const Cluster& cluster, const ComputeCalibration& cal,
                           const NcclCalibrationSet& nccl, Dtype precision, Fidelity fidelity)
    : cluster_(cluster), cal_(cal), nccl_(nccl), precision_(precision), fidelity_(fidelity) {}

double ClusterCosts::OpsTime(const std::vector<Op>& ops) const {
  return ndt::OpsTime(cluster_.gpu_spec(), ops, cal_);
}

double ClusterCosts::PeakFlops() const {
  return cluster_.gpu_spec().PeakFlops(EffectivePrecision(cluster_.gpu_spec(), precision_));
}

int ClusterCosts::Sms() const {
  const int sms = cluster_.gpu_spec().sms;
  return sms > 0 ? sms : cal_.For(cluster_.gpu_spec().arch).sms_if_unknown;
}

CommPriced ClusterCosts::Footprint(const CollResult& r, CollOp op, double bytes, int n) const {
  CommPriced p;
  p.time_s = r.time_s;
  constexpr double kCap = 0.95;  // a share is below 1: compute keeps some SMs and bandwidth
  const int sms = Sms();
  // The tuner's ring and tree channels run twice over at run time (connect.cc duplicates them
  // once more after the search: data/nccl.yaml simple_ring.channel_duplication); NVLS runs its
  // own CTA count, a send/recv the channels reported.
  const bool duplicated =
      r.algo != Algo::kNvls && r.algo != Algo::kNvlsTree && r.algo != Algo::kP2p;
  const double channels =
      static_cast<double>(r.channels) * (duplicated ? nccl_.tuning.simple_channel_duplication : 1);
  if (sms > 0 && r.channels > 0)
    p.sm_share =
        std::min(kCap, channels * nccl_.tuning.ctas_per_channel / static_cast<double>(sms));
  const GpuSpec& gpu = cluster_.gpu_spec();
  const double hbm_Bps = gpu.memory_Bps * cal_.For(gpu.arch).hbm_fraction;
  if (hbm_Bps > 0 && r.time_s > 0)
    p.hbm_share = std::min(kCap, 3.0 * BusBwFactor(op, n) * bytes / r.time_s / hbm_Bps);
  return p;
}

namespace {

CollOp CollOpOf(CommKind kind) {
  switch (kind) {
    case CommKind::kAllReduce:
      return CollOp::kAllReduce;
    case CommKind::kReduceScatter:
      return CollOp::kReduceScatter;
    case CommKind::kAllGather:
      return CollOp::kAllGather;
    case CommKind::kAllToAll:
      return CollOp::kAllToAll;
  }
  return CollOp::kAllReduce;
}

}  // namespace

double ClusterCosts::CommTime(CommKind kind, double bytes, std::span<const int> group) const {
  return CommPricedOf(kind, bytes, group).time_s;
}

CommPriced ClusterCosts::CommPricedOf(CommKind kind, double bytes,
                                      std::span<const int> group) const {
  if (group.size() < 2 || bytes <= 0) return {};  // nothing moves
  const CollOp op = CollOpOf(kind);
  CollOptions o;
  o.calibration = &nccl_;
  o.fidelity = fidelity_;
  o.host_hidden = true;  // the training loop's host runs ahead of the GPU
  StatusOr<CollResult> r = TimeCollective(cluster_, op, bytes, group, o);
  // A group the lowering built is valid and every op has an algorithm on every cluster: a
  // failure here is our bug, never a reason to price the call with another model.
  NDT_CHECK(r.ok(), "pricing a training collective: " + r.status().message());
  return Footprint(*r, op, bytes, static_cast<int>(group.size()));
}

double ClusterCosts::P2pTime(double bytes, int src, int dst) const {
  return P2pPricedOf(bytes, src, dst).time_s;
}

CommPriced ClusterCosts::P2pPricedOf(double bytes, int src, int dst) const {
  const int pair[2] = {src, dst};
  CollOptions o;
  o.calibration = &nccl_;
  o.fidelity = fidelity_;
  o.host_hidden = true;  // the training loop's host runs ahead of the GPU
  if (src == dst || bytes <= 0) return {};
  StatusOr<CollResult> r = TimeCollective(cluster_, CollOp::kSendRecv, bytes, pair, o);
  NDT_CHECK(r.ok(), "pricing a pipeline send: " + r.status().message());
  return Footprint(*r, CollOp::kSendRecv, bytes, 2);
}

}  // namespace ndt
