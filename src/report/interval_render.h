// File: report/interval_render.h
// Prediction intervals (report/intervals.h) beside headline numbers, one scheme everywhere:
// JSON adds a sibling key "<key>_interval" next to the number "<key>" it qualifies, holding
// {"p10", "p90" (in the number's unit), "basis", "cases", "class"}; text appends
// " (p10–p90 LO–HI UNIT; N cases, CLASS)" to the line, plus "; fewer than 3 sources: default
// width" (or why else the default applies) where the class takes its workload's default.
#ifndef NDTWIN_REPORT_INTERVAL_RENDER_H_
#define NDTWIN_REPORT_INTERVAL_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "report/intervals.h"

namespace ndt {

using Json = nlohmann::ordered_json;

Json IntervalJson(const IntervalClass& c, std::pair<double, double> lo_hi);
// num_fmt formats one bound (e.g. "%.2f"); unit follows the bounds ("" for none).
std::string IntervalText(const IntervalClass& c, std::pair<double, double> lo_hi,
                         const char* num_fmt, const std::string& unit);

}  // namespace ndt

#endif  // NDTWIN_REPORT_INTERVAL_RENDER_H_
