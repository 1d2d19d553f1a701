// File: report/plan_points_json.h
// The planners' every scored configuration, compact, for the report's scatter with its Pareto
// frontier (plan train --points, plan infer --points; --report turns them on). Headline numbers
// only, as rows of arrays in the order "columns" names; "kept" is the configuration's rank in
// the command's results (0: not kept). At most kPlanPointsCap rows, the best by the objective
// first ("total" says how many there were). Deterministic.
#ifndef NDTWIN_REPORT_PLAN_POINTS_JSON_H_
#define NDTWIN_REPORT_PLAN_POINTS_JSON_H_

#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "plan/plan_infer.h"

namespace ndt {

inline constexpr size_t kPlanPointsCap = 2000;

// REQUIRES: the request had keep_scored. `with_tokens`: time to train and cost columns.
nlohmann::ordered_json PlanTrainPointsJson(const PlanTrainReport& rep, bool with_tokens);
nlohmann::ordered_json PlanInferPointsJson(const PlanInferReport& rep);

}  // namespace ndt

#endif  // NDTWIN_REPORT_PLAN_POINTS_JSON_H_
