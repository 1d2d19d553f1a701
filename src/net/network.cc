// File: net/network.cc
// Analytical and max-min fluid network models (see network.h).
//
// The max-min model is event driven. Between events every active subflow runs at its max-min
// fair rate; an event is a subflow start or completion. Two facts keep it fast at the n^2
// subflows of an all-to-all:
//  * Completion re-solves only the top of the allocation. Progressive filling saturates links in
//    increasing order of level, and every subflow on a link that saturates at level s gets at
//    most s; so subflows of rate r cross no link saturated below r. Removing subflows of rate
//    >= L therefore leaves every subflow below L at its rate (its bottleneck link keeps the same
//    load), and filling resumes at L on the capacity they leave. With equal sizes the fastest
//    subflows finish first, so most events re-solve a handful of subflows, not all of them.
//  * A subflow whose rate did not change keeps its predicted finish time, so finish times sit
//    in a heap and only re-solved subflows are pushed again.
// Starts re-solve everything (rates may fall). Subflows within 1e-9 of their size at an event
// finish at that event, as before.
#include "net/network.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>

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

// Subflows over the links they use, renumbered densely in link id order: subflow i crosses
// links lk[off[i] .. off[i+1]), link k carries subflows sub[loff[k] .. loff[k+1]) (ascending).
struct Dense {
  std::vector<double> cap;
  std::vector<int> off, lk;
  std::vector<int> loff, sub;
  int num_links() const { return static_cast<int>(cap.size()); }
};

Dense MakeDense(const Cluster& c, const std::vector<const std::vector<LinkId>*>& paths) {
  Dense d;
  const int n = static_cast<int>(paths.size());
  // The dense index of each link used, in link id order: from the sorted ids when the paths
  // touch few links against the cluster's (a send crosses ~10 of ~10^4), else from a table over
  // every link (a pass over all of them per call).
  size_t touched = 0;
  for (const auto* p : paths) touched += p->size();
  const bool sparse = touched * 16 < c.links().size();
  std::vector<LinkId> ids;  // sparse: the links used, ascending
  std::vector<int> dense;   // else: by link id, -1 when unused
  if (sparse) {
    ids.reserve(touched);
    for (const auto* p : paths) ids.insert(ids.end(), p->begin(), p->end());
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (LinkId l : ids) d.cap.push_back(c.link(l).bw_Bps);
  } else {
    dense.assign(c.links().size(), -1);
    for (const auto* p : paths)
      for (LinkId l : *p) dense[l] = 0;
    for (size_t l = 0; l < dense.size(); ++l) {
      if (dense[l] < 0) continue;
      dense[l] = d.num_links();
      d.cap.push_back(c.link(static_cast<LinkId>(l)).bw_Bps);
    }
  }
  auto index_of = [&](LinkId l) {
    return sparse ? static_cast<int>(std::lower_bound(ids.begin(), ids.end(), l) - ids.begin())
                  : dense[l];
  };
  d.off.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) d.off[i + 1] = d.off[i] + static_cast<int>(paths[i]->size());
  d.lk.resize(d.off[n]);
  d.loff.assign(d.num_links() + 1, 0);
  for (int i = 0; i < n; ++i) {
    int j = d.off[i];
    for (LinkId l : *paths[i]) {
      const int k = index_of(l);
      d.lk[j++] = k;
      ++d.loff[k + 1];
    }
  }
  for (int k = 0; k < d.num_links(); ++k) d.loff[k + 1] += d.loff[k];
  d.sub.resize(d.off[n]);
  std::vector<int> fill(d.loff.begin(), d.loff.end() - 1);
  for (int i = 0; i < n; ++i)
    for (int j = d.off[i]; j < d.off[i + 1]; ++j) d.sub[fill[d.lk[j]]++] = i;
  return d;
}

// Progressive filling (water-filling) over a subset of the subflows: the link with the
// smallest fair share (spare capacity / unfrozen subflows in the subset) saturates first; its
// subflows freeze at that share; repeat. Ties go to the lower link index. Scratch arrays are
// kept between calls so that an event costs what its subset touches.
class Filler {
 public:
  explicit Filler(const Dense& d)
      : d_(d), cnt_(d.num_links(), 0), stamp_(d.num_links(), 0), in_(d.off.size() - 1, 0) {}

