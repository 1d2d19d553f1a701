// File: fleet/fleet_data.cc
// Reads data/reliability.yaml, data/storage.yaml and data/placement.yaml strictly (core/yaml.h).
#include <cmath>
#include <set>

#include "core/yaml.h"
#include "fleet/fleet.h"

namespace ndt {
namespace {

StatusOr<double> Positive(const YamlMap& m, const char* key, Dim dim) {
  NDT_ASSIGN_OR_RETURN(Sourced q, m.Quantity(key, dim));
  if (!(q.value > 0)) return m.Error(key, "must be > 0");
  return q.value;
}

StatusOr<double> PositiveCount(const YamlMap& m, const char* key) {
  NDT_ASSIGN_OR_RETURN(Sourced q, m.Count(key));
  if (!(q.value > 0)) return m.Error(key, "must be > 0");
  return q.value;
}

StatusOr<ReliabilityData> ParseReliability(const YamlMap& top) {
  ReliabilityData r;
  NDT_ASSIGN_OR_RETURN(r.hardware_generation, top.String("hardware_generation"));
  NDT_ASSIGN_OR_RETURN(YamlMap ex, top.Map("exposure"));
  NDT_ASSIGN_OR_RETURN(r.exposure_hours, PositiveCount(ex, "hours"));
  NDT_ASSIGN_OR_RETURN(r.exposure_gpus, PositiveCount(ex, "gpus"));
  NDT_ASSIGN_OR_RETURN(r.exposure_vms, PositiveCount(ex, "vms"));
  NDT_ASSIGN_OR_RETURN(r.exposure_nics, PositiveCount(ex, "nics"));
  NDT_ASSIGN_OR_RETURN(r.exposure_switches, PositiveCount(ex, "switches"));
  NDT_RETURN_IF_ERROR(ex.Finish());
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> classes, top.MapList("classes"));
  if (classes.empty()) return top.Error("classes", "list at least one failure class");
  std::set<std::string> seen;
  for (const YamlMap& m : classes) {
    FailureClass c;
    NDT_ASSIGN_OR_RETURN(c.name, m.String("name"));
    if (!seen.insert(c.name).second) return m.Error("name", "class '" + c.name + "' twice");
    NDT_ASSIGN_OR_RETURN(std::string unit, m.String("unit"));
    double units = 0;
    if (unit == "gpu") {
      c.unit = FailureUnit::kGpu;
      units = r.exposure_gpus;
    } else if (unit == "vm") {
      c.unit = FailureUnit::kVm;
      units = r.exposure_vms;
    } else if (unit == "nic") {
      c.unit = FailureUnit::kNic;
      units = r.exposure_nics;
    } else if (unit == "switch") {
      c.unit = FailureUnit::kSwitch;
      units = r.exposure_switches;
    } else {
      return m.Error("unit", "'" + unit + "'; use gpu, vm, nic or switch");
    }
    NDT_ASSIGN_OR_RETURN(c.planned, m.Bool("planned"));
    NDT_ASSIGN_OR_RETURN(c.needs_new_vm, m.Bool("needs_new_vm"));
    NDT_ASSIGN_OR_RETURN(Sourced count, m.Count("count"));
    c.count = count.value;
    c.source = count.source;
    NDT_ASSIGN_OR_RETURN(c.rate_per_unit_hour, m.Number("rate_per_unit_hour"));
    NDT_ASSIGN_OR_RETURN(c.derived, m.String("derived"));
    NDT_RETURN_IF_ERROR(m.Finish());
    if (c.count < 0 || c.rate_per_unit_hour < 0) return m.Error("count", "must be >= 0");
    const double fit = c.count / (units * r.exposure_hours);
    if (std::abs(c.rate_per_unit_hour - fit) > 1e-3 * fit) {
      return m.Error("rate_per_unit_hour", "does not equal count / (exposure " + unit +
                                               "s x hours) = " + std::to_string(fit));
    }
    r.classes.push_back(c);
  }
  NDT_ASSIGN_OR_RETURN(YamlMap rs, top.Map("restart"));
  NDT_ASSIGN_OR_RETURN(r.detection_s, Positive(rs, "detection", Dim::kTime));
  NDT_ASSIGN_OR_RETURN(r.spare_swap_s, Positive(rs, "spare_swap", Dim::kTime));
  NDT_ASSIGN_OR_RETURN(r.new_vm_s, Positive(rs, "new_vm", Dim::kTime));
  NDT_ASSIGN_OR_RETURN(r.init_per_gpu_s, Positive(rs, "init_per_gpu", Dim::kTime));
  NDT_ASSIGN_OR_RETURN(r.init_per_gpu_unoptimized_s,
                       Positive(rs, "init_per_gpu_unoptimized", Dim::kTime));
  NDT_RETURN_IF_ERROR(rs.Finish());
  NDT_RETURN_IF_ERROR(top.Finish());
  return r;
}

StatusOr<StorageData> ParseStorage(const YamlMap& top) {
  StorageData s;
  NDT_ASSIGN_OR_RETURN(YamlMap nv, top.Map("nvme"));
  NDT_ASSIGN_OR_RETURN(s.nvme_write_per_disk_Bps, Positive(nv, "write_per_disk", Dim::kBandwidth));
  NDT_ASSIGN_OR_RETURN(s.nvme_read_per_disk_Bps, Positive(nv, "read_per_disk", Dim::kBandwidth));
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> disks, nv.MapList("disks"));
  for (const YamlMap& d : disks) {
    NDT_ASSIGN_OR_RETURN(std::string sku, d.String("sku"));
    NDT_ASSIGN_OR_RETURN(double n, PositiveCount(d, "value"));
    NDT_ASSIGN_OR_RETURN(std::string src, d.String("source"));
    NDT_RETURN_IF_ERROR(d.Finish());
    s.nvme_disks.emplace_back(sku, static_cast<int>(n));
  }
  NDT_ASSIGN_OR_RETURN(double dd, PositiveCount(nv, "default_disks"));
  s.nvme_default_disks = static_cast<int>(dd);
  NDT_RETURN_IF_ERROR(nv.Finish());
  for (const auto& [key, w, r] : {std::tuple{"blob", &s.blob_write_Bps, &s.blob_read_Bps},
                                  std::tuple{"lustre", &s.lustre_write_Bps, &s.lustre_read_Bps}}) {
    NDT_ASSIGN_OR_RETURN(YamlMap m, top.Map(key));
    NDT_ASSIGN_OR_RETURN(*w, Positive(m, "write", Dim::kBandwidth));
    NDT_ASSIGN_OR_RETURN(*r, Positive(m, "read", Dim::kBandwidth));
    NDT_RETURN_IF_ERROR(m.Finish());
  }
  NDT_ASSIGN_OR_RETURN(YamlMap mem, top.Map("memory"));
  NDT_ASSIGN_OR_RETURN(s.memory_usable_frac, Positive(mem, "usable_host_fraction", Dim::kFraction));
  NDT_RETURN_IF_ERROR(mem.Finish());
  NDT_RETURN_IF_ERROR(top.Finish());
  return s;
}

