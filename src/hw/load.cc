// File: hw/load.cc
// Parsers of the catalog's YAML files (see hw/load.h and the comments at the top of each file
// under data/). Every number must carry a unit (quantities) and a non-empty source; the source
// is kept per field in GpuSpec::sources / SkuSpec::field_sources.
#include "hw/load.h"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "core/strings.h"

namespace ndt {
namespace {

using Sources = std::map<std::string, std::string>;

Status NeedSource(const YamlMap& m, std::string_view key, const Sourced& s) {
  if (s.source.empty()) {
    return m.Error(key, "no source; write {value: ..., source: \"where the number comes from\"}");
  }
  return Status::Ok();
}

// A required quantity with unit and source, in SI.
StatusOr<double> Qty(const YamlMap& m, std::string_view key, Dim dim, Sources* src) {
  NDT_ASSIGN_OR_RETURN(Sourced s, m.Quantity(key, dim));
  NDT_RETURN_IF_ERROR(NeedSource(m, key, s));
  (*src)[std::string(key)] = s.source;
  return s.value;
}

// An optional quantity: nullopt when the key is absent.
StatusOr<std::optional<double>> OptQty(const YamlMap& m, std::string_view key, Dim dim,
                                       Sources* src) {
  NDT_ASSIGN_OR_RETURN(std::optional<Sourced> s, m.OptionalQuantity(key, dim));
  if (!s) return std::optional<double>();
  NDT_RETURN_IF_ERROR(NeedSource(m, key, *s));
  (*src)[std::string(key)] = s->source;
  return std::optional<double>(s->value);
}

StatusOr<std::optional<int>> OptCount(const YamlMap& m, std::string_view key, Sources* src) {
  NDT_ASSIGN_OR_RETURN(std::optional<Sourced> s, m.OptionalCount(key));
  if (!s) return std::optional<int>();
  NDT_RETURN_IF_ERROR(NeedSource(m, key, *s));
  if (s->value < 0 || s->value != std::floor(s->value) || s->value > 1e9) {
    return m.Error(key, fmt::format("expected a whole number >= 0, found {}", s->value));
  }
  (*src)[std::string(key)] = s->source;
  return std::optional<int>(static_cast<int>(s->value));
}

StatusOr<int> Count(const YamlMap& m, std::string_view key, Sources* src) {
  NDT_ASSIGN_OR_RETURN(std::optional<int> v, OptCount(m, key, src));
  if (!v) return m.Error(key, "missing required key (a count like {value: 8, source: \"...\"})");
  return *v;
}

StatusOr<std::string> NonEmptyString(const YamlMap& m, std::string_view key) {
  NDT_ASSIGN_OR_RETURN(std::string s, m.String(key));
  if (s.empty()) return m.Error(key, "must not be empty");
  return s;
}

// One of `names` (exact), or an error listing them.
StatusOr<int> Choice(const YamlMap& m, std::string_view key,
                     const std::vector<std::string>& names) {
  NDT_ASSIGN_OR_RETURN(std::string s, m.String(key));
  for (size_t i = 0; i < names.size(); ++i) {
    if (s == names[i]) return static_cast<int>(i);
  }
  return m.Error(key, fmt::format("unknown value '{}'{}; expected one of: {}", s,
                                  DidYouMean(s, names), Join(names, ", ")));
}

const std::vector<std::string> kArchs = {"pascal", "volta",     "ampere",
                                         "hopper", "blackwell", "blackwell_ultra"};

}  // namespace

StatusOr<GpuSpec> ParseGpu(const YamlMap& m) {
  GpuSpec g;
  Sources* src = &g.sources;
  NDT_ASSIGN_OR_RETURN(g.name, NonEmptyString(m, "name"));
  NDT_ASSIGN_OR_RETURN(g.aliases, m.StringList("aliases"));
  NDT_ASSIGN_OR_RETURN(int arch, Choice(m, "arch", kArchs));
  g.arch = kArchs[arch];
  NDT_ASSIGN_OR_RETURN(g.sm_version, Count(m, "sm_version", src));
  NDT_ASSIGN_OR_RETURN(std::optional<int> sms, OptCount(m, "sms", src));
  g.sms = sms.value_or(0);
  NDT_ASSIGN_OR_RETURN(std::optional<int> mma_clk,
                       OptCount(m, "tensor_16bit_flops_per_clk_per_sm", src));
  NDT_ASSIGN_OR_RETURN(std::optional<int> exp_clk, OptCount(m, "sfu_exp_per_clk_per_sm", src));
  if (mma_clk.has_value() != exp_clk.has_value()) {
    return m.Error(mma_clk ? "sfu_exp_per_clk_per_sm" : "tensor_16bit_flops_per_clk_per_sm",
                   "tensor_16bit_flops_per_clk_per_sm and sfu_exp_per_clk_per_sm go together: "
                   "give both or neither");
  }
  g.tensor_16bit_flops_per_clk_per_sm = mma_clk.value_or(0);
  g.sfu_exp_per_clk_per_sm = exp_clk.value_or(0);
  NDT_ASSIGN_OR_RETURN(g.form_factor, NonEmptyString(m, "form_factor"));
  NDT_ASSIGN_OR_RETURN(g.memory_bytes, Qty(m, "memory", Dim::kBytes, src));
  g.memory_bytes = std::floor(g.memory_bytes);  // "79.15 GiB" is not a whole number of bytes
  NDT_ASSIGN_OR_RETURN(g.memory_type, NonEmptyString(m, "memory_type"));
  NDT_ASSIGN_OR_RETURN(g.memory_Bps, Qty(m, "memory_bw", Dim::kBandwidth, src));
  NDT_ASSIGN_OR_RETURN(std::optional<double> l2, OptQty(m, "l2", Dim::kBytes, src));
  g.l2_bytes = l2.value_or(0);

  struct Rate {
    const char* key;
    double* out;
  };
  const Rate rates[] = {{"fp64", &g.fp64_flops}, {"fp64_tensor", &g.fp64_tensor_flops},
                        {"fp32", &g.fp32_flops}, {"tf32", &g.tf32_flops},
                        {"fp16", &g.fp16_flops}, {"bf16", &g.bf16_flops},
                        {"fp8", &g.fp8_flops},   {"fp4", &g.fp4_flops},
                        {"int8", &g.int8_ops}};
  for (const Rate& r : rates) {
    NDT_ASSIGN_OR_RETURN(std::optional<double> v, OptQty(m, r.key, Dim::kFlops, src));
    *r.out = v.value_or(0);
  }
  if (g.fp32_flops <= 0)
    return m.Error("fp32", "missing required key (a rate like \"19.5 TFLOP/s\")");

  NDT_ASSIGN_OR_RETURN(std::optional<int> nvgen, OptCount(m, "nvlink_gen", src));
  NDT_ASSIGN_OR_RETURN(std::optional<int> links, OptCount(m, "nvlink_links", src));
  NDT_ASSIGN_OR_RETURN(std::optional<double> link_bw,
                       OptQty(m, "nvlink_link_bw", Dim::kBandwidth, src));
  if (nvgen.has_value() != links.has_value() || nvgen.has_value() != link_bw.has_value()) {
    return m.Error(nvgen ? (links ? "nvlink_link_bw" : "nvlink_links") : "nvlink_gen",
                   "nvlink_gen, nvlink_links and nvlink_link_bw go together: give all or none");
  }
  g.nvlink_gen = nvgen.value_or(0);
  g.nvlink_links = links.value_or(0);
  g.nvlink_link_Bps = link_bw.value_or(0);

  NDT_ASSIGN_OR_RETURN(std::optional<int> pgen, OptCount(m, "pcie_gen", src));
  NDT_ASSIGN_OR_RETURN(std::optional<double> pbw, OptQty(m, "pcie_bw", Dim::kBandwidth, src));
  if (pgen.has_value() != pbw.has_value()) {
    return m.Error(pgen ? "pcie_bw" : "pcie_gen", "pcie_gen and pcie_bw go together");
  }
  NDT_ASSIGN_OR_RETURN(std::optional<double> c2c, OptQty(m, "c2c_bw", Dim::kBandwidth, src));
  g.pcie_gen = pgen.value_or(0);
  g.c2c = c2c.has_value();
  g.c2c_Bps = c2c.value_or(0);
  if (pbw) {
    g.pcie_Bps = *pbw;
  } else if (c2c) {
    g.pcie_Bps = *c2c;  // the host link is NVLink-C2C (spec.h: "or NVLink-C2C where noted")
    g.sources["pcie_bw"] = "host link is NVLink-C2C: " + g.sources["c2c_bw"];
  } else {
    return m.Error("pcie_bw", "missing: give the host link (pcie_gen + pcie_bw, or c2c_bw)");
  }
  NDT_ASSIGN_OR_RETURN(g.tdp_w, Qty(m, "tdp", Dim::kPower, src));
  NDT_ASSIGN_OR_RETURN(g.notes, m.StringList("notes"));
  NDT_RETURN_IF_ERROR(m.Finish());
  return g;
}

namespace {

const std::vector<std::string> kFabrics = {"pcie", "nvlink_cube_mesh", "nvswitch", "nvl72"};
const std::vector<std::string> kAffinities = {"none", "per_gpu", "per_vm", "per_gpu_c2c"};
const std::vector<std::string> kFeatures = {"premium_storage",
                                            "premium_storage_caching",
                                            "ultra_disks",
                                            "live_migration",
                                            "memory_preserving_updates",
                                            "vm_generation_support",
                                            "accelerated_networking",
                                            "ephemeral_os_disks",
                                            "infiniband",
                                            "nvlink",
                                            "nested_virtualization",
                                            "service_healing"};

Status ParseCpu(const YamlMap& top, SkuSpec* s) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, top.Map("cpu"));
  Sources local;
  NDT_ASSIGN_OR_RETURN(s->cpu, NonEmptyString(m, "model"));
  NDT_ASSIGN_OR_RETURN(s->cpu_sockets, Count(m, "sockets", &local));
  NDT_ASSIGN_OR_RETURN(s->numa_nodes, Count(m, "numa_nodes", &local));
  NDT_ASSIGN_OR_RETURN(std::optional<double> ic,
                       OptQty(m, "interconnect_bw", Dim::kBandwidth, &local));
  s->cpu_interconnect_Bps = ic.value_or(0);
  if (s->cpu_sockets < 1) return m.Error("sockets", "must be at least 1");
  if (s->cpu_sockets > 1 && !ic) {
    return m.Error("interconnect_bw", "required with more than one socket (e.g. \"10 GB/s\")");
  }
  for (const auto& [k, v] : local) s->field_sources["cpu." + k] = v;
  return m.Finish();
}

