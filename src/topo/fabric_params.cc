// File: topo/fabric_params.cc
// Reads data/fabric.yaml strictly (core/yaml.h): latencies with units, the cube-mesh pairs.
#include "topo/fabric_params.h"

#include <cstdlib>
#include <set>
#include <utility>

#include "core/yaml.h"

namespace ndt {
namespace {

StatusOr<FabricParams> FromMap(const YamlMap& top) {
  FabricParams p;
  NDT_ASSIGN_OR_RETURN(YamlMap lat, top.Map("latency"));
  struct Field {
    const char* key;
    double* out;
  };
  const Field fields[] = {
      {"nvlink_link", &p.nvlink_latency_s}, {"pcie_link", &p.pcie_latency_s},
      {"c2c_link", &p.c2c_latency_s},       {"cpu_cpu_link", &p.cpu_cpu_latency_s},
      {"nic_link", &p.nic_latency_s},       {"switch_link", &p.switch_latency_s},
  };
  for (const Field& f : fields) {
    NDT_ASSIGN_OR_RETURN(Sourced q, lat.Quantity(f.key, Dim::kTime));
    if (q.value < 0) return lat.Error(f.key, "latency must be >= 0");
    *f.out = q.value;
  }
  NDT_RETURN_IF_ERROR(lat.Finish());

  NDT_ASSIGN_OR_RETURN(YamlMap mesh, top.Map("cube_mesh"));
  NDT_ASSIGN_OR_RETURN(p.cube_mesh_source, mesh.String("source"));
  NDT_ASSIGN_OR_RETURN(int64_t gpus, mesh.Int("gpus"));
  if (gpus < 2) return mesh.Error("gpus", "need at least 2 GPUs");
  p.cube_mesh_gpus = static_cast<int>(gpus);
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> pairs, mesh.MapList("pairs"));
  std::set<std::pair<int, int>> seen;
  for (const YamlMap& m : pairs) {
    NDT_ASSIGN_OR_RETURN(int64_t a, m.Int("a"));
    NDT_ASSIGN_OR_RETURN(int64_t b, m.Int("b"));
    NDT_ASSIGN_OR_RETURN(int64_t lanes, m.Int("lanes"));
    NDT_RETURN_IF_ERROR(m.Finish());
    if (a < 0 || b < 0 || a >= gpus || b >= gpus || a == b) {
      return m.Error("a", "GPU indices must be distinct and in 0.." + std::to_string(gpus - 1));
    }
    if (lanes < 1) return m.Error("lanes", "must be at least 1");
    if (a > b) std::swap(a, b);
    if (!seen.insert({static_cast<int>(a), static_cast<int>(b)}).second) {
      return m.Error("a", "pair listed twice; list each GPU pair once");
    }
    p.cube_mesh.push_back({static_cast<int>(a), static_cast<int>(b), static_cast<int>(lanes)});
  }
  NDT_RETURN_IF_ERROR(mesh.Finish());
  NDT_RETURN_IF_ERROR(top.Finish());
  return p;
}

}  // namespace

StatusOr<FabricParams> LoadFabricParams(const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(YamlMap top, LoadYamlMapFile(data_dir + "/fabric.yaml"));
  return FromMap(top);
}

StatusOr<FabricParams> ParseFabricParams(const std::string& text, const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap top, LoadYamlMapString(text, name));
  return FromMap(top);
}

}  // namespace ndt
