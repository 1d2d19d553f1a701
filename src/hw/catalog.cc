// File: hw/catalog.cc
// Loads data/gpus/*.yaml, data/vms/*.yaml and data/prices.yaml (in sorted file-name order),
// checks the whole catalog (unique names and aliases, every size's GPU known, every price's
// size known), and answers look-ups by name.
#include "hw/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <system_error>

#include "core/strings.h"
#include "hw/load.h"

namespace ndt {
namespace {

namespace fs = std::filesystem;

// The *.yaml files of a directory, sorted by name.
StatusOr<std::vector<std::string>> YamlFiles(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return Status::NotFound(fmt::format(
        "{}: cannot read directory ({}); set --hw-data or NDTWIN_DATA to the data directory", dir,
        ec.message()));
  }
  std::vector<std::string> out;
  for (const fs::directory_entry& e : it) {
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) return Status::NotFound(fmt::format("{}: no *.yaml files", dir));
  return out;
}

// "standard_nd96amsr_a100_v4" -> "nd96amsr_a100_v4": the key names are matched on.
std::string SkuKey(std::string_view name) {
  std::string k = ToLower(name);
  constexpr std::string_view kPrefix = "standard_";
  if (k.size() > kPrefix.size() && k.compare(0, kPrefix.size(), kPrefix) == 0) {
    k = k.substr(kPrefix.size());
  }
  return k;
}

// Registers every name of an item under its key; fails on a clash between two files.
Status AddKeys(const std::vector<std::string>& names, const std::string& file, size_t index,
               std::map<std::string, std::pair<size_t, std::string>>* keys,
               std::string (*key_of)(std::string_view), const char* what) {
  for (const std::string& n : names) {
    std::string k = key_of(n);
    auto [it, inserted] = keys->emplace(k, std::make_pair(index, file));
    if (!inserted && it->second.first != index) {
      return Status::InvalidInput(
          fmt::format("{}: {} name '{}' is also used by {}; names and "
                      "aliases must be unique",
                      file, what, n, it->second.second));
    }
  }
  return Status::Ok();
}

std::string GpuKey(std::string_view name) { return ToLower(name); }

}  // namespace

std::string InstalledShareDir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path share = exe.parent_path().parent_path() / "share" / "ndtwin";
  return std::filesystem::is_directory(share / "data" / "vms", ec) ? share.string() : "";
}

std::string Catalog::DefaultDataDir() {
  const char* env = std::getenv("NDTWIN_DATA");
  if (env != nullptr && env[0] != '\0') return env;
  if (const std::string share = InstalledShareDir(); !share.empty()) return share + "/data";
  return NDT_DATA_DIR;
}

Status Catalog::SetPrice(std::string_view sku, const PriceSpec& price) {
  NDT_ASSIGN_OR_RETURN(const SkuSpec* s, FindSku(sku));
  SkuSpec& m = skus_[static_cast<size_t>(s - skus_.data())];
  m.price = price;
  m.price_note.clear();
  return Status::Ok();
}

Status Catalog::AddSku(SkuSpec sku) {
  if (FindSku(sku.name).ok()) return Status::InvalidInput("VM size '" + sku.name + "' twice");
  NDT_RETURN_IF_ERROR(FindGpu(sku.gpu).status());
  skus_.push_back(std::move(sku));
  return Status::Ok();
}

