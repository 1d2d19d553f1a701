// File: report/topo_render.h
// `ndtwin topo`'s renderings: the cluster's summary (GPUs, NVLink domain, per-GPU NVLink and
// scale-out bandwidth in GB/s per direction, nodes and links by kind, bisection, fat-tree shape,
// placement, assumed latencies), the DOT file written and the route between two GPU ranks hop by
// hop, as text and as the ndtwin.topo/1 JSON document.
#ifndef NDTWIN_REPORT_TOPO_RENDER_H_
#define NDTWIN_REPORT_TOPO_RENDER_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "fleet/fleet.h"
#include "topo/cluster.h"
#include "topo/fabric_params.h"

namespace ndt {

using Json = nlohmann::ordered_json;

struct TopoView {
  const Cluster& cluster;
  const FabricParams& fabric;  // the assumed latencies the cluster was built with
  const Placement& placement;
  const PlacementData& limits;
  std::string dot_file;                     // "" when no DOT file was written
  std::optional<std::pair<int, int>> path;  // GPU ranks whose route is shown
};

Json TopoJson(const TopoView& v);
std::string TopoText(const TopoView& v);

}  // namespace ndt

#endif  // NDTWIN_REPORT_TOPO_RENDER_H_