  // Sets (*rate)[i] for every i in `set` given spare[k] for each link k the set crosses
  // (spare is consumed). REQUIRES: `set` distinct, each with a non-empty path.
  void Fill(const std::vector<int>& set, std::vector<double>* spare, std::vector<double>* rate) {
    ++epoch_;
    for (int i : set) {
      in_[i] = epoch_;
      for (int j = d_.off[i]; j < d_.off[i + 1]; ++j) ++cnt_[d_.lk[j]];
    }
    heap_.clear();
    ++epoch_touch_;
    for (int i : set) {
      for (int j = d_.off[i]; j < d_.off[i + 1]; ++j) {
        const int l = d_.lk[j];
        if (stamp_[l] == epoch_touch_) continue;
        stamp_[l] = epoch_touch_;
        heap_.emplace_back(Share(l, *spare), l);
      }
    }
    std::make_heap(heap_.begin(), heap_.end(), std::greater<>());
    int left = static_cast<int>(set.size());
    while (left > 0) {
      NDT_CHECK(!heap_.empty(), "max-min: no link left to saturate");
      std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
      const auto [share, k] = heap_.back();
      heap_.pop_back();
      if (cnt_[k] == 0 || share != Share(k, *spare)) continue;  // stale entry
      ++epoch_touch_;
      touched_.clear();
      for (int e = d_.loff[k]; e < d_.loff[k + 1]; ++e) {
        const int i = d_.sub[e];
        if (in_[i] != epoch_) continue;
        in_[i] = 0;  // frozen
        (*rate)[i] = share;
        --left;
        for (int j = d_.off[i]; j < d_.off[i + 1]; ++j) {
          const int l = d_.lk[j];
          (*spare)[l] -= share;
          --cnt_[l];
          if (stamp_[l] != epoch_touch_) {
            stamp_[l] = epoch_touch_;
            touched_.push_back(l);
          }
        }
      }
      for (int l : touched_) Push(l, *spare);
    }
  }

 private:
  // Spare capacity can round to zero or below; a floor of 1e-12 of the link keeps every rate
  // positive (so every subflow finishes) at a negligible overshoot.
  double Share(int k, const std::vector<double>& spare) const {
    return std::max(spare[k], 1e-12 * d_.cap[k]) / cnt_[k];
  }
  void Push(int k, const std::vector<double>& spare) {
    if (cnt_[k] == 0) return;
    heap_.emplace_back(Share(k, spare), k);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }

  const Dense& d_;
  std::vector<int> cnt_;
  std::vector<unsigned> stamp_;
  std::vector<unsigned> in_;
  unsigned epoch_ = 0, epoch_touch_ = 0;
  std::vector<std::pair<double, int>> heap_;
  std::vector<int> touched_;
};

}  // namespace

std::vector<double> MaxMinRates(const Cluster& c, const std::vector<std::vector<LinkId>>& paths) {
  const int n = static_cast<int>(paths.size());
  std::vector<const std::vector<LinkId>*> ptrs;
  ptrs.reserve(n);
  for (const auto& p : paths) ptrs.push_back(&p);
  const Dense d = MakeDense(c, ptrs);
  std::vector<double> rate(n, std::numeric_limits<double>::infinity());
  std::vector<int> set;
  for (int i = 0; i < n; ++i)
    if (!paths[i].empty()) set.push_back(i);
  std::vector<double> spare = d.cap;
  Filler(d).Fill(set, &spare, &rate);
  return rate;
}

