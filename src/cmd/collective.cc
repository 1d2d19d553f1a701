// File: cmd/collective.cc
// `ndtwin collective`: an nccl-tests-like sweep of one collective over all GPUs of N VMs of a
// size (coll/collective.h): size, count, type (float), time (us), algbw and busbw (GB/s =
// 1e9 B/s, nccl-tests' bus-bandwidth factors), and the algorithm and protocol NCCL's tuner
// would pick. Sizes accept units (ParseSizeBytes: "8", "1M", "8G", powers of 1024).
#include "coll/collective.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "coll/nccl_model.h"
#include "core/units.h"
#include "hw/catalog.h"
#include "report/collective_render.h"
#include "report/intervals.h"
#include "topo/builders.h"

namespace ndt {
namespace {

// A sweep's size multiplier: nccl-tests' -f is 2; 2^20 takes 8 B to 8 GiB in two rows.
constexpr double kMaxStepFactor = 1 << 20;

struct CollectiveOptions : CommandRequest {
  std::string sku;
  int vms = 1;
  int gpus_per_vm = 0;
  std::string op = "allreduce";
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  double step_factor = 2;
  std::string algo, proto;
  std::string fidelity = "analytical";
  bool collnet = false;
  FabricArgs fabric;
  std::string nccl;         // e.g. "2.18.5"; empty: the pinned release
  int gpus_per_thread = 1;  // nccl-tests -g; 1: one process per GPU

