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
#include "core/files.h"
#include "fleet/fleet.h"
#include "hw/catalog.h"
#include "report/topo_render.h"
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
  // Two GPUs of one VM only where the size has two: --gpus-per-vm 2 on a 1-GPU size (ND6s) is
  // itself an error.
  std::string fix = "use a size with InfiniBand";
  if (c.gpus_per_vm() > 1) {
    fix = "pick two GPUs of one VM (e.g. " + std::to_string(first) + "," +
          std::to_string(first + 1) + ") or a size with InfiniBand";
  } else if (c.sku().gpus > 1) {
    fix = "use --gpus-per-vm 2 or more and pick two GPUs of one VM or a size with InfiniBand";
  }
  return Status::InvalidInput("no route from GPU " + std::to_string(a) + " (" +
                              c.node(ga.node).name + ") to GPU " + std::to_string(b) + " (" +
                              c.node(c.gpu(b).node).name + "): " + c.sku().name +
                              " has no InfiniBand, so GPUs of different VMs are not connected; " +
                              fix + " (see: ndtwin sku list)");
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
  // The fewest tiers that wire the VMs and, with --radix left out, a radix doubled until 3 tiers
  // can (as train, collective and hpc build theirs): topo refused 12,500 VMs of 8 GPUs that
  // train ran, though --radix's help says the default is raised.
  const std::string assumed = ResolveFabric(&spec);
  NDT_ASSIGN_OR_RETURN(Cluster c, BuildCluster(spec, fp));
  if (!assumed.empty()) diag->Warn(assumed);  // once the cluster is built: not before an error

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
  // The scale-set limits of data/placement.yaml, as fleet and the Placement line read them.
  for (const std::string& w : place.warnings) diag->Warn(w);
  const TopoView v{c, fp, place, ctx.fleet.placement, o.dot, ends};
  return CommandOutput{TopoJson(v), TopoText(v)};
}

}  // namespace

Command TopoCommand() {
  return MakeCommand<TopoOptions>(
      "topo", "Build the cluster graph of N VMs of a size and summarize it", RunTopo);
}

}  // namespace ndt
