#include "report/sku_render.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/strings.h"
#include "core/units.h"
#include "report/text.h"

namespace ndt {
namespace {

// 1900 -> "1900", 22.3517 -> "22.4": integers stay integers.
std::string Num(double v) {
  if (std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  if (std::fabs(v * 10 - std::round(v * 10)) < 1e-6) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}
// Rounded to 3 decimals so JSON does not print binary noise (22.351741790771484).
double Round3(double v) { return std::round(v * 1000) / 1000; }

double Gib(double bytes) { return bytes / kGiB; }
double Gbps(double Bps) { return Bps * 8 / 1e9; }

std::string IbText(const SkuSpec& s) {
  if (!s.infiniband) return "-";
  const InfinibandSpec& ib = *s.infiniband;
  std::string out = fmt::format("{}x{} Gb/s", ib.ports, Num(Gbps(ib.port_Bps)));
  if (!ib.generation.empty()) out += " " + ib.generation;
  return out;
}

std::string DomainText(const SkuSpec& s) {
  if (s.vms_per_nvlink_domain > 1) {
    return fmt::format("{} ({} VMs)", s.nvlink_domain_gpus, s.vms_per_nvlink_domain);
  }
  return std::to_string(s.nvlink_domain_gpus);
}

Json OptInt(const std::optional<int>& v) { return v ? Json(*v) : Json(nullptr); }

// The keys every size has in `sku list --json`; `sku show --json` adds more.
Json SkuJson(const SkuSpec& s) {
  Json j;
  j["name"] = s.name;
  j["aliases"] = s.aliases;
  j["series"] = s.series;
  j["description"] = s.description;
  j["vcpus"] = s.vcpus;
  j["memory_gib"] = Round3(Gib(s.memory_bytes));
  j["temp_storage_gib"] =
      s.temp_storage_bytes > 0 ? Json(Round3(Gib(s.temp_storage_bytes))) : Json(nullptr);
  j["gpus"] = s.gpus;
  j["gpu"] = s.gpu;
  j["gpu_memory_gib"] = Round3(Gib(s.gpu_memory_bytes));
  j["max_data_disks"] = OptInt(s.max_data_disks);
  j["max_uncached_disk_iops"] = OptInt(s.max_uncached_disk_iops);
  j["max_uncached_disk_mbps"] =
      s.max_uncached_disk_Bps ? Json(Round3(*s.max_uncached_disk_Bps / 1e6)) : Json(nullptr);
  j["max_network_mbps"] =
      s.max_network_Bps ? Json(Round3(*s.max_network_Bps * 8 / 1e6)) : Json(nullptr);
  j["max_nics"] = OptInt(s.max_nics);
  if (s.infiniband) {
    j["infiniband"] = Json{{"ports", s.infiniband->ports},
                           {"gbps_per_port", Round3(Gbps(s.infiniband->port_Bps))},
                           {"generation", s.infiniband->generation},
                           {"gpudirect_rdma", s.infiniband->gpudirect_rdma}};
  } else {
    j["infiniband"] = nullptr;
  }
  j["intra_vm_fabric"] = IntraVmFabricName(s.fabric);
  j["nvlink_domain_gpus"] = s.nvlink_domain_gpus;
  j["vms_per_nvlink_domain"] = s.vms_per_nvlink_domain;
  j["features"] = Json::object();
  for (const auto& [k, v] : s.features) j["features"][k] = v;
  j["price_usd_per_hour"] = s.price ? Json(s.price->usd_per_hour) : Json(nullptr);
  j["sources"] = s.sources;
  j["conflicts"] = Json::array();
  for (const Conflict& c : s.conflicts) {
    j["conflicts"].push_back(Json{{"field", c.field},
                                  {"kept", c.kept},
                                  {"other", c.other},
                                  {"resolution", c.resolution},
                                  {"sources", c.sources}});
  }
  return j;
}

Json PriceJson(const PriceSpec& p) {
  return Json{
      {"region", p.region},
      {"os", p.os},
      {"payg_usd_per_hour", p.usd_per_hour},
      {"spot_usd_per_hour", p.spot_usd_per_hour ? Json(*p.spot_usd_per_hour) : Json(nullptr)}};
}

Json GpuJson(const GpuSpec& g) {
  Json j;
  j["name"] = g.name;
  j["aliases"] = g.aliases;
  j["arch"] = g.arch;
  j["sm_version"] = g.sm_version;
  j["sms"] = g.sms > 0 ? Json(g.sms) : Json(nullptr);
  j["form_factor"] = g.form_factor;
  j["memory_gb"] = Round3(g.memory_bytes / kGB);
  j["memory_type"] = g.memory_type;
  j["memory_gbps"] = Round3(g.memory_Bps / kGB);  // GB/s (bytes)
  j["l2_mb"] = g.l2_bytes > 0 ? Json(Round3(g.l2_bytes / kMB)) : Json(nullptr);
  Json peak = Json::object();
  for (Precision p : {Precision::kFp64, Precision::kFp32, Precision::kTf32, Precision::kFp16,
                      Precision::kBf16, Precision::kFp8, Precision::kFp4, Precision::kInt8}) {
    double f = g.PeakFlops(p);
    peak[PrecisionName(p)] = f > 0 ? Json(Round3(f / kTFLOP)) : Json(nullptr);
  }
  j["peak_dense_tflops"] = peak;
  j["fp64_vector_tflops"] = Round3(g.fp64_flops / kTFLOP);
  j["nvlink"] = g.nvlink_gen > 0
                    ? Json{{"generation", g.nvlink_gen},
                           {"links", g.nvlink_links},
                           {"gbytes_per_s_per_link_per_direction", Round3(g.nvlink_link_Bps / kGB)},
                           {"gbytes_per_s_per_direction", Round3(g.nvlink_Bps() / kGB)}}
                    : Json(nullptr);
  j["pcie_gen"] = g.pcie_gen > 0 ? Json(g.pcie_gen) : Json(nullptr);
  j["host_link_gbytes_per_s_per_direction"] = Round3(g.pcie_Bps / kGB);
  j["c2c_gbytes_per_s_per_direction"] = g.c2c ? Json(Round3(g.c2c_Bps / kGB)) : Json(nullptr);
  j["tdp_w"] = g.tdp_w;
  j["sources"] = Json::object();
  for (const auto& [k, v] : g.sources) j["sources"][k] = v;
  j["notes"] = g.notes;
  return j;
}

void Row(TextOut& p, const std::string& k, const std::string& v) {
  p("  %-26s %s\n", k.c_str(), v.c_str());
}

std::string OptText(const std::optional<int>& v) { return v ? std::to_string(*v) : "-"; }

void PrintGpu(TextOut& p, const GpuSpec& g) {
  p("\nGPU %s (%s, sm_%d, %s)\n", g.name.c_str(), g.arch.c_str(), g.sm_version,
    g.form_factor.c_str());
  Row(p, "Memory",
      fmt::format("{} GiB {} usable, {} GB/s", Num(Gib(g.memory_bytes)), g.memory_type,
                  Num(g.memory_Bps / kGB)));
  if (g.l2_bytes > 0) Row(p, "L2", fmt::format("{} MB", Num(g.l2_bytes / kMB)));
  if (g.sms > 0) Row(p, "SMs", std::to_string(g.sms));
  std::vector<std::string> peaks;
  if (g.fp64_flops > 0) peaks.push_back("fp64 " + Num(g.fp64_flops / kTFLOP));
  if (g.fp64_tensor_flops > 0) peaks.push_back("fp64 tensor " + Num(g.fp64_tensor_flops / kTFLOP));
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16,
                      Precision::kFp8, Precision::kFp4, Precision::kInt8}) {
    if (g.PeakFlops(p) > 0)
      peaks.push_back(std::string(PrecisionName(p)) + " " + Num(g.PeakFlops(p) / kTFLOP));
  }
  Row(p, "Dense peak TFLOP/s", Join(peaks, ", "));
  if (g.nvlink_gen > 0) {
    Row(p, "NVLink",
        fmt::format("gen {}: {} links x {} GB/s = {} GB/s per direction", g.nvlink_gen,
                    g.nvlink_links, Num(g.nvlink_link_Bps / kGB), Num(g.nvlink_Bps() / kGB)));
  } else {
    Row(p, "NVLink", "none");
  }
  if (g.pcie_gen > 0) {
    Row(p, "PCIe",
        fmt::format("gen {} x16, {} GB/s per direction", g.pcie_gen, Num(g.pcie_Bps / kGB)));
  }
  if (g.c2c) Row(p, "NVLink-C2C", fmt::format("{} GB/s per direction", Num(g.c2c_Bps / kGB)));
  Row(p, "TDP", fmt::format("{} W", Num(g.tdp_w)));
  for (const std::string& n : g.notes) Row(p, "Note", n);
}

void PrintShow(TextOut& p, const SkuSpec& s, const GpuSpec& g) {
  p("%s (%s)\n  %s\n", s.name.c_str(), s.series.c_str(), s.description.c_str());
  if (!s.aliases.empty()) Row(p, "Aliases", Join(s.aliases, ", "));
  p("\nSize\n");
  Row(p, "vCPUs", std::to_string(s.vcpus));
  Row(p, "Memory", Num(Gib(s.memory_bytes)) + " GiB");
  Row(p, "Temp storage", s.temp_storage_bytes > 0 ? Num(Gib(s.temp_storage_bytes)) + " GiB" : "-");
  Row(p, "GPUs", fmt::format("{} x {}", s.gpus, s.gpu));
  Row(p, "GPU memory", Num(Gib(s.gpu_memory_bytes)) + " GiB per GPU");
  Row(p, "Max data disks", OptText(s.max_data_disks));
  Row(p, "Max uncached disk",
      fmt::format("{} IOPS / {} MBps", OptText(s.max_uncached_disk_iops),
                  s.max_uncached_disk_Bps ? Num(*s.max_uncached_disk_Bps / 1e6) : "-"));
  Row(p, "Max network bandwidth",
      s.max_network_Bps ? Num(*s.max_network_Bps * 8 / 1e6) + " Mbps" : "-");
  Row(p, "Max NICs", OptText(s.max_nics));
  p("\nHost\n");
  Row(p, "CPU", s.cpu);
  Row(p, "Sockets / NUMA nodes", fmt::format("{} / {}", s.cpu_sockets, s.numa_nodes));
  if (s.cpu_interconnect_Bps > 0) {
    Row(p, "Socket interconnect", Num(s.cpu_interconnect_Bps / kGB) + " GB/s per direction");
  }
  p("\nInterconnect\n");
  Row(p, "Intra-VM fabric",
      fmt::format("{} ({} NVSwitches{})", IntraVmFabricName(s.fabric), s.nvswitches,
                  s.vms_per_nvlink_domain > 1 ? " per rack" : ""));
  Row(p, "NVLink domain",
      fmt::format("{} GPUs ({} VM{})", s.nvlink_domain_gpus, s.vms_per_nvlink_domain,
                  s.vms_per_nvlink_domain > 1 ? "s" : ""));
  Row(p, "PCIe switches",
      s.pcie_switches > 0 ? fmt::format("{} x {} GPUs", s.pcie_switches, s.gpus_per_pcie_switch)
                          : "none shown");
  std::string ib = IbText(s);
  if (s.infiniband && s.infiniband->gpudirect_rdma) ib += ", GPUDirect RDMA";
  Row(p, "InfiniBand", ib);
  Row(p, "NIC affinity", NicAffinityName(s.nic_affinity));
  if (!s.features.empty()) {
    p("\nFeatures\n");
    for (const auto& [k, v] : s.features) Row(p, k, v);
  }
  if (!s.supported_os.empty()) {
    p("\nSupported OS\n");
    for (const std::string& os : s.supported_os) p("  - %s\n", os.c_str());
  }
  PrintGpu(p, g);
  p("\nPrice\n");
  if (s.price) {
    Row(p, "Pay-as-you-go",
        fmt::format("{} USD/h ({}, {})", s.price->usd_per_hour, s.price->os, s.price->region));
    if (s.price->spot_usd_per_hour)
      Row(p, "Spot", fmt::format("{} USD/h", *s.price->spot_usd_per_hour));
    for (const PriceSpec& other : s.other_prices) {
      Row(p, "  " + other.region, fmt::format("{} USD/h", other.usd_per_hour));
    }
    Row(p, "Source", s.price->source);
    if (!s.price->note.empty()) Row(p, "Note", s.price->note);
  } else {
    Row(p, "Pay-as-you-go", "none (" + s.price_note + ")");
  }
  if (!s.conflicts.empty()) {
    p("\nConflicts between sources\n");
    for (const Conflict& c : s.conflicts) {
      p("  - %s: kept %s; other: %s\n    why: %s\n    sources: %s\n", c.field.c_str(),
        c.kept.c_str(), c.other.c_str(), c.resolution.c_str(), c.sources.c_str());
    }
  }
  p("\nSources\n");
  for (const std::string& src : s.sources) p("  - %s\n", src.c_str());
  p("\nSources per field\n");
  for (const auto& [k, v] : s.field_sources) Row(p, k, v);
  if (!s.notes.empty()) {
    p("\nNotes\n");
    for (const std::string& n : s.notes) p("  - %s\n", n.c_str());
  }
}

}  // namespace

