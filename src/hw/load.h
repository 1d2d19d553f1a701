// File: hw/load.h
// Parsers of one catalog file each (used by Catalog::Load, and by tests on small bad files):
// a GPU (data/gpus/*.yaml), a VM size (data/vms/*.yaml), and the price list (data/prices.yaml).
// Strict: an unknown or missing key, a wrong type, a number without unit or without source is
// an error "file:line: key: what; how to fix". Values are converted to SI (bytes, B/s, FLOP/s).
#ifndef NDTWIN_HW_LOAD_H_
#define NDTWIN_HW_LOAD_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "core/yaml.h"
#include "hw/spec.h"

namespace ndt {

StatusOr<GpuSpec> ParseGpu(const YamlMap& m);
StatusOr<SkuSpec> ParseSku(const YamlMap& m);

// One price entry of data/prices.yaml, keyed by size name as written there.
struct PriceEntry {
  std::string size;
  PriceSpec price;
  std::vector<PriceSpec> other_regions;
  int line = 0;
};
struct UnpricedEntry {
  std::string size;
  std::string note;
  int line = 0;
};
struct PriceList {
  std::vector<PriceEntry> prices;
  std::vector<UnpricedEntry> unpriced;
};
StatusOr<PriceList> ParsePrices(const YamlMap& m);

}  // namespace ndt

#endif  // NDTWIN_HW_LOAD_H_
