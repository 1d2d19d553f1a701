// File: coll/schedule.cc
// Ring, tree, PAT and all-to-all schedules and their two evaluators (see schedule.h).
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

double RingSteps(CollOp op, int n) { return op == CollOp::kAllReduce ? 2.0 * (n - 1) : n - 1.0; }

// Ranks of the group by node (NVLink domain), nodes in order of first appearance.
std::vector<std::vector<int>> ByNode(const Cluster& c, std::span<const int> group) {
  std::map<int, size_t> index;
  std::vector<std::vector<int>> nodes;
  for (int r : group) {
    auto [it, added] = index.emplace(c.gpu(r).domain, nodes.size());
    if (added) nodes.emplace_back();
    nodes[it->second].push_back(r);
  }
  return nodes;
}

// One transfer per rail from node a to node b: a's first rank on each distinct NIC to b's rank
// on the same rail (else b's rank of the same index), each carrying bytes / rails.
void RailTransfers(const Cluster& c, const std::vector<int>& a, const std::vector<int>& b,
                   double bytes, std::vector<Transfer>* out) {
  std::vector<int> rails;
  std::map<NodeId, bool> seen;
  for (int r : a) {
    if (!seen[c.gpu(r).nic]) {
      seen[c.gpu(r).nic] = true;
      rails.push_back(r);
    }
  }
  const int k = static_cast<int>(rails.size());
  for (int i = 0; i < k; ++i) {
    int dst = b[std::min<int>(i, static_cast<int>(b.size()) - 1)];
    for (int r : b) {
      if (c.gpu(r).rail == c.gpu(rails[i]).rail) {
        dst = r;
        break;
      }
    }
    out->push_back({rails[i], dst, bytes / k});
  }
}

int BtreeParent(int r, int n) {
  if (r == 0) return -1;
  int bit = 1;
  while (!(r & bit)) bit <<= 1;
  const int up = (r ^ bit) | (bit << 1);
  return up < n ? up : r ^ bit;
}

}  // namespace

Schedule RingSchedule(const Cluster& c, CollOp op, double bytes, std::span<const int> group) {
  const int n = static_cast<int>(group.size());
  Step step;
  step.count = static_cast<int>(RingSteps(op, n));
  // Per-rank chunk: all_reduce/reduce_scatter/all_gather move bytes/n per step (nccl-tests
  // size); broadcast/reduce pipeline the whole buffer, bytes/n per step as well.
  const double chunk = bytes / n;
  const std::vector<std::vector<int>> nodes = ByNode(c, group);
  const int N = static_cast<int>(nodes.size());
  if (N == 1) {
    for (int i = 0; i < n; ++i) step.transfers.push_back({group[i], group[(i + 1) % n], chunk});
  } else {
    for (int v = 0; v < N; ++v)
      RailTransfers(c, nodes[v], nodes[(v + 1) % N], chunk, &step.transfers);
  }
  return {step};
}

int TreeParent(int t, int r, int n) {
  if (t == 0) return BtreeParent(r, n);
  if (n % 2 == 0) {  // mirror
    const int p = BtreeParent(n - 1 - r, n);
    return p < 0 ? -1 : n - 1 - p;
  }
  const int p = BtreeParent((r - 1 + n) % n, n);  // shift by one
  return p < 0 ? -1 : (p + 1) % n;
}

Schedule TreeSchedule(const Cluster& c, CollOp op, double bytes, std::span<const int> group) {
  const std::vector<std::vector<int>> nodes = ByNode(c, group);
  const int n = static_cast<int>(nodes.size());
  Schedule s;
  if (n < 2) return s;
  const bool up = op != CollOp::kBroadcast, down = op != CollOp::kReduce;
  for (int t = 0; t < 2; ++t) {
    for (int phase = 0; phase < 2; ++phase) {
      if ((phase == 0 && !up) || (phase == 1 && !down)) continue;
      for (int above = 0; above < 2; ++above) {  // children below, then above their parent
        Step st;
        for (int r = 0; r < n; ++r) {
          const int p = TreeParent(t, r, n);
          if (p < 0 || (r > p) != (above == 1)) continue;
          if (phase == 0) {
            RailTransfers(c, nodes[r], nodes[p], bytes / 2, &st.transfers);
          } else {
            RailTransfers(c, nodes[p], nodes[r], bytes / 2, &st.transfers);
          }
        }
        if (!st.transfers.empty()) s.push_back(std::move(st));
      }
    }
  }
  return s;
}

Schedule PatSchedule(const Cluster& c, CollOp, double bytes, std::span<const int> group) {
  const std::vector<std::vector<int>> nodes = ByNode(c, group);
  const int n = static_cast<int>(nodes.size());
  Schedule s;
  for (int d = 1; d < n; d *= 2) {
    Step st;
    const double share = bytes * std::min(d, n - d) / n;
    for (int v = 0; v < n; ++v)
      RailTransfers(c, nodes[v], nodes[(v + d) % n], share, &st.transfers);
    s.push_back(std::move(st));
  }
  return s;
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
    for (const Transfer& x : st.transfers)
      m = std::max(m, RouteAlone(c, c.GpuRoute(x.src, x.dst), x.bytes));
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
