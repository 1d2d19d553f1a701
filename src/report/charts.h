// File: report/charts.h
// Internal to the report module: the Vega-Lite chart builders behind ChartSpecs (report/html.h),
// one per command schema (charts.cc, train_charts.cc, infer_charts.cc, plan_charts.cc,
// hpc_charts.cc), and the
// helpers they share with each other and with the page (html.cc).
#ifndef NDTWIN_REPORT_CHARTS_H_
#define NDTWIN_REPORT_CHARTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/html.h"

namespace ndt {
namespace report_detail {

// A JSON key as a human label: underscores become spaces.
std::string Label(std::string key);

// j[key] when it is a number, else 0.
double Num(const nlohmann::ordered_json& j, const char* key);

// x with 4 significant digits.
std::string Fmt(double x);

// A Vega-Lite spec with the schema, `description` and the report's width.
nlohmann::ordered_json Base(const std::string& description);

// Drag to pan, wheel to zoom, double-click to reset.
nlohmann::ordered_json ZoomParam();

// An encoding channel {field, type, title}.
nlohmann::ordered_json Field(const std::string& field, const std::string& type,
                             const std::string& title);

// Marks each row `frontier`: true when no other row is at least as good on both axes and
// better on one. `x_min`/`y_min`: smaller is better on that axis.
void MarkPareto(nlohmann::ordered_json* rows, const std::string& x, bool x_min,
                const std::string& y, bool y_min);

// The rows of a compact table ({"columns": [...], "rows": [[...], ...]}) as objects.
nlohmann::ordered_json RowObjects(const nlohmann::ordered_json& t);

// names[i] when i indexes a string in `names`, else "?".
std::string At(const nlohmann::ordered_json& names, const nlohmann::ordered_json& i);

// The charts of each command's document (by schema).
std::vector<ChartSpec> TrainCharts(const nlohmann::ordered_json& doc);
std::vector<ChartSpec> CollectiveCharts(const nlohmann::ordered_json& doc);
std::vector<ChartSpec> InferCharts(const nlohmann::ordered_json& doc);
std::vector<ChartSpec> PlanTrainCharts(const nlohmann::ordered_json& doc);
std::vector<ChartSpec> PlanInferCharts(const nlohmann::ordered_json& doc);
std::vector<ChartSpec> TopoCharts(const nlohmann::ordered_json& doc);
std::vector<ChartSpec> HpcCharts(const nlohmann::ordered_json& doc);  // hpc_charts.cc

}  // namespace report_detail
}  // namespace ndt

#endif  // NDTWIN_REPORT_CHARTS_H_
