#include "report/sweep_render.h"

#include <cstdio>
#include <string>
#include <vector>

#include "report/text.h"

namespace ndt {
namespace {

// The varied part of a stored point (the fixed keys dropped), for display.
Json Varied(const SweepSpec& spec, const std::string& params) {
  Json p = Json::parse(params);
  Json out = Json::object();
  for (auto& [k, v] : p.items()) {
    if (!spec.fixed.contains(k)) out[k] = v;
  }
  return out;
}

Json PicksJson(const SweepSpec& spec, const std::vector<std::string>& cols,
               const std::vector<SweepPick>& picks) {
  Json rows = Json::array();
  for (const SweepPick& p : picks) {
    Json r;
    r["id"] = p.id;
    r["params"] = Varied(spec, p.params);
    for (size_t k = 0; k < cols.size(); ++k) r[cols[k]] = p.values[k];
    r["warnings"] = p.warnings;  // what the command alone prints as "ndtwin: warning: ..."
    rows.push_back(r);
  }
  return rows;
}

void PicksText(TextOut& p, const SweepSpec& spec, const std::vector<std::string>& cols,
               const std::vector<SweepPick>& picks) {
  std::vector<std::string> head = {"id"};
  std::vector<bool> right = {true};
  for (const std::string& c : cols) {
    head.push_back(c);
    right.push_back(true);
  }
  head.push_back("warnings");  // how many; the JSON and warning_list in the database hold them
  right.push_back(true);
  head.push_back("point");
  right.push_back(false);
  std::vector<std::vector<std::string>> rows;
  for (const SweepPick& x : picks) {
    std::vector<std::string> r = {std::to_string(x.id)};
    for (double v : x.values) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", v);
      r.push_back(buf);
    }
    r.push_back(std::to_string(x.warnings.size()));
    r.push_back(Varied(spec, x.params).dump());
    rows.push_back(r);
  }
  p.Table(head, right, rows);
}

}  // namespace

Json SweepJson(const SweepView& v) {
  const SweepSpec& spec = v.spec;
  const SweepStats& st = v.stats;
  Json j;
  j["schema"] = "ndtwin.sweep/1";
  j["ndtwin_version"] = NDT_VERSION;
  j["command"] = spec.command;
  j["out"] = v.out;
  j["store"] = v.store;
  j["points"] = st.points;
  j["resumed"] = st.resumed;
  j["evaluated"] = st.evaluated;
  j["ok"] = st.ok;
  j["errors"] = st.errors;
  j["warned"] = st.warned;  // points with warnings (each row's in its "warnings")
  j["threads"] = st.threads;
  j["ranks"] = st.ranks;
  Json columns = Json::array();
  for (const HeadlineColumn& c : HeadlineColumns(spec.command)) columns.push_back(c.name);
  j["columns"] = columns;
  if (!v.pareto.empty()) {
    j["pareto"] = Json{{"columns", v.pareto}, {"rows", PicksJson(spec, v.pareto, v.front)}};
  }
  if (v.top > 0) {
    j["top"] = Json{{"by", v.by}, {"rows", PicksJson(spec, {v.by}, v.best)}};
  }
  return j;
}

std::string SweepText(const SweepView& v) {
  const SweepSpec& spec = v.spec;
  const SweepStats& st = v.stats;
  TextOut p;
  p("Sweep:    %s, %llu points (%llu ok, %llu errors", spec.command.c_str(),
    static_cast<unsigned long long>(st.points), static_cast<unsigned long long>(st.ok),
    static_cast<unsigned long long>(st.errors));
  if (st.warned > 0) p(", %llu with warnings", static_cast<unsigned long long>(st.warned));
  p(") in %s\n", v.out.c_str());
  p("Run:      %llu evaluated, %llu already there, on %d thread%s x %d rank%s\n",
    static_cast<unsigned long long>(st.evaluated), static_cast<unsigned long long>(st.resumed),
    st.threads, st.threads == 1 ? "" : "s", st.ranks, st.ranks == 1 ? "" : "s");
  if (!v.pareto.empty()) {
    p("\nPareto frontier over %s (%zu points):\n", v.pareto_asked.c_str(), v.front.size());
    PicksText(p, spec, v.pareto, v.front);
  }
  if (v.top > 0) {
    p("\nTop %d by %s:\n", v.top, v.by.c_str());
    PicksText(p, spec, {v.by}, v.best);
  }
  return p.take();
}

}  // namespace ndt
