// File: report/timeline_json.h
// Compact, bounded time series for the report's charts, added to a command's --json document
// when asked (train --timeline, infer --timeline; --report turns them on):
//   TrainTimelineJson: the simulated step's spans per pipeline stage and lane (compute, pp send
//     fwd/bwd, dp comm), as `--trace` writes them, for a Gantt chart. At most kTimelineSpanCap
//     rows: with more than kTimelineMaxStages stages an evenly spaced subset is shown (first and
//     last included); when the spans of those still exceed the cap, each lane is cut into equal
//     time bins and a row is a run of bins with the same dominant kind and busy fraction (the
//     document says which: "mode": "spans" | "binned").
//   InferTimelineJson: engine 0's batch size and KV-cache use over the simulated run, time-
//     weighted means (and the batch's peak) in at most kServeTimelineBins equal time bins.
// Rows are arrays in the order "columns" names (a few bytes per span instead of an object);
// times in microseconds (train) or seconds (infer), rounded to nanoseconds. Deterministic.
#ifndef NDTWIN_REPORT_TIMELINE_JSON_H_
#define NDTWIN_REPORT_TIMELINE_JSON_H_

#include <nlohmann/json.hpp>

#include "parallel/train_sim.h"
#include "serve/service.h"

namespace ndt {

inline constexpr int kTimelineSpanCap = 4000;
inline constexpr int kTimelineMaxStages = 8;
inline constexpr int kServeTimelineBins = 200;

// REQUIRES: `sim` simulated with want_trace (stream_names and spans filled); `stages` the pp.
nlohmann::ordered_json TrainTimelineJson(const TrainSimResult& sim, int stages);

// REQUIRES: `r` run with record_trace (trace_iterations filled; empty gives no rows).
nlohmann::ordered_json InferTimelineJson(const InferResult& r);

}  // namespace ndt

#endif  // NDTWIN_REPORT_TIMELINE_JSON_H_
