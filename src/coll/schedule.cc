// File: coll/schedule.cc
// Ring, tree, PAT and all-to-all schedules and their two evaluators (see schedule.h).
#include "coll/schedule.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace ndt {
namespace {

bool IsSwitch(const Cluster& c, NodeId n) {
  const NodeKind k = c.node(n).kind;
  return k == NodeKind::kLeaf || k == NodeKind::kSpine || k == NodeKind::kCore;
}

// A transfer alone on its route: the route's paths run together and may share links (every
// ECMP path of a spread route crosses the same NIC ports), so a link carrying the fraction f of
// the route needs bytes x f / bw; the slowest link sets the time, after the longest path's
// latency.
double RouteAlone(const Cluster& c, const Route& r, double bytes, FabricView view) {
  std::vector<std::pair<LinkId, double>> load;
  double lat = 0;
  for (const Path& p : r) {
    double path_lat = 0;
    for (LinkId l : p.links) {
      const Link& k = c.link(l);
      path_lat += k.latency_s;
      if (view == FabricView::kNonBlocking && IsSwitch(c, k.src) && IsSwitch(c, k.dst)) continue;
      load.emplace_back(l, p.fraction);
    }
    lat = std::max(lat, path_lat);
  }
  std::sort(load.begin(), load.end());
  double t = 0;
  for (size_t i = 0; i < load.size();) {
    double f = 0;
    size_t j = i;
    for (; j < load.size() && load[j].first == load[i].first; ++j) f += load[j].second;
    t = std::max(t, bytes * f / c.link(load[i].first).bw_Bps);
    i = j;
  }
  return lat + t;
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

// One transfer per NIC from node a to node b: a's first rank on each distinct NIC sends to b's
// rank on the same NIC position, each carrying bytes / NICs. The j-th NIC of rail r in a pairs
// with the j-th NIC of rail r in b, cyclically if b has fewer (an NVL72 rack has 18 NICs per
// rail: pairing them all with b's first rail-r rank would funnel 18 transfers into one NIC);
// if b has no NIC on rail r, b's rank of the same index (cyclically).
void RailTransfers(const Cluster& c, const std::vector<int>& a, const std::vector<int>& b,
                   double bytes, std::vector<Transfer>* out) {
  // Per node: its first rank on each distinct NIC, in group order.
  auto heads = [&](const std::vector<int>& ranks) {
    std::vector<int> h;
    std::set<NodeId> seen;
    for (int r : ranks)
      if (seen.insert(c.gpu(r).nic).second) h.push_back(r);
    return h;
  };
  const std::vector<int> from = heads(a);
  const std::vector<int> to = heads(b);
  std::map<int, std::vector<int>> to_by_rail;
  for (int r : to) to_by_rail[c.gpu(r).rail].push_back(r);
  std::map<int, int> used;  // rail -> senders of a on it so far
  const int k = static_cast<int>(from.size());
  for (int i = 0; i < k; ++i) {
    const int rail = c.gpu(from[i]).rail;
    const int j = used[rail]++;
    auto it = to_by_rail.find(rail);
    const int dst = it != to_by_rail.end() ? it->second[j % it->second.size()] : b[i % b.size()];
    out->push_back({from[i], dst, bytes / k});
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
    // Sub-step of each edge: children below their parent first, then above. A binary tree node
    // has one child on each side, except where tree 1's shift (odd counts) wraps around: the
    // node then has both below, and the second moves to the other sub-step so that no node
    // receives (up) or sends (down) twice in one step.
    std::vector<int> sub(n, -1);
    std::vector<int> taken(2 * n, 0);
    for (int r = 0; r < n; ++r) {
      const int p = TreeParent(t, r, n);
      if (p < 0) continue;
      sub[r] = r > p ? 1 : 0;
      if (taken[2 * p + sub[r]]) sub[r] = 1 - sub[r];
      taken[2 * p + sub[r]] = 1;
    }
    for (int phase = 0; phase < 2; ++phase) {
      if ((phase == 0 && !up) || (phase == 1 && !down)) continue;
      for (int above = 0; above < 2; ++above) {
        Step st;
        for (int r = 0; r < n; ++r) {
          const int p = TreeParent(t, r, n);
          if (p < 0 || sub[r] != above) continue;
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

double EvaluateClosedForm(const Cluster& c, const Schedule& s, FabricView view) {
  double t = 0;
  std::vector<double> endpoint_bytes(c.links().size(), 0.0);  // per link, this step
  std::vector<LinkId> touched;
  for (const Step& st : s) {
    double m = 0;
    for (const Transfer& x : st.transfers) {
      const Route r = c.GpuRoute(x.src, x.dst);
      m = std::max(m, RouteAlone(c, r, x.bytes, view));
      for (const Path& p : r) {
        for (LinkId l : p.links) {
          const Link& k = c.link(l);
          if (IsSwitch(c, k.src) && IsSwitch(c, k.dst)) continue;
          if (endpoint_bytes[l] == 0) touched.push_back(l);
          endpoint_bytes[l] += x.bytes * p.fraction;
        }
      }
    }
    for (LinkId l : touched) {
      m = std::max(m, endpoint_bytes[l] / c.link(l).bw_Bps);
      endpoint_bytes[l] = 0;
    }
    touched.clear();
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
