// File: report/fleet_render.h
// `ndtwin fleet`'s renderings: interruptions by class, MTBI, checkpoint write/load, restart
// cost, goodput (closed form and Monte Carlo), time to train and cost (p10/p50/p90), lost
// GPU-hours by cause and Azure placement, as text and as the ndtwin.fleet/1 JSON document; and
// the Perfetto timeline of one simulated run. The numbers come from fleet/fleet.h.
#ifndef NDTWIN_REPORT_FLEET_RENDER_H_
#define NDTWIN_REPORT_FLEET_RENDER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fleet/fleet.h"
#include "hw/catalog.h"
#include "report/trace.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// One fleet run as `fleet` computed it.
struct FleetView {
  const SkuSpec& sku;
  const std::string& model_name;  // "" if none
  const FleetCluster& cluster;
  int spares = 0;
  double step_s = 0;
  bool step_simulated = false;  // simulated as train does, else given (--step-time)
  double tokens_per_step = 0;   // 0 if unknown
  double tokens = 0;            // the run's tokens; 0 for a wall-clock window of `days`
  double days = 0;
  int runs = 0;
  uint64_t seed = 0;
  double failure_scale = 1;
  CheckpointTarget target = CheckpointTarget::kBlob;
  bool async_checkpoint = false;
  const RunLength& length;
  const FleetModel& model;
  const CheckpointPlan& checkpoint;
  const MonteCarloResult& monte_carlo;
  const ClosedForm& closed_form;
  double interval_s = 0;
  bool interval_given = false;  // else the simulated optimum
  const Placement& placement;
  std::string arch;    // the GPU's architecture class (ArchClassName)
  std::string fitted;  // the hardware generation the interruption rates were fitted on
};

Json FleetJson(const FleetView& v);
std::string FleetText(const FleetView& v);
// One simulated run's timeline: the job's spans on one track, its interruptions on another.
Trace FleetTrace(const std::vector<FleetSpan>& spans, uint64_t seed);

}  // namespace ndt

#endif  // NDTWIN_REPORT_FLEET_RENDER_H_
