#include "report/timeline_json.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

double Us(double s) { return std::round(s * 1e9) / 1e3; }  // microseconds, to the nanosecond
double Ns(double s) { return std::round(s * 1e9) / 1e9; }  // seconds, to the nanosecond
// x to `per` parts of one (per a power of ten: the division gives the nearest double).
double Round(double x, double per) { return std::round(x * per) / per; }

// All stages up to kTimelineMaxStages; beyond, that many evenly spaced, first and last included.
std::vector<int> ShownStages(int stages) {
  std::vector<int> out;
  if (stages <= kTimelineMaxStages) {
    for (int s = 0; s < stages; ++s) out.push_back(s);
    return out;
  }
  for (int i = 0; i < kTimelineMaxStages; ++i) {
    const int s = static_cast<int>(
        std::llround(static_cast<double>(i) * (stages - 1) / (kTimelineMaxStages - 1)));
    if (out.empty() || out.back() != s) out.push_back(s);
  }
  return out;
}

int KindIndex(const std::string& kind, Json* kinds) {
  for (size_t i = 0; i < kinds->size(); ++i) {
    if ((*kinds)[i].get<std::string>() == kind) return static_cast<int>(i);
  }
  kinds->push_back(kind);
  return static_cast<int>(kinds->size()) - 1;
}

// Rows of one lane's spans cut into `bins` equal bins of `w` seconds: per bin the busy time per
// kind; a row is a run of bins with the same dominant kind (ties: the lower index) and busy
// fraction rounded up to a tenth.
void BinnedRows(const std::vector<const StepSpan*>& lane, const std::vector<int>& kind_of, int bins,
                double w, Json* rows) {
  if (lane.empty()) return;
  const size_t nkinds = static_cast<size_t>(*std::max_element(kind_of.begin(), kind_of.end())) + 1;
  std::vector<std::vector<double>> busy(static_cast<size_t>(bins), std::vector<double>(nkinds, 0));
  for (size_t i = 0; i < lane.size(); ++i) {
    const double a = lane[i]->start_s, b = a + lane[i]->dur_s;
    for (int k = std::max(0, static_cast<int>(a / w)); k < bins && k * w < b; ++k) {
      const double ov = std::min(b, (k + 1) * w) - std::max(a, k * w);
      if (ov > 0) busy[static_cast<size_t>(k)][static_cast<size_t>(kind_of[i])] += ov;
    }
  }
  const int stage = lane[0]->stage, stream = lane[0]->stream;
  int run_kind = -1, run_start = 0;
  double run_busy = 0;
  auto flush = [&](int end) {
    if (run_kind >= 0) {
      rows->push_back(Json::array(
          {stage, stream, run_kind, Us(run_start * w), Us((end - run_start) * w), run_busy}));
    }
    run_kind = -1;
  };
  for (int k = 0; k < bins; ++k) {
    const std::vector<double>& t = busy[static_cast<size_t>(k)];
    double total = 0;
    size_t best = 0;
    for (size_t c = 0; c < t.size(); ++c) {
      total += t[c];
      if (t[c] > t[best]) best = c;
    }
    if (total <= 0) {
      flush(k);
      continue;
    }
    const double q = std::clamp(std::ceil(total / w * 10 - 1e-9) / 10, 0.1, 1.0);
    if (run_kind == static_cast<int>(best) && run_busy == q) continue;
    flush(k);
    run_kind = static_cast<int>(best);
    run_start = k;
    run_busy = q;
  }
  flush(bins);
}

}  // namespace