Status ParseInfiniband(const YamlMap& top, SkuSpec* s) {
  if (!top.Has("infiniband")) {
    return top.Error("infiniband", "missing required key (a map, or null for none)");
  }
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> m, top.OptionalMap("infiniband"));
  if (!m) return Status::Ok();
  Sources local;
  InfinibandSpec ib;
  NDT_ASSIGN_OR_RETURN(ib.ports, Count(*m, "ports", &local));
  NDT_ASSIGN_OR_RETURN(ib.port_Bps, Qty(*m, "port_bw", Dim::kBandwidth, &local));
  NDT_ASSIGN_OR_RETURN(ib.generation, m->String("generation"));
  NDT_ASSIGN_OR_RETURN(ib.gpudirect_rdma, m->Bool("gpudirect_rdma"));
  if (ib.ports < 1)
    return m->Error("ports", "must be at least 1 (write infiniband: null for none)");
  if (ib.port_Bps <= 0) return m->Error("port_bw", "must be positive");
  NDT_RETURN_IF_ERROR(m->Finish());
  for (const auto& [k, v] : local) s->field_sources["infiniband." + k] = v;
  s->infiniband = ib;
  return Status::Ok();
}

}  // namespace

StatusOr<SkuSpec> ParseSku(const YamlMap& m) {
  SkuSpec s;
  s.file = m.file();
  Sources* src = &s.field_sources;
  NDT_ASSIGN_OR_RETURN(s.name, NonEmptyString(m, "name"));
  NDT_ASSIGN_OR_RETURN(s.aliases, m.StringList("aliases"));
  NDT_ASSIGN_OR_RETURN(s.series, NonEmptyString(m, "series"));
  NDT_ASSIGN_OR_RETURN(s.description, m.String("description"));
  NDT_ASSIGN_OR_RETURN(s.vcpus, Count(m, "vcpus", src));
  NDT_ASSIGN_OR_RETURN(s.memory_bytes, Qty(m, "memory", Dim::kBytes, src));
  NDT_ASSIGN_OR_RETURN(std::optional<double> temp, OptQty(m, "temp_storage", Dim::kBytes, src));
  s.temp_storage_bytes = temp.value_or(0);
  NDT_ASSIGN_OR_RETURN(s.gpus, Count(m, "gpus", src));
  if (s.gpus < 1) return m.Error("gpus", "must be at least 1");
  NDT_ASSIGN_OR_RETURN(s.gpu, NonEmptyString(m, "gpu"));
  NDT_ASSIGN_OR_RETURN(s.gpu_memory_bytes, Qty(m, "gpu_memory", Dim::kBytes, src));
  NDT_ASSIGN_OR_RETURN(s.max_data_disks, OptCount(m, "max_data_disks", src));
  NDT_ASSIGN_OR_RETURN(s.max_uncached_disk_iops, OptCount(m, "max_uncached_disk_iops", src));
  NDT_ASSIGN_OR_RETURN(s.max_uncached_disk_Bps,
                       OptQty(m, "max_uncached_disk_bw", Dim::kBandwidth, src));
  NDT_ASSIGN_OR_RETURN(s.max_network_Bps, OptQty(m, "max_network_bw", Dim::kBandwidth, src));
  NDT_ASSIGN_OR_RETURN(s.max_nics, OptCount(m, "max_nics", src));
  NDT_RETURN_IF_ERROR(ParseCpu(m, &s));

  NDT_ASSIGN_OR_RETURN(int fabric, Choice(m, "fabric", kFabrics));
  s.fabric = static_cast<IntraVmFabric>(fabric);
  NDT_ASSIGN_OR_RETURN(s.nvswitches, Count(m, "nvswitches", src));
  NDT_ASSIGN_OR_RETURN(s.nvlink_domain_gpus, Count(m, "nvlink_domain_gpus", src));
  NDT_ASSIGN_OR_RETURN(s.vms_per_nvlink_domain, Count(m, "vms_per_nvlink_domain", src));
  if (s.nvlink_domain_gpus < 1) return m.Error("nvlink_domain_gpus", "must be at least 1");
  if (s.vms_per_nvlink_domain < 1) return m.Error("vms_per_nvlink_domain", "must be at least 1");
  if (s.nvlink_domain_gpus != s.vms_per_nvlink_domain * s.gpus &&
      !(s.fabric == IntraVmFabric::kPcie && s.nvlink_domain_gpus == 1)) {
    return m.Error("nvlink_domain_gpus",
                   fmt::format("{} GPUs is not vms_per_nvlink_domain ({}) x gpus ({})",
                               s.nvlink_domain_gpus, s.vms_per_nvlink_domain, s.gpus));
  }
  NDT_ASSIGN_OR_RETURN(s.pcie_switches, Count(m, "pcie_switches", src));
  NDT_ASSIGN_OR_RETURN(s.gpus_per_pcie_switch, Count(m, "gpus_per_pcie_switch", src));
  if (s.pcie_switches * s.gpus_per_pcie_switch != 0 &&
      s.pcie_switches * s.gpus_per_pcie_switch != s.gpus) {
    return m.Error(
        "gpus_per_pcie_switch",
        fmt::format("pcie_switches ({}) x gpus_per_pcie_switch ({}) must equal gpus ({})",
                    s.pcie_switches, s.gpus_per_pcie_switch, s.gpus));
  }
  NDT_RETURN_IF_ERROR(ParseInfiniband(m, &s));
  NDT_ASSIGN_OR_RETURN(int aff, Choice(m, "nic_affinity", kAffinities));
  s.nic_affinity = static_cast<NicAffinity>(aff);
  if ((s.nic_affinity == NicAffinity::kNone) != !s.infiniband.has_value()) {
    return m.Error("nic_affinity", "must be 'none' exactly when infiniband is null");
  }

  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> features, m.OptionalMap("features"));
  if (features) {
    for (const std::string& k : features->Keys()) {
      bool known = false;
      for (const std::string& f : kFeatures) known = known || f == k;
      if (!known) {
        return features->Error(k, fmt::format("unknown feature{}; known: {}",
                                              DidYouMean(k, kFeatures), Join(kFeatures, ", ")));
      }
      NDT_ASSIGN_OR_RETURN(s.features[k], NonEmptyString(*features, k));
    }
  }
  NDT_ASSIGN_OR_RETURN(s.supported_os, m.StringList("supported_os"));
  NDT_ASSIGN_OR_RETURN(s.sources, m.StringList("sources"));
  if (s.sources.empty())
    return m.Error("sources", "missing: list where the size's facts come from");
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> conflicts, m.MapList("conflicts"));
  for (const YamlMap& c : conflicts) {
    Conflict x;
    NDT_ASSIGN_OR_RETURN(x.field, NonEmptyString(c, "field"));
    NDT_ASSIGN_OR_RETURN(x.kept, NonEmptyString(c, "kept"));
    NDT_ASSIGN_OR_RETURN(x.other, NonEmptyString(c, "other"));
    NDT_ASSIGN_OR_RETURN(x.resolution, NonEmptyString(c, "resolution"));
    NDT_ASSIGN_OR_RETURN(x.sources, NonEmptyString(c, "sources"));
    NDT_RETURN_IF_ERROR(c.Finish());
    s.conflicts.push_back(std::move(x));
  }
  NDT_ASSIGN_OR_RETURN(s.notes, m.StringList("notes"));
  NDT_RETURN_IF_ERROR(m.Finish());
  return s;
}

