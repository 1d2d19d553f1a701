#include "serve/comm.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>
#include <vector>

#include "coll/collective.h"
#include "topo/summary.h"

namespace ndt {
namespace {

// Memo of collective times by (op, first rank, last rank, group size, bytes). Shared by the copies
// of the returned std::functions (hence shared_ptr); single-threaded use, as IterationCostModel's.
using Key = std::tuple<int, int, int, int, double>;
using Memo = std::map<Key, double>;

double Collective(const Cluster& c, const NcclCalibrationSet& nccl, Memo* memo, CollOp op,
                  const std::vector<int>& group, double bytes) {
  Key key{static_cast<int>(op), group.front(), group.back(), static_cast<int>(group.size()), bytes};
  auto it = memo->find(key);
  if (it != memo->end()) return it->second;
  CollOptions o;
  o.calibration = &nccl;
  o.host_hidden = true;  // the engine's CUDA graphs keep the host off the critical path
  StatusOr<CollResult> r = TimeCollective(c, op, bytes, group, o);
  // The groups built below are valid on every cluster: a refusal is our bug, never a reason to
  // price the call with another model.
  NDT_CHECK(r.ok(), "pricing a serving collective: " + r.status().message());
  const double t = r->time_s;
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
  // Stage s's last GPU sends to stage s+1's first, one boundary after another; a boundary whose
  // replicas hop differently (NVLink in one, InfiniBand in another) waits for the slowest.
  f.pp_sends_s = [c, cal, memo](const std::vector<std::vector<std::pair<int, int>>>& hops,
                                double bytes) {
    double t = 0;
    const int n = c->num_gpus();
    for (const auto& boundary : hops) {
      double slowest = 0;
      for (const auto& [src, dst] : boundary) {
        if (src == dst || src < 0 || dst < 0 || src >= n || dst >= n) continue;
        slowest = std::max(slowest,
                           Collective(*c, *cal, memo.get(), CollOp::kSendRecv, {src, dst}, bytes));
      }
      t += slowest;
    }
    return t;
  };
  // The custom all-reduce kernels' path: GPU 0 -> GPU 1 (inside the NVLink domain of a VM or
  // rack), at the achieved fraction of SM-driven NVLink copies that coll/ applies to that pair
  // (SmCopyEfficiency: the same choice TimeCollective makes through CalibrationFor).
  if (c->num_gpus() >= 2) {
    const Route route = c->GpuRoute(0, 1);
    double bw = 0, lat = 0;
    bool nvlink = !route.empty();
    for (const Path& p : route) {
      for (LinkId l : p.links) nvlink = nvlink && c->link(l).kind == LinkKind::kNvlink;
      // A route splits a transfer over paths (NVSwitch planes): it ends when the slowest ends.
      const double path_bw = PathBottleneckBps(*c, p) / p.fraction;
      bw = bw == 0 ? path_bw : std::min(bw, path_bw);
      lat = std::max(lat, PathLatency(*c, p));
    }
    // TensorRT-LLM runs its own kernels only over NVLink (allreduceOp.cpp ifFallbackToNCCL).
    if (!nvlink) bw = 0;
    const int pair[2] = {0, 1};
    f.tp_path.bw_Bps = bw * SmCopyEfficiency(*c, pair, *cal);
    f.tp_path.latency_s = lat;
  }
  auto first_n = [c, cal, memo](CollOp op) {
    return [c, cal, memo, op](int n, double bytes) {
      if (n <= 1 || n > c->num_gpus() || bytes <= 0) return 0.0;
      std::vector<int> group(n);
      std::iota(group.begin(), group.end(), 0);
      return Collective(*c, *cal, memo.get(), op, group, bytes);
    };
  };
  // Attention-DP's MoE dispatch and combine. TensorRT-LLM passes every rank's token count
  // (fused_moe_cutlass.py: allgather(..., sizes=all_rank_num_tokens), reducescatter(...,
  // sizes=...)), and with sizes its ops are not NCCL's all-gather and reduce-scatter but one
  // ncclGroupStart/End of an ncclBroadcast (allgatherOp.cpp) or an ncclReduce
  // (reducescatterOp.cpp) rooted at each rank in turn. NCCL aggregates a group's collectives of
  // one function and type (2.27 enqueue.cc ncclPrepareTasks: tasks within 4x of each other's
  // size are summed before getAlgoInfo picks algorithm and protocol; Broadcast and Reduce have
  // the Ring only) and spreads their traffic over its channels in one kernel
  // (scheduleCollTasksToPlan): the group costs one Broadcast (Reduce) of all ranks' bytes.
  f.moe_dispatch_s = first_n(CollOp::kBroadcast);
  f.moe_combine_s = first_n(CollOp::kReduce);
  f.kv_transfer_s = [c, cal, memo](int src, int dst, double bytes) {
    const int n = c->num_gpus();
    if (bytes <= 0 || src == dst || src < 0 || dst < 0 || src >= n || dst >= n) return 0.0;
    return Collective(*c, *cal, memo.get(), CollOp::kSendRecv, {src, dst}, bytes);
  };
  return f;
}

}  // namespace ndt