StatusOr<PlacementData> ParsePlacement(const YamlMap& top) {
  PlacementData p;
  NDT_ASSIGN_OR_RETURN(Sourced def, top.Count("scale_set_default_vms"));
  NDT_ASSIGN_OR_RETURN(Sourced max, top.Count("scale_set_max_vms"));
  NDT_ASSIGN_OR_RETURN(Sourced av, top.Count("availability_set_max_vms"));
  NDT_ASSIGN_OR_RETURN(Sourced rack, top.Count("rack_vms"));
  NDT_RETURN_IF_ERROR(top.Finish());
  if (def.value < 1 || max.value < def.value) {
    return top.Error("scale_set_max_vms", "need 1 <= scale_set_default_vms <= scale_set_max_vms");
  }
  if (rack.value < 1 || av.value < 1) return top.Error("rack_vms", "must be >= 1");
  p.scale_set_default_vms = static_cast<int>(def.value);
  p.scale_set_max_vms = static_cast<int>(max.value);
  p.availability_set_max_vms = static_cast<int>(av.value);
  p.rack_vms = static_cast<int>(rack.value);
  p.scale_set_source = max.source;
  p.rack_source = rack.source;
  return p;
}

}  // namespace

StatusOr<FleetData> LoadFleetData(const std::string& data_dir) {
  FleetData d;
  NDT_ASSIGN_OR_RETURN(YamlMap rel, LoadYamlMapFile(data_dir + "/reliability.yaml"));
  NDT_ASSIGN_OR_RETURN(d.reliability, ParseReliability(rel));
  NDT_ASSIGN_OR_RETURN(YamlMap st, LoadYamlMapFile(data_dir + "/storage.yaml"));
  NDT_ASSIGN_OR_RETURN(d.storage, ParseStorage(st));
  NDT_ASSIGN_OR_RETURN(YamlMap pl, LoadYamlMapFile(data_dir + "/placement.yaml"));
  NDT_ASSIGN_OR_RETURN(d.placement, ParsePlacement(pl));
  return d;
}

StatusOr<FleetData> ParseFleetData(const std::string& reliability_yaml,
                                   const std::string& storage_yaml,
                                   const std::string& placement_yaml) {
  FleetData d;
  NDT_ASSIGN_OR_RETURN(YamlMap rel, LoadYamlMapString(reliability_yaml, "reliability.yaml"));
  NDT_ASSIGN_OR_RETURN(d.reliability, ParseReliability(rel));
  NDT_ASSIGN_OR_RETURN(YamlMap st, LoadYamlMapString(storage_yaml, "storage.yaml"));
  NDT_ASSIGN_OR_RETURN(d.storage, ParseStorage(st));
  NDT_ASSIGN_OR_RETURN(YamlMap pl, LoadYamlMapString(placement_yaml, "placement.yaml"));
  NDT_ASSIGN_OR_RETURN(d.placement, ParsePlacement(pl));
  return d;
}

}  // namespace ndt
