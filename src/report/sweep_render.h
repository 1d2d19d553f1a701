// File: report/sweep_render.h
// `ndtwin sweep`'s renderings: what ran (points, ok, errors, threads, ranks), the Pareto frontier
// and the best rows, each row's point shown by its varied keys; text and ndtwin.sweep/1.
#ifndef NDTWIN_REPORT_SWEEP_RENDER_H_
#define NDTWIN_REPORT_SWEEP_RENDER_H_

#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace ndt {

// A finished sweep: its spec, the database written and its store mode, the run's counts, and the
// rows asked for (the Pareto frontier over `pareto` when given, the best `top` by `by` when top
// > 0).
struct SweepView {
  const SweepSpec& spec;
  const std::string& out;
  const std::string& store;
  const SweepStats& stats;
  const std::vector<std::string>& pareto;  // the frontier's columns; empty: none asked
  const std::string& pareto_asked;         // them as given ("a,b")
  const std::vector<SweepPick>& front;
  int top = 0;
  const std::string& by;
  const std::vector<SweepPick>& best;
};

Json SweepJson(const SweepView& v);
std::string SweepText(const SweepView& v);

}  // namespace ndt

#endif  // NDTWIN_REPORT_SWEEP_RENDER_H_
