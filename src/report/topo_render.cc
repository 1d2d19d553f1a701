#include "report/topo_render.h"

#include <cstdio>
#include <string>

#include "hw/catalog.h"
#include "report/text.h"
#include "topo/builders.h"
#include "topo/summary.h"

namespace ndt {
namespace {

std::string Counts(const Cluster& c, bool nodes) {
  std::string s;
  auto add = [&](const char* name, int n) {
    if (!s.empty()) s += ", ";
    s += std::string(name) + " " + std::to_string(n);
  };
  if (nodes) {
    for (auto [k, n] : NodeCounts(c)) add(NodeKindName(k), n);
  } else {
    for (auto [k, n] : LinkCounts(c)) add(LinkKindName(k), n);
  }
  return s;
}

std::string Plural(int n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Us(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g us", s * 1e6);
  return buf;
}

void PrintText(TextOut& p, const Cluster& c, const FabricParams& fp, const Placement& place,
               const PlacementData& limits) {
  const SkuSpec& sku = c.sku();
  const FabricLayout& L = c.fabric_layout();
  p("Cluster:            %d x %s = %d GPUs (%s, %d per VM)\n", c.num_vms(), sku.name.c_str(),
    c.num_gpus(), c.gpu_spec().name.c_str(), c.gpus_per_vm());
  p("Intra-VM fabric:    %s\n", IntraVmFabricName(sku.fabric));
  p("NVLink domain:      %d GPU%s\n", c.nvlink_domain_gpus(),
    c.nvlink_domain_gpus() == 1 ? " (no NVLink)" : "s");
  p("NVLink per GPU:     %s GB/s per direction\n", FormatGBps(GpuNvlinkBps(c)).c_str());
  p("Scale-out per GPU:  %s GB/s per direction\n", FormatGBps(GpuScaleoutBps(c)).c_str());
  if (L.nics == 0) {
    p("Scale-out fabric:   none (the size has no InfiniBand)\n");
  } else {
    const FabricSpec& f = c.spec().fabric;
    p("Scale-out fabric:   %d-tier fat tree, radix %d, %s, oversubscription %g:1, %s\n", L.tiers,
      f.switch_radix, L.rails > 1 ? (std::to_string(L.rails) + " rails").c_str() : "1 rail",
      f.oversubscription, f.ecmp_spread ? "ECMP spread" : "ECMP hashed per GPU pair");
    p("                    %d NICs of %s GB/s, %d VMs per leaf, %s, %s", L.nics,
      FormatGBps(L.nic_Bps).c_str(), L.vms_per_leaf, Plural(L.leaves, "leaf", "leaves").c_str(),
      Plural(L.spines, "spine", "spines").c_str());
    if (L.tiers == 3) {
      p(", %s, %s", Plural(L.pods, "pod", "pods").c_str(),
        Plural(L.cores, "core", "cores").c_str());
    }
    p("\n");
    p("Bisection:          %s GB/s per direction\n", FormatGBps(BisectionBps(c)).c_str());
    p("Placement:          %s\n", DescribePlacement(place, limits).c_str());
  }
  p("Nodes:              %zu (%s)\n", c.nodes().size(), Counts(c, true).c_str());
  p("Links:              %d full-duplex (%s)\n", DuplexLinks(c), Counts(c, false).c_str());
  p("Assumed latencies:  per link: nvlink %s, pcie %s, c2c %s, cpu_cpu %s, NIC %s; "
    "per IB switch crossed %s (data/fabric.yaml)\n",
    Us(fp.nvlink_latency_s).c_str(), Us(fp.pcie_latency_s).c_str(), Us(fp.c2c_latency_s).c_str(),
    Us(fp.cpu_cpu_latency_s).c_str(), Us(fp.nic_latency_s).c_str(),
    Us(fp.switch_latency_s).c_str());
  if (L.nics > 0) {
    p("Assumed fabric:     radix, VMs per leaf and oversubscription are parameters; "
      "Azure publishes none (topology.md §6.1)\n");
  }
}

nlohmann::ordered_json RouteJson(const Cluster& c, const Route& r) {
  nlohmann::ordered_json paths = nlohmann::ordered_json::array();
  for (const Path& p : r) {
    nlohmann::ordered_json hops = nlohmann::ordered_json::array();
    for (LinkId l : p.links) {
      const Link& k = c.link(l);
      hops.push_back({{"from", c.node(k.src).name},
                      {"to", c.node(k.dst).name},
                      {"kind", LinkKindName(k.kind)},
                      {"bw_Bps", k.bw_Bps},
                      {"lanes", k.lanes},
                      {"latency_s", k.latency_s}});
    }
    // The totals the text prints ("bottleneck 25 GB/s, latency 3.33 us").
    paths.push_back({{"fraction", p.fraction},
                     {"bottleneck_Bps", PathBottleneckBps(c, p)},
                     {"latency_s", PathLatency(c, p)},
                     {"hops", hops}});
  }
  return paths;
}

nlohmann::ordered_json ToJson(const Cluster& c, const FabricParams& fp) {
  const FabricLayout& L = c.fabric_layout();
  const FabricSpec& f = c.spec().fabric;
  nlohmann::ordered_json j;
  j["schema"] = "ndtwin.topo/1";
  j["sku"] = c.sku().name;
  j["gpu"] = c.gpu_spec().name;
  j["vms"] = c.num_vms();
  j["gpus_per_vm"] = c.gpus_per_vm();
  j["gpus"] = c.num_gpus();
  j["nvlink_domain_gpus"] = c.nvlink_domain_gpus();
  j["gpu_nvlink_Bps"] = GpuNvlinkBps(c);
  j["gpu_scaleout_Bps"] = GpuScaleoutBps(c);
  j["nodes"] = c.nodes().size();
  j["links"] = DuplexLinks(c);
  j["bisection_Bps"] = BisectionBps(c);
  nlohmann::ordered_json nodes, links;
  for (auto [k, n] : NodeCounts(c)) nodes[NodeKindName(k)] = n;
  for (auto [k, n] : LinkCounts(c)) links[LinkKindName(k)] = n;
  j["nodes_by_kind"] = nodes;
  j["links_by_kind"] = links;
  nlohmann::ordered_json fab;
  fab["intra_vm"] = IntraVmFabricName(c.sku().fabric);
  fab["scale_out"] = L.nics > 0 ? "fat_tree" : "none";
  if (L.nics > 0) {
    fab["tiers"] = L.tiers;
    fab["radix"] = f.switch_radix;
    fab["rail_optimized"] = L.rails > 1;
    fab["rails"] = L.rails;
    fab["oversubscription"] = f.oversubscription;
    fab["ecmp_spread"] = f.ecmp_spread;
    fab["nics"] = L.nics;
    fab["nic_Bps"] = L.nic_Bps;
    fab["vms_per_leaf"] = L.vms_per_leaf;
    fab["leaves"] = L.leaves;
    fab["spines"] = L.spines;
    fab["pods"] = L.pods;
    fab["cores"] = L.cores;
    fab["leaf_up_link_Bps"] = L.leaf_up_link_Bps;
    fab["spine_up_link_Bps"] = L.spine_up_link_Bps;
  }
  j["fabric"] = fab;
  j["latency_s"] = {{"nvlink_link", fp.nvlink_latency_s}, {"pcie_link", fp.pcie_latency_s},
                    {"c2c_link", fp.c2c_latency_s},       {"cpu_cpu_link", fp.cpu_cpu_latency_s},
                    {"nic_link", fp.nic_latency_s},       {"switch_link", fp.switch_latency_s}};
  return j;
}

}  // namespace

Json TopoJson(const TopoView& v) {
  const Cluster& c = v.cluster;
  Json j = ToJson(c, v.fabric);
  if (c.fabric_layout().nics > 0) {
    const Placement& place = v.placement;
    j["placement"] = {{"scale_sets", place.scale_sets},
                      {"racks", place.racks},
                      {"azure_arranged", place.azure_arranged}};
  }
  if (!v.dot_file.empty()) j["dot_file"] = v.dot_file;
  if (const auto& ends = v.path) {
    j["path"] = {{"from", ends->first},
                 {"to", ends->second},
                 {"paths", RouteJson(c, c.GpuRoute(ends->first, ends->second))}};
  }
  return j;
}

std::string TopoText(const TopoView& v) {
  const Cluster& c = v.cluster;
  TextOut p;
  PrintText(p, c, v.fabric, v.placement, v.limits);
  if (!v.dot_file.empty()) p("DOT graph:          %s\n", v.dot_file.c_str());
  if (const auto& ends = v.path) {
    const auto [a, b] = *ends;
    p("\nRoute from GPU %d (%s) to GPU %d (%s):\n", a, c.node(c.gpu(a).node).name.c_str(), b,
      c.node(c.gpu(b).node).name.c_str());
    p("%s", FormatRoute(c, c.GpuRoute(a, b)).c_str());
  }
  return p.take();
}

}  // namespace ndt
