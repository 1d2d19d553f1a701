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
  o.calibration = &nccl_;
  o.fidelity = fidelity_;
  o.host_hidden = true;                          // the training loop's host runs ahead of the GPU
  if (group.size() < 2 || bytes <= 0) return 0;  // nothing moves
  StatusOr<CollResult> r = TimeCollective(cluster_, op, bytes, group, o);
  // A group the lowering built is valid and every op has an algorithm on every cluster: a
  // failure here is our bug, never a reason to price the call with another model.
  NDT_CHECK(r.ok(), "pricing a training collective: " + r.status().message());
  return r->time_s;
}

double ClusterCosts::P2pTime(double bytes, int src, int dst) const {
  const int pair[2] = {src, dst};
  CollOptions o;
  o.calibration = &nccl_;
  o.fidelity = fidelity_;
  o.host_hidden = true;  // the training loop's host runs ahead of the GPU
  if (src == dst || bytes <= 0) return 0;
  StatusOr<CollResult> r = TimeCollective(cluster_, CollOp::kSendRecv, bytes, pair, o);
  NDT_CHECK(r.ok(), "pricing a pipeline send: " + r.status().message());
  return r->time_s;
}

}  // namespace ndt