Json SkuListJson(const std::vector<const SkuSpec*>& skus) {
  Json j;
  j["schema"] = "ndtwin.sku_list/1";
  j["skus"] = Json::array();
  for (const SkuSpec* s : skus) j["skus"].push_back(SkuJson(*s));
  return j;
}

std::string SkuListText(const std::vector<const SkuSpec*>& skus) {
  TextOut p;
  std::vector<std::vector<std::string>> rows;
  for (const SkuSpec* s : skus) {
    rows.push_back({s->name, std::to_string(s->vcpus), Num(Gib(s->memory_bytes)),
                    s->temp_storage_bytes > 0 ? Num(Gib(s->temp_storage_bytes)) : "-",
                    std::to_string(s->gpus), s->gpu, Num(Gib(s->gpu_memory_bytes)), IbText(*s),
                    DomainText(*s), s->price ? fmt::format("{}", s->price->usd_per_hour) : "-"});
  }
  p.Table({"Size", "vCPU", "Memory GiB", "Temp GiB", "GPUs", "GPU", "GPU mem GiB", "IB",
           "NVLink domain", "$/h"},
          {false, true, true, true, true, false, true, false, true, true}, rows);
  p("\n%zu sizes. GPU memory is per GPU. $/h: pay-as-you-go Linux (eastus where "
    "priced). Details: ndtwin sku show NAME\n",
    skus.size());
  return p.take();
}

