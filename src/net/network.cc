// File: net/network.cc
// Analytical and max-min fluid network models (see network.h).
#include "net/network.h"

#include <algorithm>
#include <limits>

#include "core/check.h"

namespace ndt {
namespace {

struct Sub {
  int flow = 0;
  const std::vector<LinkId>* links = nullptr;
  double bytes = 0;
  double latency_s = 0;
};

std::vector<Sub> Split(const Cluster& c, const std::vector<Flow>& flows) {
  std::vector<Sub> subs;
  for (int f = 0; f < static_cast<int>(flows.size()); ++f) {
    for (const Path& p : flows[f].route) {
      Sub s;
      s.flow = f;
      s.links = &p.links;
      s.bytes = flows[f].bytes * p.fraction;
      for (LinkId l : p.links) s.latency_s += c.link(l).latency_s;
      subs.push_back(s);
    }
  }
  return subs;
}

}  // namespace

std::vector<double> MaxMinRates(const Cluster& c, const std::vector<std::vector<LinkId>>& paths) {
  const int n = static_cast<int>(paths.size());
  std::vector<double> rate(n, 0.0);
  // Links used, in id order (deterministic).
  std::vector<LinkId> used;
  for (const auto& p : paths) used.insert(used.end(), p.begin(), p.end());
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  auto idx = [&](LinkId l) {
    return static_cast<int>(std::lower_bound(used.begin(), used.end(), l) - used.begin());
  };
  std::vector<double> cap(used.size());
  std::vector<int> count(used.size(), 0);
  for (size_t i = 0; i < used.size(); ++i) cap[i] = c.link(used[i]).bw_Bps;
  std::vector<std::vector<int>> pidx(n);
  std::vector<std::vector<int>> on_link(used.size());
  for (int i = 0; i < n; ++i) {
    for (LinkId l : paths[i]) {
      int k = idx(l);
      pidx[i].push_back(k);
      ++count[k];
      on_link[k].push_back(i);
    }
  }
  std::vector<bool> frozen(n, false);
  int left = 0;
  for (int i = 0; i < n; ++i) {
    if (paths[i].empty()) {
      frozen[i] = true;
      rate[i] = std::numeric_limits<double>::infinity();
    } else {
      ++left;
    }
  }
  // Progressive filling: the link with the smallest fair share (remaining capacity / unfrozen
  // subflows) saturates first; its subflows freeze at that share; repeat.
  while (left > 0) {
    int best = -1;
    double share = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < used.size(); ++k) {
      if (count[k] == 0) continue;
      double s = std::max(cap[k], 0.0) / count[k];
      if (s < share) {
        share = s;
        best = static_cast<int>(k);
      }
    }
    NDT_CHECK(best >= 0, "max-min: no link left to saturate");
    // Every link at the same fair share saturates at the same level: freeze them all in one
    // pass (symmetric collectives tie on thousands of links). Links are visited in id order.
    std::vector<int> tied;
    for (size_t k = 0; k < used.size(); ++k)
      if (count[k] > 0 && std::max(cap[k], 0.0) / count[k] <= share * (1 + 1e-12))
        tied.push_back(static_cast<int>(k));
    for (int k0 : tied) {
      for (int i : on_link[k0]) {
        if (frozen[i]) continue;
        frozen[i] = true;
        rate[i] = share;
        --left;
        for (int k : pidx[i]) {
          cap[k] -= share;
          --count[k];
        }
      }
    }
  }
  return rate;
}

std::vector<double> FinishAnalytical(const Cluster& c, const std::vector<Flow>& flows) {
  std::vector<Sub> subs = Split(c, flows);
  std::vector<int> count(c.links().size(), 0);
  for (const Sub& s : subs)
    for (LinkId l : *s.links) ++count[l];
  std::vector<double> finish(flows.size());
  for (size_t f = 0; f < flows.size(); ++f) finish[f] = flows[f].start_s;
  for (const Sub& s : subs) {
    double r = std::numeric_limits<double>::infinity();
    for (LinkId l : *s.links) r = std::min(r, c.link(l).bw_Bps / count[l]);
    double t = flows[s.flow].start_s + s.latency_s + (s.bytes > 0 ? s.bytes / r : 0.0);
    finish[s.flow] = std::max(finish[s.flow], t);
  }
  return finish;
}

std::vector<double> FinishMaxMin(const Cluster& c, const std::vector<Flow>& flows) {
  std::vector<Sub> subs = Split(c, flows);
  const int n = static_cast<int>(subs.size());
  std::vector<double> left(n), done_s(n, -1.0);
  for (int i = 0; i < n; ++i) left[i] = subs[i].bytes;
  // Subflow order by start time (stable by index).
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return flows[subs[a].flow].start_s < flows[subs[b].flow].start_s;
  });
  size_t next = 0;
  double now = n > 0 ? flows[subs[order[0]].flow].start_s : 0.0;
  std::vector<int> active;
  while (next < order.size() || !active.empty()) {
    while (next < order.size() && flows[subs[order[next]].flow].start_s <= now) {
      int i = order[next++];
      if (left[i] <= 0 || subs[i].links->empty()) {
        done_s[i] = now;
      } else {
        active.push_back(i);
      }
    }
    if (active.empty()) {
      if (next < order.size()) now = flows[subs[order[next]].flow].start_s;
      continue;
    }
    std::sort(active.begin(), active.end());
    std::vector<std::vector<LinkId>> paths;
    paths.reserve(active.size());
    for (int i : active) paths.push_back(*subs[i].links);
    std::vector<double> rate = MaxMinRates(c, paths);
    double dt = std::numeric_limits<double>::infinity();
    for (size_t a = 0; a < active.size(); ++a) dt = std::min(dt, left[active[a]] / rate[a]);
    if (next < order.size()) dt = std::min(dt, flows[subs[order[next]].flow].start_s - now);
    now += dt;
    std::vector<int> still;
    for (size_t a = 0; a < active.size(); ++a) {
      int i = active[a];
      left[i] -= rate[a] * dt;
      // Relative tolerance: a subflow within 1e-9 of its size is done at this event.
      if (left[i] <= 1e-9 * subs[i].bytes) {
        done_s[i] = now;
      } else {
        still.push_back(i);
      }
    }
    active.swap(still);
  }
  std::vector<double> finish(flows.size());
  for (size_t f = 0; f < flows.size(); ++f) finish[f] = flows[f].start_s;
  for (int i = 0; i < n; ++i)
    finish[subs[i].flow] = std::max(finish[subs[i].flow], done_s[i] + subs[i].latency_s);
  return finish;
}

std::vector<double> FinishTimes(const Cluster& c, const std::vector<Flow>& flows,
                                NetFidelity fidelity) {
  return fidelity == NetFidelity::kFlow ? FinishMaxMin(c, flows) : FinishAnalytical(c, flows);
}

}  // namespace ndt
