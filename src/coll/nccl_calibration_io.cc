// Reads data/calibration/nccl.yaml (coll/nccl_model.h LoadNcclCalibration). Every entry is
// {value, [unit: ratio], fitted_on, how}: a time carries its unit in the value ("5.35 us"), a
// ratio says `unit: ratio`; fitted_on and how are required, so no number enters without the data
// it was fitted on and the procedure.
#include <string>

#include "coll/nccl_model.h"
#include "core/yaml.h"

namespace ndt {
namespace {

// {value: "<time>", fitted_on, how} -> seconds.
StatusOr<double> Time(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(YamlMap e, m.Map(key));
  NDT_ASSIGN_OR_RETURN(Sourced v, e.Quantity("value", Dim::kTime));
  NDT_ASSIGN_OR_RETURN(std::string fitted, e.String("fitted_on"));
  NDT_ASSIGN_OR_RETURN(std::string how, e.String("how"));
  if (fitted.empty() || how.empty())
    return e.Error("fitted_on", "say what it was fitted on and how");
  NDT_RETURN_IF_ERROR(e.Finish());
  if (!(v.value >= 0)) return e.Error("value", "must be >= 0");
  return v.value;
}

// {value: <number>, unit: ratio, fitted_on, how} -> the ratio (in (0, 2]).
StatusOr<double> Ratio(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(YamlMap e, m.Map(key));
  NDT_ASSIGN_OR_RETURN(double v, e.Number("value"));
  NDT_ASSIGN_OR_RETURN(std::string unit, e.String("unit"));
  if (unit != "ratio") return e.Error("unit", "'" + unit + "'; a ratio says `unit: ratio`");
  NDT_ASSIGN_OR_RETURN(std::string fitted, e.String("fitted_on"));
  NDT_ASSIGN_OR_RETURN(std::string how, e.String("how"));
  if (fitted.empty() || how.empty())
    return e.Error("fitted_on", "say what it was fitted on and how");
  NDT_RETURN_IF_ERROR(e.Finish());
  if (!(v > 0 && v <= 2)) return e.Error("value", "a ratio must be in (0, 2]");
  return v;
}

StatusOr<NcclCalibrationSet> FromMap(const YamlMap& top) {
  NcclCalibrationSet s;
  NcclCalibration& b = s.base;
  NDT_ASSIGN_OR_RETURN(b.bw_efficiency, Ratio(top, "bw_efficiency"));
  NDT_ASSIGN_OR_RETURN(b.call_overhead_per_gpu_s, Time(top, "call_overhead_per_gpu"));
  NDT_ASSIGN_OR_RETURN(b.kernel_gap_s, Time(top, "kernel_gap"));
  NDT_ASSIGN_OR_RETURN(b.simple_step_sync_s, Time(top, "simple_step_sync"));
  NDT_ASSIGN_OR_RETURN(b.ll128_bw_ratio, Ratio(top, "ll128_bw_ratio"));
  NDT_ASSIGN_OR_RETURN(YamlMap bw, top.Map("blackwell_nvlink"));
  NDT_ASSIGN_OR_RETURN(s.blackwell_bw_efficiency, Ratio(bw, "bw_efficiency"));
  NDT_ASSIGN_OR_RETURN(s.blackwell_ll_bw_ratio, Ratio(bw, "ll_bw_ratio"));
  NDT_ASSIGN_OR_RETURN(s.blackwell_ll128_bw_ratio, Ratio(bw, "ll128_bw_ratio"));
  NDT_ASSIGN_OR_RETURN(s.blackwell_simple_step_sync_s, Time(bw, "simple_step_sync"));
  NDT_RETURN_IF_ERROR(bw.Finish());
  NDT_ASSIGN_OR_RETURN(s.hopper_nvls_efficiency, Ratio(top, "hopper_nvls_efficiency"));
  NDT_ASSIGN_OR_RETURN(s.hopper_nvls_loop_step_s, Time(top, "hopper_nvls_loop_step"));
  NDT_ASSIGN_OR_RETURN(s.grace_call_overhead_per_gpu_s, Time(top, "grace_call_overhead_per_gpu"));
  NDT_RETURN_IF_ERROR(top.Finish());
  return s;
}

}  // namespace

StatusOr<NcclCalibrationSet> LoadNcclCalibration(const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(YamlMap top, LoadYamlMapFile(data_dir + "/calibration/nccl.yaml"));
  NDT_ASSIGN_OR_RETURN(NcclCalibrationSet set, FromMap(top));
  NDT_ASSIGN_OR_RETURN(set.tuning, LoadNcclTuning(data_dir));
  return set;
}

StatusOr<NcclCalibrationSet> ParseNcclCalibration(const std::string& text,
                                                  const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap top, LoadYamlMapString(text, name));
  return FromMap(top);
}

}  // namespace ndt