std::vector<double> FinishAnalytical(const Cluster& c, const std::vector<Flow>& flows) {
  std::vector<Sub> subs = Split(c, flows);
  std::vector<double> finish(flows.size());
  for (size_t f = 0; f < flows.size(); ++f) finish[f] = flows[f].start_s;
  // Each subflow runs at its route's bottleneck, bandwidth / subflows on the link. count_of(l):
  // the subflows on link l (a route crossing a link twice counts twice).
  auto finish_with = [&](auto count_of) {
    for (const Sub& s : subs) {
      double r = std::numeric_limits<double>::infinity();
      for (LinkId l : *s.links) r = std::min(r, c.link(l).bw_Bps / count_of(l));
      double t = flows[s.flow].start_s + s.latency_s + (s.bytes > 0 ? s.bytes / r : 0.0);
      finish[s.flow] = std::max(finish[s.flow], t);
    }
  };
  size_t touched = 0;
  for (const Sub& s : subs) touched += s.links->size();
  if (touched * 16 < c.links().size()) {
    // Few links touched (a pipeline send on a 1,024-GPU fabric crosses ~10 of ~10^4): count on
    // their sorted ids; a count per link of the cluster cost a pass over all of them per call.
    std::vector<LinkId> used;
    used.reserve(touched);
    for (const Sub& s : subs) used.insert(used.end(), s.links->begin(), s.links->end());
    std::sort(used.begin(), used.end());
    finish_with([&used](LinkId l) {
      const auto [lo, hi] = std::equal_range(used.begin(), used.end(), l);
      return static_cast<int>(hi - lo);
    });
  } else {
    std::vector<int> count(c.links().size(), 0);
    for (const Sub& s : subs)
      for (LinkId l : *s.links) ++count[l];
    finish_with([&count](LinkId l) { return count[l]; });
  }
  return finish;
}

namespace {

// The event loop of FinishMaxMin over dense subflows. Subflow i holds left0_[i] bytes at t0_[i]
// and runs at rate_[i] since; it is predicted to finish at t0 + left0 / rate.
class MaxMinSim {
 public:
  MaxMinSim(const Dense& d, std::vector<double> bytes, std::vector<double> start)
      : d_(d),
        bytes_(std::move(bytes)),
        start_(std::move(start)),
        filler_(d),
        left0_(bytes_),
        t0_(start_),
        rate_(bytes_.size(), 0.0),
        done_(bytes_.size(), -1.0),
        load_(d.num_links(), 0.0),
        spare_(d.num_links(), 0.0) {}

  // Completion time of every subflow (before path latency).
  std::vector<double> Run() {
    const int n = static_cast<int>(bytes_.size());
    std::vector<int> order(n);
    for (int i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return start_[a] < start_[b]; });
    size_t next = 0;
    while (next < order.size() || live_ > 0) {
      const double t_start =
          next < order.size() ? start_[order[next]] : std::numeric_limits<double>::infinity();
      const double t_end = NextFinish();
      NDT_CHECK(t_start < std::numeric_limits<double>::infinity() ||
                    t_end < std::numeric_limits<double>::infinity(),
                "max-min: running subflows with no predicted finish");
      if (t_start <= t_end) {  // admit every subflow starting now, then re-solve all
        const double now = t_start;
        bool added = false;
        while (next < order.size() && start_[order[next]] <= now) {
          const int i = order[next++];
          if (bytes_[i] <= 0 || d_.off[i] == d_.off[i + 1]) {
            done_[i] = now;
          } else {
            Advance(i, now);
            active_.push_back(i);
            ++live_;
            added = true;
          }
        }
        if (added) SolveAll(now);
      } else {
        Complete(t_end);
      }
    }
    return done_;
  }

 private:
  using Entry = std::pair<double, int>;  // predicted finish, subflow

  double Finish(int i) const { return t0_[i] + left0_[i] / rate_[i]; }
  // Brings subflow i's remaining bytes to time t at its current rate.
  void Advance(int i, double t) {
    if (rate_[i] > 0) left0_[i] = std::max(0.0, left0_[i] - rate_[i] * (t - t0_[i]));
    t0_[i] = t;
  }
  // Earliest predicted finish, dropping heap entries of finished or re-rated subflows.
  double NextFinish() {
    while (!heap_.empty()) {
      const auto [t, i] = heap_.top();
      if (done_[i] < 0 && rate_[i] > 0 && t == Finish(i)) return t;
      heap_.pop();
    }
    return std::numeric_limits<double>::infinity();
  }