  void Declare(OptionList* o) override {
    o->Add("sku", &sku, "VM size (see: ndtwin sku list)");
    o->Add("vms", &vms, "Number of VMs (default 1)").Range(1, kMaxVms);
    o->Add("gpus-per-vm", &gpus_per_vm, "GPUs used per VM (default: all)")
        .Range(0, kMaxGpusPerVm, "0 for all");
    o->Add("op", &op, "allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv");
    o->Add("min-bytes", &min_bytes, "Smallest size, e.g. 8, 1M (default 8)");
    o->Add("max-bytes", &max_bytes, "Largest size, e.g. 8G (default 128M)");
    o->Add("step-factor", &step_factor, "Size multiplier per row (default 2)")
        .Range(1, kMaxStepFactor, "more than 1: each row's size times it gives the next");
    o->Add("algo", &algo,
           "Force an algorithm: ring, tree, nvls, nvlstree, collnetdirect, collnetchain, pat");
    o->Add("proto", &proto, "Force a protocol: ll, ll128, simple");
    o->Add("fidelity", &fidelity, "analytical (default) or flow (max-min contention)");
    o->Add("collnet", &collnet, "Enable CollNet / IB SHARP (off by default)");
    o->Add("nccl-version", &nccl,
           "NCCL release whose tuner picks algorithm and protocol, e.g. 2.18.5 (default 2.30.4)");
    o->Add("gpus-per-thread", &gpus_per_thread,
           "GPUs one nccl-tests thread launches on (its -g), which sets the host cost of a call "
           "(default 1: one process per GPU, as PyTorch and mpirun launch)")
        .Range(1, kMaxGpusPerVm, "nccl-tests -g; leave it out for the default");
    fabric.Declare(o);
  }
};

constexpr double kMaxCollectiveBytes = 1099511627776.0;  // 1 TiB per GPU
constexpr double kMaxSweepRows = 10000;

// The collective and NCCL options the flags name: op, forced algorithm and protocol, the NCCL
// release whose tuner picks, the fidelity, CollNet and -g.
StatusOr<CollOptions> ParseOptions(const CollectiveOptions& o, CollOp* op_out) {
  NDT_RETURN_IF_ERROR(ParseCollOp(o.op, op_out));
  CollOptions co;
  co.collnet = o.collnet;
  co.gpus_per_thread = o.gpus_per_thread;
  if (!o.algo.empty()) {
    Algo a;
    NDT_RETURN_IF_ERROR(ParseAlgo(o.algo, &a));
    co.algo = a;
  }
  if (!o.proto.empty()) {
    Proto p;
    NDT_RETURN_IF_ERROR(ParseProto(o.proto, &p));
    co.proto = p;
  }
  if (!o.nccl.empty()) {
    if (Status s = ParseNcclVersion(o.nccl, &co.nccl_version); !s.ok())
      return Status::InvalidInput("--nccl-version: " + s.message());
  }
  if (o.fidelity == "flow")
    co.fidelity = Fidelity::kFlow;
  else if (o.fidelity != "analytical")
    return Status::InvalidInput("--fidelity must be analytical or flow (got '" + o.fidelity + "')");
  return co;
}

// The sweep's smallest and largest sizes, checked: 1 byte to 1 TiB, at most 10,000 rows.
StatusOr<std::pair<double, double>> SweepRange(const CollectiveOptions& o) {
  // The parser's message names the text, not the flag: say which flag carried it.
  const StatusOr<double> lo_or = ParseSizeBytes(o.min_bytes);
  if (!lo_or.ok()) return Status::InvalidInput("--min-bytes " + lo_or.status().message());
  const StatusOr<double> hi_or = ParseSizeBytes(o.max_bytes);
  if (!hi_or.ok()) return Status::InvalidInput("--max-bytes " + hi_or.status().message());
  const double lo = *lo_or, hi = *hi_or;
  if (lo > hi)
    return Status::InvalidInput("--min-bytes (" + o.min_bytes + ") is larger than --max-bytes (" +
                                o.max_bytes + ")");
  if (!(o.step_factor > 1))
    return Status::InvalidInput(
        "--step-factor must be more than 1 (each row's size times it "
        "gives the next; e.g. 2)");
  // nccl-tests starts at one element; a sweep from 0 would never grow, and one of a million
  // rows is a typo, not a measurement.
  if (lo < 1) {
    return Status::InvalidInput("--min-bytes must be at least 1 byte (got '" + o.min_bytes +
                                "'); nccl-tests sizes start at one element, e.g. --min-bytes 4");
  }
  if (hi > kMaxCollectiveBytes) {
    return Status::InvalidInput(
        "--max-bytes " + o.max_bytes +
        " is more than 1T (2^40 bytes) per GPU; use --max-bytes 1T or less");
  }
  const double sweep_rows = std::floor(std::log(hi / lo) / std::log(o.step_factor) + 1e-9) + 1;
  if (sweep_rows > kMaxSweepRows) {
    char step[32], rows[32];
    std::snprintf(step, sizeof step, "%.10g", o.step_factor);
    std::snprintf(rows, sizeof rows, "%.0f", sweep_rows);
    return Status::InvalidInput(std::string("--step-factor ") + step + " gives " + rows +
                                " rows from " + o.min_bytes + " to " + o.max_bytes +
                                " bytes, more than 10000; use a larger --step-factor (e.g. 2) "
                                "or a narrower range");
  }
  return std::make_pair(lo, hi);
}

// Why NCCL `version` runs the VMs of an NVL72 rack as separate nodes over InfiniBand.
std::string NoMnnvlWarning(const NcclTuning& k, int version, const SkuSpec& sku, int vms) {
  auto minor = [](int v) {
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100);
  };
  const std::string v = NcclVersionName(version);
  std::string why;
  if (version < k.mnnvl_since) {
    why = "NCCL " + v + " predates multi-node NVLink (MNNVL, NCCL " + minor(k.mnnvl_since) + ")";
  } else {
    const int per_rack = std::max(1, sku.vms_per_nvlink_domain);
    const int racks = (vms + per_rack - 1) / per_rack;
    why = "NCCL " + v + " uses multi-node NVLink only when all GPUs share one NVLink domain, and " +
          std::to_string(vms) + " VMs of " + sku.name + " span " + std::to_string(racks) +
          " racks (NCCL " + minor(k.mnnvl_full_since) + " lifts it)";
  }
  return why + ": each VM is its own NCCL node and GPUs of different VMs talk over InfiniBand, " +
         "not the rack's NVLink; pass --nccl-version " + minor(k.mnnvl_full_since) +
         " or newer for NVLink across VMs";
}

StatusOr<CommandOutput> RunCollective(const Context& ctx, const CollectiveOptions& o,
                                      Diagnostics* diag) {
  if (o.sku.empty()) return Status::InvalidInput("--sku is required (see: ndtwin sku list)");
  CollOp op;
  NDT_ASSIGN_OR_RETURN(CollOptions co, ParseOptions(o, &op));
  co.calibration = &ctx.nccl;
  NDT_ASSIGN_OR_RETURN(const auto range, SweepRange(o));
  const auto [lo, hi] = range;
  const Catalog& cat = ctx.catalog;
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, cat.FindSku(o.sku));
  ClusterSpec spec;
  spec.sku = sku;
  spec.gpu = &cat.GpuOf(*sku);
  spec.vms = o.vms;
  spec.gpus_per_vm = o.gpus_per_vm;
  const std::string assumed = o.fabric.Apply(&spec);
  NDT_ASSIGN_OR_RETURN(Cluster c, BuildCluster(spec, ctx.fabric));
  // A radix raised over the default is an assumption the output must state, as train's is.
  if (!assumed.empty()) diag->Warn(assumed);
  std::vector<int> group(c.num_gpus());
  std::iota(group.begin(), group.end(), 0);
  NDT_RETURN_IF_ERROR(CheckNcclRunsGpu(ctx.nccl.tuning, c.gpu_spec(), co.nccl_version));
  if (!NcclUsesNvlinkAcrossVms(c, group, ctx.nccl.tuning, co.nccl_version)) {
    // NCCL without multi-node NVLink sees each VM of the rack as a node: price that cluster.
    spec.nvlink_across_vms = false;
    NDT_ASSIGN_OR_RETURN(c, BuildCluster(spec, ctx.fabric));
    diag->Warn(NoMnnvlWarning(ctx.nccl.tuning, co.nccl_version, *sku, o.vms));
  }
  const int n = c.num_gpus();
  if (n < 2)
    return Status::InvalidInput(std::string(CollOpName(op)) +
                                " needs at least 2 GPUs; use more VMs or --gpus-per-vm > 1");
  if (op == CollOp::kSendRecv && n != 2)
    return Status::InvalidInput(
        "send_recv times one transfer between 2 GPUs, and " + std::to_string(o.vms) + " VM(s) of " +
        sku->name + " give " + std::to_string(n) +
        "; pass --gpus-per-vm 2 (inside a VM) or --vms 2 --gpus-per-vm 1 (across VMs)");

