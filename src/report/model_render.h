// File: report/model_render.h
// `ndtwin model list` and `ndtwin model show`'s renderings of model presets
// (model/transformer.h) with derived numbers: parameters, FLOPs per token, KV-cache bytes per
// token. JSON schemas ndtwin.model_list/1 and ndtwin.model/1.
#ifndef NDTWIN_REPORT_MODEL_RENDER_H_
#define NDTWIN_REPORT_MODEL_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/transformer.h"

namespace ndt {

using Json = nlohmann::ordered_json;

Json ModelListJson(const std::vector<TransformerSpec>& models);
std::string ModelListText(const std::vector<TransformerSpec>& models);
Json ModelShowJson(const TransformerSpec& s);
std::string ModelShowText(const TransformerSpec& s);

}  // namespace ndt

#endif  // NDTWIN_REPORT_MODEL_RENDER_H_
