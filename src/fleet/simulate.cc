// File: fleet/simulate.cc
// The Monte Carlo of fleet.h: one run with interruptions and checkpoints (SimulateRun), many
// runs on threads (RunMonteCarlo), and the interval search (OptimizeInterval). The closed form
// and the model they share are fleet.cc.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <thread>

#include "fleet/fleet.h"

namespace ndt {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// splitmix64 (Steele, Lea, Flood 2014): seeds the generator and mixes (seed, run).
uint64_t SplitMix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna 2018). Our own uniform and exponential transforms on top,
// so the draws do not depend on the standard library's distributions.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (uint64_t& w : s_) w = SplitMix64(&seed);
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in (0, 1]: 53 random bits, never 0 (so the log below is finite).
  double Uniform() { return (static_cast<double>(Next() >> 11) + 1.0) * 0x1.0p-53; }
  // Exponential with rate `per_s` (inverse transform); +inf for a zero rate.
  double Exponential(double per_s) { return per_s > 0 ? -std::log(Uniform()) / per_s : kInf; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

uint64_t RunSeed(uint64_t seed, int run) {
  uint64_t x = seed ^ (0xd1b54a32d192ed03ULL * (static_cast<uint64_t>(run) + 1));
  SplitMix64(&x);
  return SplitMix64(&x);
}

// The quantile q of sorted values, linear interpolation between order statistics.
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

Quantiles QuantilesOf(std::vector<double> v) {
  Quantiles q;
  double sum = 0;
  for (double x : v) sum += x;  // index order: deterministic
  q.mean = v.empty() ? 0 : sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  q.p10 = Quantile(v, 0.1);
  q.p50 = Quantile(v, 0.5);
  q.p90 = Quantile(v, 0.9);
  return q;
}

}  // namespace

RunOutcome SimulateRun(const FleetModel& m, double tau, const RunLength& len, uint64_t seed,
                       std::vector<FleetSpan>* spans) {
  Rng rng(seed);
  const size_t nc = m.classes.size();
  RunOutcome out;
  out.interruptions.assign(nc, 0);
  out.lost_s.assign(nc + 1, 0.0);
  const double lt = m.unexpected_per_s + m.planned_per_s;
  // Cumulative class rates for a draw by rate share.
  std::vector<double> cum(nc);
  double acc = 0;
  for (size_t i = 0; i < nc; ++i) cum[i] = (acc += m.classes[i].per_s);
  auto pick = [&]() {
    const double u = rng.Uniform() * acc;
    size_t i = 0;
    while (i + 1 < nc && u > cum[i]) ++i;
    return i;
  };
  // Hot spares: the times at which each becomes available, earliest first. A used spare's
  // replacement is ordered when it is taken, so arrival times are pushed in order.
  std::deque<double> spares(static_cast<size_t>(std::max(0, m.spares)), 0.0);
  auto replace = [&](double t) {
    if (spares.empty()) return m.new_vm_s;
    const double wait = std::max(0.0, spares.front() - t);
    spares.pop_front();
    spares.push_back(t + m.new_vm_s);
    return wait + m.spare_swap_s;
  };
  // Names are built only when a trace is asked for: the Monte Carlo calls this per event.
  auto span = [&](int track, const auto& name, const char* cat, double s, double d) {
    if (spans != nullptr && d > 0) spans->push_back({track, std::string(name), cat, s, d});
  };
  auto restart_span = [&](const std::string& cls_name, double s, double d) {
    if (spans != nullptr && d > 0)
      spans->push_back({0, "restart (" + cls_name + ")", "restart", s, d});
  };
  const double b = m.block_s, c = tau + b;
  const double lag = std::max(0.0, m.write_s - b);  // durable this long after the block ends
  const double work_goal = len.work_s > 0 ? len.work_s : kInf;
  const double wall_end = len.wall_s > 0 ? len.wall_s : kInf;
  double t = 0, w = 0;
  while (true) {
    // Train from t with w committed, checkpointing every tau.
    const double remaining = work_goal - w;
    double finish_dt = kInf;
    if (remaining < kInf) {
      const double n = std::ceil(remaining / tau);
      finish_dt = remaining + (n - 1) * b;
    }
    const double fail_t = t + rng.Exponential(lt);
    auto progress = [&](double e) {  // training done in e seconds of a segment
      const double k = std::floor(e / c);
      return k * tau + std::min(e - k * c, tau);
    };
    const double end_t = std::min({t + finish_dt, fail_t, wall_end});
    if (end_t == t + finish_dt || end_t == wall_end) {
      const double e = end_t - t;
      const double p = end_t == t + finish_dt ? remaining : progress(e);
      out.lost_s[nc] += e - p;
      span(0, "train", "train", t, e);
      w += p;
      t = end_t;
      break;
    }
    const double e = fail_t - t;
    const double p = progress(e);
    const double durable = e >= lag ? std::floor((e - lag) / c) * tau : 0;
    const double saved = std::min(durable, p);
    size_t cls = pick();
    out.interruptions[cls]++;
    out.lost_s[nc] += e - p;
    span(0, "train", "train", t, e);
    t = fail_t;
    double kept = saved;
    if (m.classes[cls].planned) {  // a final checkpoint, no work lost
      kept = p;
      out.lost_s[cls] += m.write_s;
      span(0, "final checkpoint", "checkpoint", t, m.write_s);
      t += m.write_s;
    } else {
      out.lost_s[cls] += p - saved;
    }
    w += kept;
    span(1, m.classes[cls].name, m.classes[cls].planned ? "planned" : "unexpected", t, 1.0);
    // Restart: detection, replacement, init, load. An interruption during it starts it again,
    // but a replacement VM already on its way keeps coming.
    double vm_ready = t;
    while (true) {
      const ClassRate& cr = m.classes[cls];
      const double detect = cr.planned ? 0 : m.detection_s;
      // The failed VM is known once detected; then a spare is swapped in or a new VM ordered.
      if (cr.needs_new_vm) vm_ready = std::max(vm_ready, t + detect + replace(t + detect));
      const double dur = std::max(t + detect, vm_ready) - t + m.init_s + m.load_s;
      const double next = t + rng.Exponential(lt);
      if (next < t + dur && next < wall_end) {
        out.lost_s[cls] += next - t;
        restart_span(cr.name, t, next - t);
        t = next;
        cls = pick();
        out.interruptions[cls]++;
        span(1, m.classes[cls].name, m.classes[cls].planned ? "planned" : "unexpected", t, 1.0);
        continue;
      }
      const double d = std::min(dur, wall_end - t);
      out.lost_s[cls] += d;
      restart_span(cr.name, t, d);
      t += d;
      break;
    }
    if (t >= wall_end) break;
  }
  out.wall_s = t;
  out.work_s = w;
  return out;
}

