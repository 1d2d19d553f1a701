// File: report/collective_render.h
// `ndtwin collective`'s renderings: the nccl-tests-like table (size, count, type, time, algbw,
// busbw, algorithm, protocol) and the ndtwin.collective/1 JSON document, whose rows also carry
// each bus bandwidth's prediction interval (the text table keeps nccl-tests' columns).
#ifndef NDTWIN_REPORT_COLLECTIVE_RENDER_H_
#define NDTWIN_REPORT_COLLECTIVE_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "coll/collective.h"
#include "report/intervals.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// A priced sweep: the size, VMs and GPUs, the collective, the fidelity's name ("analytical",
// "flow"), the NCCL release whose tuner picked, and per size in bytes its result and the
// interval class of its bus bandwidth (same order).
struct CollectiveView {
  const std::string& sku;
  int vms = 1;
  int gpus = 0;
  CollOp op = CollOp::kAllReduce;
  const std::string& fidelity;
  int nccl_version = kPinnedNcclVersion;
  const std::vector<std::pair<double, CollResult>>& results;
  const std::vector<IntervalClass>& intervals;
};

Json CollectiveJson(const CollectiveView& v);
std::string CollectiveText(const CollectiveView& v);

}  // namespace ndt

#endif  // NDTWIN_REPORT_COLLECTIVE_RENDER_H_
