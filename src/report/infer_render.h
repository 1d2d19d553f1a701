// File: report/infer_render.h
// `ndtwin infer`'s renderings: the text the CLI prints, the ndtwin.infer/1 JSON document and the
// Perfetto timeline of engine 0, over the simulated service (serve/service.h).
#ifndef NDTWIN_REPORT_INFER_RENDER_H_
#define NDTWIN_REPORT_INFER_RENDER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "model/transformer.h"
#include "report/intervals.h"
#include "report/trace.h"
#include "serve/service.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// What `infer` rendered: the size and VM count asked for, the arrivals' seed, the model, the
// result, the interval class of its throughput and the serving stack named.
struct InferView {
  const std::string& sku;
  int vms = 1;
  uint64_t seed = 1;
  const TransformerSpec& model;
  const InferResult& result;
  const IntervalClass& interval;
  const std::string& stack;  // --stack, "" when none was named
  // The request lengths' dataset (preset name or CSV path); "" for fixed lengths or a trace.
  const std::string& dataset;
};

Json InferJson(const InferView& v);
std::string InferText(const InferView& v);
// Engine 0's iterations on one track, its requests on up to 256 lanes (each on the lowest lane
// free at its arrival).
Trace InferTrace(const InferResult& r);

}  // namespace ndt

#endif  // NDTWIN_REPORT_INFER_RENDER_H_