  // nccl-tests' -g: one thread drives that many of its own node's GPUs (cudaSetDevice), so
  // never more than one VM's GPUs in use.
  const int per_vm = c.gpus_per_vm();
  if (o.gpus_per_thread < 1 || o.gpus_per_thread > per_vm)
    return Status::InvalidInput("--gpus-per-thread must be 1 to " + std::to_string(per_vm) +
                                " (nccl-tests -g: a thread drives GPUs of its own VM, and " +
                                sku->name + " uses " + std::to_string(per_vm) +
                                " per VM here), got " + std::to_string(o.gpus_per_thread) +
                                "; leave it out for the default");
  // Price every size first, so an error prints nothing on stdout.
  std::vector<std::pair<double, CollResult>> results;
  for (double bytes = lo; bytes <= hi * (1 + 1e-12); bytes *= o.step_factor) {
    double b = std::floor(bytes);
    // The flow model takes seconds per size at scale: say which one runs.
    if (co.fidelity == Fidelity::kFlow) {
      diag->Progress("collective: " + std::to_string(static_cast<long long>(b)) + " bytes (flow)");
    }
    NDT_ASSIGN_OR_RETURN(CollResult r, TimeCollective(c, op, b, group, co));
    results.emplace_back(b, r);
  }
  // Every collectives case (validate's calibration sweeps) runs inside one VM: across VMs (IB,
  // a rack's NVLink domain) the classes measured nothing, so the workload's default applies.
  std::vector<IntervalClass> intervals;
  const std::string arch = ArchClassName(ctx.catalog.GpuOf(*sku).arch);
  for (const auto& [b, r] : results) {
    intervals.push_back(o.vms > 1 ? ctx.intervals.Default(arch, CollectivesWorkload(b),
                                                          "no case spans more than one VM")
                                  : IntervalFor(ctx, *sku, CollectivesWorkload(b)));
  }
  const CollectiveView v{sku->name, o.vms, n, op, o.fidelity, co.nccl_version, results, intervals};
  return CommandOutput{CollectiveJson(v), CollectiveText(v)};
}

}  // namespace

Command CollectiveCommand() {
  return MakeCommand<CollectiveOptions>(
      "collective", "Time a collective over a message-size sweep, like nccl-tests", RunCollective);
}

}  // namespace ndt