Json SkuShowJson(const SkuSpec& spec, const GpuSpec& gpu) {
  const SkuSpec* s = &spec;
  Json j;
  {
    j["schema"] = "ndtwin.sku/1";
    Json sku = SkuJson(*s);
    sku["cpu"] = Json{{"model", s->cpu},
                      {"sockets", s->cpu_sockets},
                      {"numa_nodes", s->numa_nodes},
                      {"interconnect_gbytes_per_s_per_direction",
                       s->cpu_interconnect_Bps > 0 ? Json(Round3(s->cpu_interconnect_Bps / kGB))
                                                   : Json(nullptr)}};
    sku["nvswitches"] = s->nvswitches;
    sku["pcie_switches"] = s->pcie_switches;
    sku["gpus_per_pcie_switch"] = s->gpus_per_pcie_switch;
    sku["nic_affinity"] = NicAffinityName(s->nic_affinity);
    sku["supported_os"] = s->supported_os;
    sku["price"] = s->price ? PriceJson(*s->price) : Json(nullptr);
    if (s->price) {
      sku["price"]["source"] = s->price->source;
      sku["price"]["note"] = s->price->note;
    }
    sku["other_prices"] = Json::array();
    for (const PriceSpec& p : s->other_prices) sku["other_prices"].push_back(PriceJson(p));
    sku["price_note"] = s->price_note;
    sku["field_sources"] = Json::object();
    for (const auto& [k, v] : s->field_sources) sku["field_sources"][k] = v;
    sku["notes"] = s->notes;
    j["sku"] = sku;
    j["gpu"] = GpuJson(gpu);
  }
  return j;
}

std::string SkuShowText(const SkuSpec& sku, const GpuSpec& gpu) {
  TextOut p;
  PrintShow(p, sku, gpu);
  return p.take();
}

}  // namespace ndt
