#include "report/validate_render.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

namespace ndt {
namespace {

Json SummaryJson(const ValidationSummary& s) {
  Json j;
  j["cases"] = s.n;
  j["mean_abs_error"] = s.mean;
  j["median_abs_error"] = s.median;
  j["max_abs_error"] = s.max;
  j["worst_case"] = s.worst;
  j["refused"] = s.refused;
  return j;
}

// The validation rows (not used to fit a parameter) and the calibration rows of a suite.
void SplitRows(const std::vector<ValidationRow>& rows, std::vector<ValidationRow>* val,
               std::vector<ValidationRow>* cal) {
  for (const ValidationRow& r : rows) (r.calibration ? *cal : *val).push_back(r);
}

}  // namespace

ValidationSummary SummarizeErrors(const std::vector<ValidationRow>& rows) {
  ValidationSummary s;
  std::vector<double> errs;
  for (const ValidationRow& r : rows) {
    if (!r.refused.empty()) {
      ++s.refused;
      continue;
    }
    double e = std::fabs(r.error());
    errs.push_back(e);
    if (e >= s.max) {
      s.max = e;
      s.worst = r.case_id;
    }
  }
  s.n = static_cast<int>(errs.size());
  if (errs.empty()) return s;
  double sum = 0;
  for (double e : errs) sum += e;
  s.mean = sum / errs.size();
  std::sort(errs.begin(), errs.end());
  size_t m = errs.size() / 2;
  s.median = errs.size() % 2 ? errs[m] : (errs[m - 1] + errs[m]) / 2;
  return s;
}

std::string ShownDataDir(const std::string& given, const std::string& dir,
                         const std::string& repo) {
  if (!given.empty()) return given;
  namespace fs = std::filesystem;
  const fs::path d = fs::path(dir).lexically_normal(), r = fs::path(repo).lexically_normal();
  const fs::path rel = d.lexically_relative(r);
  int ups = 0;
  for (const fs::path& part : rel) ups += part == "..";
  if (!rel.empty() && ups <= 1) {
    std::string s = rel.string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
  }
  // Elsewhere: its last two names ("share/ndtwin"); a trailing "/" gives an empty filename.
  fs::path tail = d.has_filename() ? d : d.parent_path();
  const std::string name = tail.filename().string();
  const std::string parent = tail.parent_path().filename().string();
  return parent.empty() || parent == "/" ? name : parent + "/" + name;
}

Json ValidateJson(const ValidateView& v) {
  Json out;
  out["schema"] = "ndtwin.validate/1";
  out["ndtwin_version"] = NDT_VERSION;
  out["data"] = v.data;
  Json jsuites = Json::array();
  for (const ValidateSuite& s : v.suites) {
    std::vector<ValidationRow> cal, val;
    SplitRows(s.rows, &val, &cal);
    ValidationSummary sv = SummarizeErrors(val), sc = SummarizeErrors(cal);
    Json jrows = Json::array();
    for (const ValidationRow& r : s.rows) {
      Json jr;
      jr["case"] = r.case_id;
      jr["metric"] = r.metric;
      jr["unit"] = r.unit;
      jr["measured"] = r.measured;
      if (r.refused.empty()) {
        jr["predicted"] = r.predicted;
        jr["error"] = r.error();
      } else {
        jr["predicted"] = nullptr;
        jr["error"] = nullptr;
        jr["refused"] = r.refused;
      }
      jr["calibration"] = r.calibration;
      jr["source"] = r.source;
      jrows.push_back(jr);
    }
    Json js;
    js["suite"] = s.name;
    js["validation"] = SummaryJson(sv);
    js["calibration"] = SummaryJson(sc);
    js["rows"] = jrows;
    jsuites.push_back(js);
  }
  out["suites"] = jsuites;
  if (v.written != nullptr) {
    Json jiv = Json::array();
    for (const IntervalClass& c : v.written->classes) {
      jiv.push_back(Json{{"class", c.name},
                         {"cases", c.cases},
                         {"sources", c.sources},
                         {"p10", c.p10},
                         {"p90", c.p90},
                         {"basis", c.basis}});
    }
    out["intervals"] = jiv;
  }
  return out;
}

std::string ValidateText(const ValidateView& v) {
  std::string text;
  for (const ValidateSuite& s : v.suites) {
    const std::string& suite = s.name;
    const std::vector<ValidationRow>* rows = &s.rows;
    std::vector<ValidationRow> cal, val;
    SplitRows(s.rows, &val, &cal);
    ValidationSummary sv = SummarizeErrors(val), sc = SummarizeErrors(cal);

    text += fmt::format("== {} ({} validation cases, {} calibration cases)\n", suite,
                        sv.n + sv.refused, sc.n);
    size_t wc = 4, wm = 6;  // column widths: the longest case and metric of the suite
    for (const ValidationRow& r : *rows) {
      wc = std::max(wc, r.case_id.size());
      wm = std::max(wm, r.metric.size());
    }
    text += fmt::format("{:<{}} {:<{}} {:>12} {:>12} {:>8}\n", "case", wc, "metric", wm, "measured",
                        "predicted", "error");
    for (const ValidationRow& r : *rows) {
      if (r.refused.empty()) {
        text += fmt::format("{:<{}} {:<{}} {:>12.4g} {:>12.4g} {:>+7.1f}%{}\n", r.case_id, wc,
                            r.metric, wm, r.measured, r.predicted, 100 * r.error(),
                            r.calibration ? "  (calibration)" : "");
      } else {
        text += fmt::format("{:<{}} {:<{}} {:>12.4g} {:>12} {:>8}  refused: {}\n", r.case_id, wc,
                            r.metric, wm, r.measured, "-", "-", r.refused);
      }
    }
    if (sv.n > 0) {
      text += fmt::format("validation: mean |error| {:.1f}%, median {:.1f}%, max {:.1f}% ({})\n",
                          100 * sv.mean, 100 * sv.median, 100 * sv.max, sv.worst);
    }
    // With several sources in a suite, each source's own summary: one bad family of cases
    // should not hide (or be hidden by) the others.
    std::vector<std::string> sources;
    for (const ValidationRow& r : val) {
      if (std::find(sources.begin(), sources.end(), r.source) == sources.end()) {
        sources.push_back(r.source);
      }
    }
    for (size_t i = 0; sources.size() > 1 && i < sources.size(); ++i) {
      std::vector<ValidationRow> part;
      for (const ValidationRow& r : val) {
        if (r.source == sources[i]) part.push_back(r);
      }
      const ValidationSummary ss = SummarizeErrors(part);
      if (ss.n < 2) continue;  // a one-case source is its own row above
      text += fmt::format("  {}: {} cases, mean |error| {:.1f}%, max {:.1f}%\n", sources[i], ss.n,
                          100 * ss.mean, 100 * ss.max);
    }
    if (sv.refused > 0) {
      text += fmt::format("refused: {} case(s) that ran for real, which the model would not run\n",
                          sv.refused);
    }
    if (sc.n > 0) {
      text +=
          fmt::format("calibration fit: mean |error| {:.1f}%, median {:.1f}%, max {:.1f}% ({})\n",
                      100 * sc.mean, 100 * sc.median, 100 * sc.max, sc.worst);
    }
    text += "\n";
  }
  if (v.written != nullptr) {
    text += "intervals (measured/predicted p10-p90, written to data/calibration/intervals.yaml):\n";
    for (const IntervalClass& c : v.written->classes) {
      text += fmt::format("  {:<24} {:>3} {:<6} p10 {:.3f}  p90 {:.3f}  {}\n", c.name, c.cases,
                          c.cases == 1 ? "case" : "cases", c.p10, c.p90, c.basis);
    }
  }
  return text;
}

}  // namespace ndt
