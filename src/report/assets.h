// File: report/assets.h
// The charting libraries a report inlines (minified Vega, Vega-Lite, Vega-Embed, pinned by
// web/package-lock.json): compiled into the binary from web/node_modules by
// scripts/embed_js.cmake, so a report opens offline from an installed binary. A build without
// web/node_modules (no `make deps`) gets empty strings and HaveChartAssets() false; its reports
// still hold the inputs, the results and the chart specs, and say why the charts are missing.
#ifndef NDTWIN_REPORT_ASSETS_H_
#define NDTWIN_REPORT_ASSETS_H_

#include <string>

namespace ndt {

const std::string& VegaJs();
const std::string& VegaLiteJs();
const std::string& VegaEmbedJs();
bool HaveChartAssets();

}  // namespace ndt

#endif  // NDTWIN_REPORT_ASSETS_H_
