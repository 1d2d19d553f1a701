#include "serve/comm.h"

#include <algorithm>
#include <limits>

namespace ndt {
namespace {

// Time to move `bytes` from GPU a to GPU b over the route NCCL would use: each path carries its
// fraction at its bottleneck bandwidth after its summed latency; the slowest path finishes last.
double TransferTime(const Cluster& c, int a, int b, double bytes) {
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

}  // namespace

CommFns MakeCommFns(const Cluster& cluster) {
  CommFns f;
  const Cluster* c = &cluster;
  // Ring all-reduce over GPUs 0..tp-1: 2(tp-1) steps of bytes/tp between neighbours
  // (NCCL ring; Patarasuk & Yuan 2009).
  f.tp_allreduce_s = [c](int tp, double bytes) {
    if (tp <= 1 || tp > c->num_gpus()) return 0.0;
    double step = TransferTime(*c, 0, 1, bytes / tp);
    return 2.0 * (tp - 1) * step;
  };
  // Stage s's last GPU sends to stage s+1's first: GPUs s*tp - 1 -> s*tp, one after another.
  f.pp_sends_s = [c](int tp, int pp, double bytes) {
    double t = 0;
    for (int s = 1; s < pp && s * tp < c->num_gpus(); ++s) {
      t += TransferTime(*c, s * tp - 1, s * tp, bytes);
    }
    return t;
  };
  f.kv_transfer_s = [c](double bytes) {
    return c->num_gpus() > 1 ? TransferTime(*c, 0, c->num_gpus() - 1, bytes) : 0.0;
  };
  return f;
}

}  // namespace ndt