  // Rates of `set_` (rates of the rest fixed) on the capacity the rest leaves; pushes the new
  // predicted finishes. The previous rates of `set_` and of `removed` are in load_.
  void Solve(double now, const std::vector<int>& removed) {
    for (int i : removed)
      for (int j = d_.off[i]; j < d_.off[i + 1]; ++j) load_[d_.lk[j]] -= rate_[i];
    for (int i : set_) {
      Advance(i, now);
      for (int j = d_.off[i]; j < d_.off[i + 1]; ++j) load_[d_.lk[j]] -= rate_[i];
    }
    for (int i : set_)
      for (int j = d_.off[i]; j < d_.off[i + 1]; ++j)
        spare_[d_.lk[j]] = d_.cap[d_.lk[j]] - load_[d_.lk[j]];
    filler_.Fill(set_, &spare_, &rate_);
    for (int i : set_) {
      NDT_CHECK(rate_[i] > 0, "max-min: a subflow got no bandwidth");
      for (int j = d_.off[i]; j < d_.off[i + 1]; ++j) load_[d_.lk[j]] += rate_[i];
      heap_.emplace(Finish(i), i);
    }
    // active_ stays sorted by rate, ascending (ties by index): set_ is its top.
    std::sort(set_.begin(), set_.end(),
              [&](int a, int b) { return rate_[a] != rate_[b] ? rate_[a] < rate_[b] : a < b; });
    active_.insert(active_.end(), set_.begin(), set_.end());
  }

  void SolveAll(double now) {
    set_.clear();
    for (int i : active_) {
      if (done_[i] >= 0) continue;
      Advance(i, now);
      rate_[i] = 0;  // rates may fall at a start: refill from zero
      set_.push_back(i);
    }
    std::fill(load_.begin(), load_.end(), 0.0);
    std::sort(set_.begin(), set_.end());
    active_.clear();
    Solve(now, {});
  }

  // The event at `now`: every subflow within 1e-9 of its size finishes; the subflows at or
  // above the slowest finisher's rate are re-solved.
  void Complete(double now) {
    std::vector<int> removed;
    while (!heap_.empty()) {
      const auto [t, i] = heap_.top();
      if (done_[i] >= 0 || rate_[i] <= 0 || t != Finish(i)) {
        heap_.pop();
        continue;
      }
      if (t - now > 1e-9 * bytes_[i] / rate_[i] && !removed.empty()) break;
      heap_.pop();
      done_[i] = now;
      removed.push_back(i);
      --live_;
    }
    double level = std::numeric_limits<double>::infinity();
    for (int i : removed) level = std::min(level, rate_[i]);
    // Subflows at (nearly) the same level are re-solved too: their rate may rise.
    level *= 1 - 1e-9;
    set_.clear();
    while (!active_.empty() && rate_[active_.back()] >= level) {
      const int i = active_.back();
      active_.pop_back();
      if (done_[i] < 0) set_.push_back(i);
    }
    std::sort(set_.begin(), set_.end());
    Solve(now, removed);
    for (int i : removed) rate_[i] = 0;
  }

  const Dense& d_;
  const std::vector<double> bytes_, start_;
  Filler filler_;
  std::vector<double> left0_, t0_, rate_, done_;
  std::vector<double> load_, spare_;  // per link: sum of active rates; scratch
  std::vector<int> active_, set_;     // active_ may hold finished subflows; live_ counts the rest
  int live_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap_;
};

}  // namespace

std::vector<double> FinishMaxMin(const Cluster& c, const std::vector<Flow>& flows) {
  std::vector<Sub> subs = Split(c, flows);
  const int n = static_cast<int>(subs.size());
  std::vector<const std::vector<LinkId>*> paths(n);
  std::vector<double> bytes(n), start(n);
  for (int i = 0; i < n; ++i) {
    paths[i] = subs[i].links;
    bytes[i] = subs[i].bytes;
    start[i] = flows[subs[i].flow].start_s;
  }
  const Dense d = MakeDense(c, paths);
  const std::vector<double> done_s = MaxMinSim(d, std::move(bytes), std::move(start)).Run();
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
