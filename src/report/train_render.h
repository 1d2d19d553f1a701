// File: report/train_render.h
// `ndtwin train`'s renderings: the text the CLI prints, the ndtwin.train/1 JSON document and the
// Chrome/Perfetto trace of the step, over the result of one simulated iteration
// (parallel/train.h) and Azure's placement of its VMs (fleet/fleet.h).
#ifndef NDTWIN_REPORT_TRAIN_RENDER_H_
#define NDTWIN_REPORT_TRAIN_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>

#include "fleet/fleet.h"
#include "hw/catalog.h"
#include "parallel/train.h"
#include "report/intervals.h"
#include "report/trace.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// What `train` rendered: the job with its strategy, the stack's name, the size, the report, the
// interval class of its step, and the placement of its VMs.
struct TrainView {
  const TrainJob& job;
  const std::string& stack;
  const SkuSpec& sku;
  const TrainReport& report;
  const IntervalClass& interval;
  const Placement& placement;
  const PlacementData& limits;
  int fabric_nics = 0;  // NICs of the cluster's fabric: 0 for a size without InfiniBand
  // The size's GPU: the precision the Strategy line and "strategy.precision" name is the one it
  // computes in (compute/ EffectivePrecision: bf16 runs in fp16 on a V100); null: as asked.
  const GpuSpec* gpu = nullptr;
};

// The ndtwin.train/1 document; "placement" only where the cluster has a scale-out fabric.
Json TrainJson(const TrainView& v);
// The text: one line per fact; a "Placement:" line where the limits bind (more VMs than a scale
// set holds by default on a size with InfiniBand, or NVL72 racks).
std::string TrainText(const TrainView& v);
// One track per pipeline stage and stream, one span per simulated task.
Trace TrainTrace(const TrainReport& r);

}  // namespace ndt

#endif  // NDTWIN_REPORT_TRAIN_RENDER_H_
