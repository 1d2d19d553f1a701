// File: cmd/sku.cc
// `ndtwin sku list [--series S] [--gpu G]` and `ndtwin sku show NAME`: the hardware catalog
// (hw/catalog.h) as the seeds' tables, with sources, conflicts between sources and prices.
// Text uses the tables' units (GiB, Mbps, Gb/s); JSON uses the same units, named in the keys.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/registry.h"
#include "core/strings.h"
#include "core/units.h"
#include "hw/catalog.h"
#include "report/sku_render.h"

namespace ndt {
namespace {

struct SkuListOptions : CommandRequest {
  std::string series;
  std::string gpu;
  void Declare(OptionList* o) override {
    o->Add("series", &series, "Only this series (e.g. 'NDm A100 v4', 'ND')");
    o->Add("gpu", &gpu, "Only sizes with this GPU (e.g. A100-SXM4-80GB, H100)");
  }
};

struct SkuShowOptions : CommandRequest {
  std::string name;
  void Declare(OptionList* o) override {
    o->Add("name", &name, "VM size, e.g. Standard_ND96amsr_A100_v4 or ND96amsr_A100_v4")
        .Positional();
  }
};

// Case-insensitive exact match, else substring; NotFound with a suggestion when nothing matches.
StatusOr<std::vector<const SkuSpec*>> Filter(const Catalog& cat, const SkuListOptions& o) {
  std::vector<const SkuSpec*> out;
  for (const SkuSpec& s : cat.skus()) out.push_back(&s);
  if (!o.series.empty()) {
    std::vector<std::string> all;
    for (const SkuSpec* s : out) {
      if (std::find(all.begin(), all.end(), s->series) == all.end()) all.push_back(s->series);
    }
    bool exact = std::any_of(out.begin(), out.end(), [&](const SkuSpec* s) {
      return EqualsIgnoreCase(s->series, o.series);
    });
    std::string want = ToLower(o.series);
    std::erase_if(out, [&](const SkuSpec* s) {
      return exact ? !EqualsIgnoreCase(s->series, o.series)
                   : ToLower(s->series).find(want) == std::string::npos;
    });
    if (out.empty()) {
      return Status::NotFound(fmt::format("no VM series '{}'{} (see: ndtwin sku list)", o.series,
                                          DidYouMean(o.series, all)));
    }
  }
  if (!o.gpu.empty()) {
    StatusOr<const GpuSpec*> g = cat.FindGpu(o.gpu);
    std::string want = ToLower(o.gpu);
    std::erase_if(out, [&](const SkuSpec* s) {
      const GpuSpec& sg = cat.GpuOf(*s);
      return g.ok() ? &sg != *g : ToLower(sg.name).find(want) == std::string::npos;
    });
    if (out.empty()) {
      std::vector<std::string> names;
      for (const GpuSpec& x : cat.gpus()) names.push_back(x.name);
      return Status::NotFound(fmt::format("no VM size with GPU '{}'{} (see: ndtwin sku list)",
                                          o.gpu, DidYouMean(o.gpu, names)));
    }
  }
  // Grouped by series, then by size within it; the name breaks ties.
  std::stable_sort(out.begin(), out.end(), [](const SkuSpec* a, const SkuSpec* b) {
    if (a->series != b->series) return a->series < b->series;
    if (a->gpus != b->gpus) return a->gpus < b->gpus;
    return a->name < b->name;
  });
  return out;
}

StatusOr<CommandOutput> RunList(const Context& ctx, const SkuListOptions& o, Diagnostics*) {
  const Catalog& cat = ctx.catalog;
  NDT_ASSIGN_OR_RETURN(std::vector<const SkuSpec*> skus, Filter(cat, o));
  return CommandOutput{SkuListJson(skus), SkuListText(skus)};
}

StatusOr<CommandOutput> RunShow(const Context& ctx, const SkuShowOptions& o, Diagnostics*) {
  const Catalog& cat = ctx.catalog;
  if (o.name.empty()) {
    return Status::InvalidInput(
        "sku show needs a VM size, e.g. 'ndtwin sku show Standard_ND96amsr_A100_v4' (see: ndtwin "
        "sku list)");
  }
  NDT_ASSIGN_OR_RETURN(const SkuSpec* s, cat.FindSku(o.name));
  const GpuSpec& gpu = cat.GpuOf(*s);
  return CommandOutput{SkuShowJson(*s, gpu), SkuShowText(*s, gpu)};
}

}  // namespace

Command SkuListCommand() {
  return MakeCommand<SkuListOptions>("sku list", "List VM sizes as a table (the seeds' columns)",
                                     RunList);
}

Command SkuShowCommand() {
  return MakeCommand<SkuShowOptions>("sku show", "Everything about one VM size", RunShow);
}

}  // namespace ndt
