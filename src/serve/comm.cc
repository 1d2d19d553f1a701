#include "serve/comm.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <vector>

#include "coll/collective.h"

namespace ndt {
namespace {

// Fallback when coll/ reports an error: `bytes` from GPU a to GPU b over the route NCCL would
// use, each path carrying its fraction at its bottleneck bandwidth after its summed latency.
double RouteTime(const Cluster& c, int a, int b, double bytes) {
  if (a == b || bytes <= 0) return 0;
  double worst = 0;
  for (const Path& p : c.GpuRoute(a, b)) {
    double bw = std::numeric_limits<double>::infinity(), lat = 0;
    for (LinkId l : p.links) {
      bw = std::min(bw, c.link(l).bw_Bps);
      lat += c.link(l).latency_s;
    }
    worst = std::max(worst, lat + bytes * p.fraction / bw);
  }
  return worst;
}

// Memo of collective times by (op, first rank, group size, bytes). Shared by the copies of the
// returned std::functions (hence shared_ptr); single-threaded use, as IterationCostModel's.
using Key = std::tuple<int, int, int, double>;
using Memo = std::map<Key, double>;

double Collective(const Cluster& c, const NcclCalibrationSet& nccl, Memo* memo, CollOp op,
                  const std::vector<int>& group, double bytes) {
  Key key{static_cast<int>(op), group.front(), static_cast<int>(group.size()), bytes};
  auto it = memo->find(key);
  if (it != memo->end()) return it->second;
  double t = 0;
  CollOptions o;
  o.calibration = &nccl;
  o.host_hidden = true;  // the engine's CUDA graphs keep the host off the critical path
  StatusOr<CollResult> r = TimeCollective(c, op, bytes, group, o);
  if (r.ok()) {
    t = r->time_s;
  } else if (op == CollOp::kSendRecv) {
    t = RouteTime(c, group[0], group[1], bytes);
  } else {  // ring all-reduce: 2(n-1) steps of bytes/n between neighbours
    int n = static_cast<int>(group.size());
    t = 2.0 * (n - 1) * RouteTime(c, group[0], group[1], bytes / n);
  }
  memo->emplace(key, t);
  return t;
}

}  // namespace

CommFns MakeCommFns(const Cluster& cluster, const NcclCalibrationSet& nccl) {
  CommFns f;
  const Cluster* c = &cluster;
  const NcclCalibrationSet* cal = &nccl;
  auto memo = std::make_shared<Memo>();
  f.tp_allreduce_s = [c, cal, memo](int tp, double bytes) {
    if (tp <= 1 || tp > c->num_gpus() || bytes <= 0) return 0.0;
    std::vector<int> group(tp);
    std::iota(group.begin(), group.end(), 0);
    return Collective(*c, *cal, memo.get(), CollOp::kAllReduce, group, bytes);
  };
  // Stage s's last GPU sends to stage s+1's first: GPUs s*tp - 1 -> s*tp, one after another.
  f.pp_sends_s = [c, cal, memo](int tp, int pp, double bytes) {
    double t = 0;
    for (int s = 1; s < pp && s * tp < c->num_gpus(); ++s) {
      t += Collective(*c, *cal, memo.get(), CollOp::kSendRecv, {s * tp - 1, s * tp}, bytes);
    }
    return t;
  };
  f.kv_transfer_s = [c, cal, memo](double bytes) {
    if (c->num_gpus() < 2 || bytes <= 0) return 0.0;
    return Collective(*c, *cal, memo.get(), CollOp::kSendRecv, {0, c->num_gpus() - 1}, bytes);
  };
  return f;
}

}  // namespace ndt
