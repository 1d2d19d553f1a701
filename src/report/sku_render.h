// File: report/sku_render.h
// `ndtwin sku list` and `ndtwin sku show`'s renderings of the hardware catalog (hw/catalog.h):
// the seeds' table and one size in full with its GPU, sources, conflicts between sources and
// prices. Text uses the tables' units (GiB, Mbps, Gb/s); JSON (ndtwin.sku_list/1, ndtwin.sku/1)
// uses the same units, named in the keys.
#ifndef NDTWIN_REPORT_SKU_RENDER_H_
#define NDTWIN_REPORT_SKU_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hw/catalog.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// The sizes in the order given.
Json SkuListJson(const std::vector<const SkuSpec*>& skus);
std::string SkuListText(const std::vector<const SkuSpec*>& skus);
// One size and its GPU.
Json SkuShowJson(const SkuSpec& sku, const GpuSpec& gpu);
std::string SkuShowText(const SkuSpec& sku, const GpuSpec& gpu);

}  // namespace ndt

#endif  // NDTWIN_REPORT_SKU_RENDER_H_