Json TrainTimelineJson(const TrainSimResult& sim, int stages) {
  const std::vector<int> shown = ShownStages(std::max(1, stages));
  std::vector<const StepSpan*> sel;
  for (const StepSpan& s : sim.spans) {
    if (std::binary_search(shown.begin(), shown.end(), s.stage)) sel.push_back(&s);
  }
  std::stable_sort(sel.begin(), sel.end(), [](const StepSpan* a, const StepSpan* b) {
    if (a->stage != b->stage) return a->stage < b->stage;
    if (a->stream != b->stream) return a->stream < b->stream;
    return a->start_s < b->start_s;
  });
  Json kinds = Json::array();
  std::vector<int> kind_of;
  double horizon = sim.step_time_s;
  for (const StepSpan* s : sel) {
    kind_of.push_back(KindIndex(s->category, &kinds));
    horizon = std::max(horizon, s->start_s + s->dur_s);
  }
  Json j;
  j["step_time_s"] = sim.step_time_s;
  j["stages"] = stages;
  j["stages_shown"] = shown;
  j["lanes"] = sim.stream_names;
  j["kinds"] = kinds;
  j["spans_total"] = sel.size();
  j["span_cap"] = kTimelineSpanCap;
  Json rows = Json::array();
  if (sel.size() <= static_cast<size_t>(kTimelineSpanCap)) {
    j["mode"] = "spans";
    j["columns"] = Json::array({"stage", "lane", "kind", "start_us", "dur_us", "name"});
    for (size_t i = 0; i < sel.size(); ++i) {
      const StepSpan& s = *sel[i];
      rows.push_back(
          Json::array({s.stage, s.stream, kind_of[i], Us(s.start_s), Us(s.dur_s), s.name}));
    }
  } else {
    // Group the spans by lane (sel is sorted by stage, then lane).
    std::vector<std::pair<size_t, size_t>> lanes;  // [first, last) in sel
    for (size_t i = 0; i < sel.size(); ++i) {
      if (i == 0 || sel[i]->stage != sel[i - 1]->stage || sel[i]->stream != sel[i - 1]->stream) {
        lanes.push_back({i, i});
      }
      lanes.back().second = i + 1;
    }
    const int bins =
        std::clamp(kTimelineSpanCap / std::max<int>(1, static_cast<int>(lanes.size())), 1, 400);
    const double w = horizon / bins;
    j["mode"] = "binned";
    j["bin_us"] = Us(w);
    j["columns"] = Json::array({"stage", "lane", "kind", "start_us", "dur_us", "busy"});
    for (const auto& [lo, hi] : lanes) {
      std::vector<const StepSpan*> lane(sel.begin() + static_cast<std::ptrdiff_t>(lo),
                                        sel.begin() + static_cast<std::ptrdiff_t>(hi));
      std::vector<int> kinds_of_lane(kind_of.begin() + static_cast<std::ptrdiff_t>(lo),
                                     kind_of.begin() + static_cast<std::ptrdiff_t>(hi));
      BinnedRows(lane, kinds_of_lane, bins, w, &rows);
    }
  }
  j["rows"] = rows;
  return j;
}

Json InferTimelineJson(const InferResult& r) {
  const std::vector<IterationRecord>& its = r.trace_iterations;
  const double blocks = static_cast<double>(r.deployment.memory.kv_blocks_per_replica);
  double horizon = 0;
  for (const IterationRecord& it : its) horizon = std::max(horizon, it.start_s + it.dur_s);
  const int bins = std::min<int>(kServeTimelineBins, static_cast<int>(its.size()));
  Json j;
  j["engine"] = 0;
  j["iterations"] = its.size();
  j["duration_s"] = Ns(horizon);
  j["kv_blocks"] = r.deployment.memory.kv_blocks_per_replica;
  j["columns"] = Json::array({"start_s", "batch_mean", "batch_max", "kv_use_mean", "busy"});
  Json rows = Json::array();
  if (bins > 0 && horizon > 0) {
    const double w = horizon / bins;
    j["bin_s"] = Ns(w);
    std::vector<double> busy(static_cast<size_t>(bins), 0), batch(busy), kv(busy);
    std::vector<int> peak(static_cast<size_t>(bins), 0);
    for (const IterationRecord& it : its) {
      const double a = it.start_s, b = a + it.dur_s;
      for (int k = std::max(0, static_cast<int>(a / w)); k < bins && k * w <= b; ++k) {
        const double ov = std::min(b, (k + 1) * w) - std::max(a, k * w);
        const size_t i = static_cast<size_t>(k);
        if (ov > 0 || (it.dur_s == 0 && k * w <= a)) peak[i] = std::max(peak[i], it.batch);
        if (ov <= 0) continue;
        busy[i] += ov;
        batch[i] += it.batch * ov;
        kv[i] += static_cast<double>(it.kv_blocks_used) * ov;
      }
    }
    for (size_t i = 0; i < busy.size(); ++i) {
      const double bz = busy[i];
      rows.push_back(
          Json::array({Ns(static_cast<double>(i) * w), bz > 0 ? Round(batch[i] / bz, 1e3) : 0.0,
                       peak[i], bz > 0 && blocks > 0 ? Round(kv[i] / bz / blocks, 1e5) : 0.0,
                       Round(std::min(1.0, bz / w), 1e4)}));
    }
  }
  j["rows"] = rows;
  return j;
}

}  // namespace ndt
