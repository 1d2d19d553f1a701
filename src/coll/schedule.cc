// File: coll/schedule.cc
// Ring and all-to-all schedules and their two evaluators (see schedule.h).
#include "coll/schedule.h"

#include <algorithm>
#include <limits>
#include <map>

namespace ndt {
namespace {

double RouteAlone(const Cluster& c, const Route& r, double bytes) {
  double t = 0;
  for (const Path& p : r) {
    double bw = std::numeric_limits<double>::infinity(), lat = 0;
    for (LinkId l : p.links) {
      bw = std::min(bw, c.link(l).bw_Bps);
      lat += c.link(l).latency_s;
    }
    t = std::max(t, lat + bytes * p.fraction / bw);
  }
  return t;
}

double RingSteps(CollOp op, int n) {
  return op == CollOp::kAllReduce ? 2.0 * (n - 1) : n - 1.0;
}

}  // namespace

Schedule RingSchedule(const Cluster& c, CollOp op, double bytes, std::span<const int> group) {
  const int n = static_cast<int>(group.size());
  Step step;
  step.count = static_cast<int>(RingSteps(op, n));
  // Per-rank chunk: all_reduce/reduce_scatter/all_gather move bytes/n per step (nccl-tests
  // size); broadcast/reduce pipeline the whole buffer, bytes/n per step as well.
  const double chunk = bytes / n;
  std::map<int, std::vector<int>> by_node;  // domain -> ranks in group order
  std::vector<int> node_order;
  for (int r : group) {
    int d = c.gpu(r).domain;
    if (!by_node.count(d)) node_order.push_back(d);
    by_node[d].push_back(r);
  }
  if (node_order.size() == 1) {
    for (int i = 0; i < n; ++i) step.transfers.push_back({group[i], group[(i + 1) % n], chunk});
  } else {
    const int N = static_cast<int>(node_order.size());
    for (int v = 0; v < N; ++v) {
      const std::vector<int>& a = by_node[node_order[v]];
      const std::vector<int>& b = by_node[node_order[(v + 1) % N]];
      // Rails: distinct NICs of this node's ranks (one ring per rail).
      std::vector<int> rails;
      std::map<NodeId, bool> seen;
      for (int r : a)
        if (!seen[c.gpu(r).nic]) {
          seen[c.gpu(r).nic] = true;
          rails.push_back(r);
        }
      const int k = static_cast<int>(rails.size());
      for (int i = 0; i < k; ++i) {
        int src = rails[i];
        int dst = b[std::min<int>(i, static_cast<int>(b.size()) - 1)];
        for (int r : b)
          if (c.gpu(r).rail == c.gpu(src).rail) {
            dst = r;
            break;
          }
        step.transfers.push_back({src, dst, chunk / k});
      }
    }
  }
  return {step};
}

Schedule AllToAllSchedule(double bytes, std::span<const int> group) {
  const int n = static_cast<int>(group.size());
  Step step;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) step.transfers.push_back({group[i], group[j], bytes / n});
  return {step};
}

double EvaluateClosedForm(const Cluster& c, const Schedule& s) {
  double t = 0;
  for (const Step& st : s) {
    double m = 0;
    for (const Transfer& x : st.transfers) m = std::max(m, RouteAlone(c, c.GpuRoute(x.src, x.dst), x.bytes));
    t += st.count * m;
  }
  return t;
}

double EvaluateOnNetwork(const Cluster& c, const Schedule& s, NetFidelity fidelity) {
  double t = 0;
  for (const Step& st : s) {
    std::vector<Flow> flows;
    flows.reserve(st.transfers.size());
    for (const Transfer& x : st.transfers) {
      Flow f;
      f.route = c.GpuRoute(x.src, x.dst);
      f.bytes = x.bytes;
      flows.push_back(std::move(f));
    }
    double m = 0;
    for (double f : FinishTimes(c, flows, fidelity)) m = std::max(m, f);
    t += st.count * m;
  }
  return t;
}

}  // namespace ndt
