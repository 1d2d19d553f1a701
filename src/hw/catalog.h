// File: hw/catalog.h
// The catalog: every GPU and VM size of data/, loaded strictly (core/yaml.h) and frozen.
// Look-ups by name are case-insensitive, accept names with or without "Standard_", and aliases.
// Unknown names fail with "did you mean". Thread-safe once built (read-only).
#ifndef NDTWIN_HW_CATALOG_H_
#define NDTWIN_HW_CATALOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "hw/spec.h"

namespace ndt {

class Catalog {
 public:
  // Loads data_dir/gpus/*.yaml, data_dir/vms/*.yaml and data_dir/prices.yaml; files are read in
  // name order. Fails on the first malformed file with file:line, or on a VM size whose GPU is
  // not in the catalog.
  static StatusOr<Catalog> Load(const std::string& data_dir);
  // $NDTWIN_DATA when set; else, for a binary installed by `make install` (PREFIX/bin/ndtwin),
  // PREFIX/share/ndtwin/data; else the data directory compiled in (NDT_DATA_DIR, the source tree).
  static std::string DefaultDataDir();

  // "unknown VM size 'X'; did you mean 'Y'? (see: ndtwin sku list)" when not found.
  StatusOr<const SkuSpec*> FindSku(std::string_view name) const;
  StatusOr<const GpuSpec*> FindGpu(std::string_view name) const;
  // REQUIRES: sku came from this catalog (its GPU exists).
  const GpuSpec& GpuOf(const SkuSpec& sku) const;

  const std::vector<SkuSpec>& skus() const { return skus_; }

  // Sets a size's pay-as-you-go price (a rate the user knows: a size data/ has none for, or a
  // negotiated one), replacing the file's. kNotFound for an unknown size (as FindSku).
  Status SetPrice(std::string_view sku, const PriceSpec& price);
  const std::vector<GpuSpec>& gpus() const { return gpus_; }
  // Adds a size data/ does not hold (validate's calibration-only stand-ins, serve/validate.h).
  // kInvalidInput if a size already answers to its name or its GPU is not in the catalog.
  Status AddSku(SkuSpec sku);

 private:
  std::vector<GpuSpec> gpus_;
  std::vector<SkuSpec> skus_;
};

// PREFIX/share/ndtwin when the running binary is PREFIX/bin/ndtwin installed by `make install`
// (its data/ beside it), else "".
std::string InstalledShareDir();

}  // namespace ndt

#endif  // NDTWIN_HW_CATALOG_H_