MonteCarloResult RunMonteCarlo(const FleetModel& m, double tau, const RunLength& len, int runs,
                               uint64_t seed, int threads) {
  std::vector<RunOutcome> outs(static_cast<size_t>(runs));
  auto work = [&](int from, int to) {
    for (int i = from; i < to; ++i) outs[i] = SimulateRun(m, tau, len, RunSeed(seed, i));
  };
  threads = std::max(1, std::min(threads, runs));
  if (threads == 1) {
    work(0, runs);
  } else {
    std::vector<std::thread> pool;
    for (int k = 0; k < threads; ++k) {
      pool.emplace_back(work, runs * k / threads, runs * (k + 1) / threads);
    }
    for (std::thread& th : pool) th.join();
  }
  MonteCarloResult r;
  r.runs = runs;
  const size_t nc = m.classes.size();
  r.interruptions_mean.assign(nc, 0);
  r.lost_gpu_hours_mean.assign(nc + 1, 0);
  std::vector<double> wall, wk, good;
  for (const RunOutcome& o : outs) {  // index order: the sums do not depend on threads
    wall.push_back(o.wall_s);
    wk.push_back(o.work_s);
    good.push_back(o.wall_s > 0 ? o.work_s / o.wall_s : 0);
    for (size_t i = 0; i < nc; ++i) r.interruptions_mean[i] += o.interruptions[i];
    for (size_t i = 0; i <= nc; ++i) r.lost_gpu_hours_mean[i] += o.lost_s[i] * m.gpus / 3600.0;
  }
  for (double& x : r.interruptions_mean) x /= runs;
  for (double& x : r.lost_gpu_hours_mean) x /= runs;
  for (size_t i = 0; i < nc; ++i) {
    (m.classes[i].planned ? r.planned_mean : r.unexpected_mean) += r.interruptions_mean[i];
  }
  r.wall_s = QuantilesOf(std::move(wall));
  r.work_s = QuantilesOf(std::move(wk));
  r.goodput = QuantilesOf(std::move(good));
  return r;
}

double OptimizeInterval(const FleetModel& m, const RunLength& len, double min_interval_s, int runs,
                        uint64_t seed, int threads) {
  const double step = m.step_s > 0 ? m.step_s : 1;
  auto snap = [&](double tau) {
    return std::max(std::ceil(min_interval_s / step - 1e-9), std::round(tau / step)) * step;
  };
  auto score = [&](double tau) {  // mean goodput over the same runs (common random numbers)
    const MonteCarloResult r = RunMonteCarlo(m, tau, len, runs, seed, threads);
    return r.goodput.mean;
  };
  const double daly = EvaluateClosedForm(m, step).daly_interval_s;
  const double lo = snap(min_interval_s);
  // Without unexpected interruptions (Daly's interval infinite) every checkpoint is pure loss:
  // the grid reaches the whole run, where none is taken.
  const double run_s = len.work_s > 0 ? len.work_s : len.wall_s;
  double hi = std::isfinite(daly) ? std::max(4 * daly, 4 * lo) : std::max(lo, run_s);
  if (len.work_s > 0) hi = std::min(hi, std::max(lo, len.work_s));
  // A log grid, then a finer one around the best point.
  constexpr int kGrid = 16;
  double best = lo, best_score = -1;
  auto consider = [&](double tau) {
    tau = snap(tau);
    const double s = score(tau);
    if (s > best_score + 1e-12 || (std::abs(s - best_score) <= 1e-12 && tau < best)) {
      best = tau;
      best_score = s;
    }
  };
  const double ratio = hi > lo ? std::pow(hi / lo, 1.0 / (kGrid - 1)) : 1;
  for (int i = 0; i < kGrid; ++i) consider(lo * std::pow(ratio, i));
  const double center = best;
  for (int i = -4; i <= 4; ++i) {
    if (i != 0) consider(center * std::pow(ratio, i / 5.0));
  }
  return best;
}

}  // namespace ndt