namespace {

StatusOr<PriceSpec> ParseRegionPrice(const YamlMap& m) {
  PriceSpec p;
  NDT_ASSIGN_OR_RETURN(p.region, NonEmptyString(m, "region"));
  NDT_ASSIGN_OR_RETURN(Sourced payg, m.Quantity("payg", Dim::kUsdPerHour));
  p.usd_per_hour = payg.value;
  NDT_ASSIGN_OR_RETURN(std::optional<Sourced> spot, m.OptionalQuantity("spot", Dim::kUsdPerHour));
  if (spot) p.spot_usd_per_hour = spot->value;
  if (p.usd_per_hour <= 0) return m.Error("payg", "must be positive");
  return p;
}

}  // namespace

StatusOr<PriceList> ParsePrices(const YamlMap& m) {
  PriceList out;
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> prices, m.MapList("prices"));
  for (const YamlMap& e : prices) {
    PriceEntry p;
    p.line = e.line();
    NDT_ASSIGN_OR_RETURN(p.size, NonEmptyString(e, "size"));
    NDT_ASSIGN_OR_RETURN(p.price, ParseRegionPrice(e));
    NDT_ASSIGN_OR_RETURN(p.price.os, NonEmptyString(e, "os"));
    NDT_ASSIGN_OR_RETURN(p.price.source, NonEmptyString(e, "source"));
    NDT_ASSIGN_OR_RETURN(std::optional<std::string> note, e.OptionalString("note"));
    p.price.note = note.value_or("");
    NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> others, e.MapList("other_regions"));
    for (const YamlMap& o : others) {
      NDT_ASSIGN_OR_RETURN(PriceSpec r, ParseRegionPrice(o));
      r.os = p.price.os;
      r.source = p.price.source;
      r.note = p.price.note;
      NDT_RETURN_IF_ERROR(o.Finish());
      p.other_regions.push_back(std::move(r));
    }
    NDT_RETURN_IF_ERROR(e.Finish());
    out.prices.push_back(std::move(p));
  }
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> unpriced, m.MapList("unpriced"));
  for (const YamlMap& e : unpriced) {
    UnpricedEntry u;
    u.line = e.line();
    NDT_ASSIGN_OR_RETURN(u.size, NonEmptyString(e, "size"));
    NDT_ASSIGN_OR_RETURN(u.note, NonEmptyString(e, "note"));
    NDT_RETURN_IF_ERROR(e.Finish());
    out.unpriced.push_back(std::move(u));
  }
  NDT_RETURN_IF_ERROR(m.Finish());
  return out;
}

}  // namespace ndt
