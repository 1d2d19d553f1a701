// File: report/plan_render.h
// `ndtwin plan train` and `ndtwin plan infer`'s renderings: the table of the best K
// configurations with what was searched (evaluated, infeasible, skipped, the objective, sizes
// left out for want of a price), as text and as ndtwin.plan_train/1 and ndtwin.plan_infer/1.
#ifndef NDTWIN_REPORT_PLAN_RENDER_H_
#define NDTWIN_REPORT_PLAN_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan/plan_infer.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// The planner's request (its model, batch, tokens, stack, fidelity, top K) and report; with
// `goodput` (one per result, plan train --with-failures) a goodput column, and days and $
// divided by it.
struct PlanTrainView {
  const PlanTrainRequest& request;
  const PlanTrainReport& report;
  const std::vector<double>* goodput = nullptr;
};

Json PlanTrainJson(const PlanTrainView& v);
std::string PlanTrainText(const PlanTrainView& v);

struct PlanInferView {
  const std::string& objective;  // as asked: "throughput" or "cost"
  Scenario scenario = Scenario::kOffline;
  const PlanInferReport& report;
  std::string model;    // its name, as plan train's JSON gives it
  std::string dataset;  // the requests' lengths, as infer names them; "" for fixed lengths
};

Json PlanInferJson(const PlanInferView& v);
std::string PlanInferText(const PlanInferView& v);

}  // namespace ndt

#endif  // NDTWIN_REPORT_PLAN_RENDER_H_
