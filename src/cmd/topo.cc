// File: cmd/topo.cc
// `ndtwin topo`: builds the cluster graph of N VMs of a size (topo/builders.h) and prints its
// summary (GPUs, NVLink domain, per-GPU NVLink and scale-out bandwidth in GB/s per direction,
// nodes and links by kind, bisection, fat-tree shape, assumed latencies), optionally a Graphviz
// file (--dot) and the route between two GPU ranks hop by hop (--path A,B).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "cmd/text.h"
#include "core/files.h"
#include "fleet/fleet.h"
#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/summary.h"

namespace ndt {
namespace {

struct TopoOptions : CommandRequest {
  std::string sku;
  int vms = 1;
  int gpus_per_vm = 0;
  FabricArgs fabric;  // tiers 0: the fewest tiers the radix can wire
  bool no_rail_optimized = false;
  std::string dot;
  std::string path;

  void Declare(OptionList* o) override {
    o->Add("sku", &sku, "VM size (see: ndtwin sku list)");
    o->Add("vms", &vms, "Number of VMs (default 1)").Range(1, kMaxVms);
    o->Add("gpus-per-vm", &gpus_per_vm, "GPUs used per VM (default: all)")
        .Range(0, kMaxGpusPerVm, "0 for all");
    fabric.Declare(o);
    o->Add("no-rail-optimized", &no_rail_optimized,
           "Put all NICs of a VM on one leaf instead of one leaf per rail");
    o->Add("dot", &dot, "Write the graph as Graphviz DOT to FILE").LocalFile();
    o->Add("path", &path, "Print the route between GPU ranks A,B");
  }
};

// Parses "A,B" into two distinct ranks below n.
StatusOr<std::pair<int, int>> ParsePath(const std::string& text, int n) {
  std::string why = "--path wants two different GPU ranks A,B in 0.." + std::to_string(n - 1) +
                    " (got '" + text + "')";
  size_t comma = text.find(',');
  if (comma == std::string::npos) return Status::InvalidInput(why);
  int a = 0, b = 0;
  try {
    size_t ea = 0, eb = 0;
    a = std::stoi(text.substr(0, comma), &ea);
    b = std::stoi(text.substr(comma + 1), &eb);
    if (ea != comma || eb != text.size() - comma - 1) return Status::InvalidInput(why);
  } catch (const std::exception&) {
    return Status::InvalidInput(why);
  }
  if (a < 0 || b < 0 || a >= n || b >= n || a == b) return Status::InvalidInput(why);
  return std::make_pair(a, b);
}

// A route exists between any two GPUs of one VM (NVLink or PCIe) and, on sizes with
// InfiniBand, between VMs; GpuRoute is empty only for GPUs of different VMs without it.
Status CheckRoute(const Cluster& c, int a, int b) {
  if (!c.GpuRoute(a, b).empty()) return Status::Ok();
  const GpuInfo& ga = c.gpu(a);
  const int first = ga.vm * c.gpus_per_vm();
  const std::string one_vm = c.gpus_per_vm() > 1
                                 ? "pick two GPUs of one VM (e.g. " + std::to_string(first) + "," +
                                       std::to_string(first + 1) + ")"
                                 : "use --gpus-per-vm 2 or more and pick two GPUs of one VM";
  return Status::InvalidInput("no route from GPU " + std::to_string(a) + " (" +
                              c.node(ga.node).name + ") to GPU " + std::to_string(b) + " (" +
                              c.node(c.gpu(b).node).name + "): " + c.sku().name +
                              " has no InfiniBand, so GPUs of different VMs are not connected; " +
                              one_vm + " or a size with InfiniBand (see: ndtwin sku list)");
}

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
  p("Assumed latencies:  per link: nvlink %s, pcie %s, c2c %s, cpu_cpu %s, NIC %s, "
    "IB switch %s (data/fabric.yaml)\n",
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
    paths.push_back({{"fraction", p.fraction}, {"hops", hops}});
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

StatusOr<CommandOutput> RunTopo(const Context& ctx, const TopoOptions& o, Diagnostics* diag) {
  if (o.sku.empty()) return Status::InvalidInput("--sku is required (see: ndtwin sku list)");
  if (!o.dot.empty()) NDT_RETURN_IF_ERROR(CheckWritablePath(o.dot, "--dot"));
  const Catalog& cat = ctx.catalog;
  const FabricParams& fp = ctx.fabric;
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, cat.FindSku(o.sku));
  ClusterSpec spec;
  spec.sku = sku;
  spec.gpu = &cat.GpuOf(*sku);
  spec.vms = o.vms;
  spec.gpus_per_vm = o.gpus_per_vm;
  spec.fabric = o.fabric.ToSpec();
  spec.fabric.rail_optimized = !o.no_rail_optimized;
  if (spec.fabric.tiers ==
      0) {  // the fewest tiers that wire the VMs; errors then come from 2 tiers
    spec.fabric.tiers = 2;
    ClusterSpec three = spec;
    three.fabric.tiers = 3;
    if (!ValidateClusterSpec(spec).ok() && ValidateClusterSpec(three).ok()) spec = three;
  }
  NDT_ASSIGN_OR_RETURN(Cluster c, BuildCluster(spec, fp));
  if (std::optional<std::string> w = ScaleSetWarning(spec)) diag->Warn(*w);

  std::optional<std::pair<int, int>> ends;
  if (!o.path.empty()) {
    NDT_ASSIGN_OR_RETURN(ends, ParsePath(o.path, c.num_gpus()));
    NDT_RETURN_IF_ERROR(CheckRoute(c, ends->first, ends->second));
  }
  if (!o.dot.empty()) {
    std::ostringstream out;
    WriteDot(c, out);
    NDT_RETURN_IF_ERROR(WriteFileAtomic(o.dot, out.str(), "--dot"));
  }
  NDT_ASSIGN_OR_RETURN(Placement place,
                       PlanPlacement(ctx.fleet.placement, *sku, o.vms, 0, /*strict=*/false));
  nlohmann::ordered_json j = ToJson(c, fp);
  if (c.fabric_layout().nics > 0) {
    j["placement"] = {{"scale_sets", place.scale_sets},
                      {"racks", place.racks},
                      {"azure_arranged", place.azure_arranged}};
  }
  if (!o.dot.empty()) j["dot_file"] = o.dot;
  if (ends) {
    j["path"] = {{"from", ends->first},
                 {"to", ends->second},
                 {"paths", RouteJson(c, c.GpuRoute(ends->first, ends->second))}};
  }
  TextOut p;
  PrintText(p, c, fp, place, ctx.fleet.placement);
  if (!o.dot.empty()) p("DOT graph:          %s\n", o.dot.c_str());
  if (ends) {
    const auto [a, b] = *ends;
    p("\nRoute from GPU %d (%s) to GPU %d (%s):\n", a, c.node(c.gpu(a).node).name.c_str(), b,
      c.node(c.gpu(b).node).name.c_str());
    p("%s", FormatRoute(c, c.GpuRoute(a, b)).c_str());
  }
  return CommandOutput{j, p.take()};
}

}  // namespace

Command TopoCommand() {
  return MakeCommand<TopoOptions>(
      "topo", "Build the cluster graph of N VMs of a size and summarize it", RunTopo);
}

}  // namespace ndt