StatusOr<Catalog> Catalog::Load(const std::string& data_dir) {
  Catalog c;
  std::map<std::string, std::pair<size_t, std::string>> gpu_keys, sku_keys;

  NDT_ASSIGN_OR_RETURN(std::vector<std::string> gpu_files, YamlFiles(data_dir + "/gpus"));
  for (const std::string& f : gpu_files) {
    NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(f));
    NDT_ASSIGN_OR_RETURN(GpuSpec g, ParseGpu(m));
    std::vector<std::string> names = g.aliases;
    names.insert(names.begin(), g.name);
    NDT_RETURN_IF_ERROR(AddKeys(names, f, c.gpus_.size(), &gpu_keys, GpuKey, "GPU"));
    c.gpus_.push_back(std::move(g));
  }

  NDT_ASSIGN_OR_RETURN(std::vector<std::string> vm_files, YamlFiles(data_dir + "/vms"));
  for (const std::string& f : vm_files) {
    NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(f));
    NDT_ASSIGN_OR_RETURN(SkuSpec s, ParseSku(m));
    if (!c.FindGpu(s.gpu).ok()) {
      return m.Error("gpu", fmt::format("unknown GPU '{}' for VM size '{}'; add data/gpus/*.yaml "
                                        "or use one of the GPUs there",
                                        s.gpu, s.name));
    }
    std::vector<std::string> names = s.aliases;
    names.insert(names.begin(), s.name);
    NDT_RETURN_IF_ERROR(AddKeys(names, f, c.skus_.size(), &sku_keys, SkuKey, "VM size"));
    c.skus_.push_back(std::move(s));
  }

  std::string price_file = data_dir + "/prices.yaml";
  NDT_ASSIGN_OR_RETURN(YamlMap pm, LoadYamlMapFile(price_file));
  NDT_ASSIGN_OR_RETURN(PriceList prices, ParsePrices(pm));
  auto sku_at = [&](const std::string& size, int line) -> StatusOr<SkuSpec*> {
    auto it = sku_keys.find(SkuKey(size));
    if (it == sku_keys.end()) {
      return Status::InvalidInput(
          fmt::format("{}:{}: size: unknown VM size '{}'; prices must "
                      "name a size of data/vms/",
                      price_file, line, size));
    }
    return &c.skus_[it->second.first];
  };
  for (PriceEntry& p : prices.prices) {
    NDT_ASSIGN_OR_RETURN(SkuSpec * s, sku_at(p.size, p.line));
    if (s->price) {
      return Status::InvalidInput(
          fmt::format("{}:{}: size: '{}' is priced twice; list other "
                      "regions under other_regions",
                      price_file, p.line, p.size));
    }
    s->price = p.price;
    s->other_prices = p.other_regions;
  }
  for (const UnpricedEntry& u : prices.unpriced) {
    NDT_ASSIGN_OR_RETURN(SkuSpec * s, sku_at(u.size, u.line));
    if (s->price) {
      return Status::InvalidInput(
          fmt::format("{}:{}: size: '{}' has a price and is also listed "
                      "as unpriced",
                      price_file, u.line, u.size));
    }
    s->price_note = u.note;
  }
  return c;
}

StatusOr<const SkuSpec*> Catalog::FindSku(std::string_view name) const {
  std::string key = SkuKey(name);
  std::vector<std::string> candidates;  // keys of every name, in catalog order
  std::vector<const SkuSpec*> owners;
  for (const SkuSpec& s : skus_) {
    if (SkuKey(s.name) == key) return &s;
    candidates.push_back(SkuKey(s.name));
    owners.push_back(&s);
  }
  for (const SkuSpec& s : skus_) {
    for (const std::string& a : s.aliases) {
      if (SkuKey(a) == key) return &s;
      candidates.push_back(SkuKey(a));
      owners.push_back(&s);
    }
  }
  std::string hint;
  std::optional<std::string> best = ClosestMatch(key, candidates);
  if (best) {
    size_t i = std::find(candidates.begin(), candidates.end(), *best) - candidates.begin();
    hint = fmt::format("; did you mean '{}'?", owners[i]->name);
  }
  return Status::NotFound(fmt::format("unknown VM size '{}'{} (see: ndtwin sku list)", name, hint));
}

StatusOr<const GpuSpec*> Catalog::FindGpu(std::string_view name) const {
  std::vector<std::string> names;
  for (const GpuSpec& g : gpus_) {
    if (EqualsIgnoreCase(g.name, name)) return &g;
    names.push_back(g.name);
  }
  for (const GpuSpec& g : gpus_) {
    for (const std::string& a : g.aliases) {
      if (EqualsIgnoreCase(a, name)) return &g;
    }
  }
  return Status::NotFound(
      fmt::format("unknown GPU '{}'{} (see: ndtwin sku list)", name, DidYouMean(name, names)));
}

const GpuSpec& Catalog::GpuOf(const SkuSpec& sku) const {
  StatusOr<const GpuSpec*> g = FindGpu(sku.gpu);
  NDT_CHECK(g.ok(), "GpuOf: VM size '" + sku.name + "' has no GPU in this catalog");
  return **g;
}

}  // namespace ndt
