// File: cmd/hpc.cc
// `ndtwin hpc`: HPC benchmarks on N VMs of a size (issue 22): HPL and HPL-MxP (hpc/hpl.h),
// STREAM and the OSU latency, bandwidth and allreduce micro-benchmarks (hpc/micro.h), HPCG and
// the halo3d stencil's weak and strong scaling (hpc/stencil.h). The
// benchmark knobs and assumptions come from data/hpc.yaml (Context::hpc); rendering is
// report/hpc_render.h.
#include <optional>
#include <string>

#include "cmd/command.h"
#include "cmd/common.h"
#include "cmd/registry.h"
#include "compute/compute.h"
#include "core/units.h"
#include "fleet/fleet.h"
#include "hpc/hpl.h"
#include "hpc/micro.h"
#include "hpc/mpi.h"
#include "hpc/params.h"
#include "hpc/run.h"
#include "hpc/stencil.h"
#include "report/hpc_render.h"
#include "topo/builders.h"

namespace ndt {
namespace {

constexpr const char* kBenches = "hpl, hpcg, stream, osu-latency, osu-bw, osu-allreduce, halo3d";
// HPL orders up to 10^9 (the largest TOP500 runs are ~2 x 10^7).
constexpr double kMaxN = 1e9;

struct HpcOptions : CommandRequest {
  std::string sku;
  int vms = 1;
  int gpus_per_vm = 0;
  std::string bench;
  std::optional<int64_t> n;
  std::optional<int> nb, p, q;
  bool mxp = false;
  std::string bytes;
  std::string buffer;
  std::string grid;
  FabricArgs fabric;

  void Declare(OptionList* o) override {
    o->Add("sku", &sku, "VM size (see: ndtwin sku list)");
    o->Add("vms", &vms, "Number of VMs (default 1)").Range(1, kMaxVms);
    o->Add("gpus-per-vm", &gpus_per_vm, "GPUs used per VM (default: all)")
        .Range(0, kMaxGpusPerVm, "0 for all");
    o->Add("bench", &bench, std::string("Benchmark: ") + kBenches);
    o->Add("n", &n, "HPL: matrix order N (default: fills data/hpc.yaml's fraction of GPU memory)")
        .Range(1, kMaxN);
    o->Add("nb", &nb, "HPL: block size NB (default data/hpc.yaml's)").Range(1, 65536);
    o->Add("p", &p, "HPL: process-grid rows P (with --q; default: closest to square, P <= Q)")
        .Range(1, kMaxClusterGpus);
    o->Add("q", &q, "HPL: process-grid columns Q (with --p)").Range(1, kMaxClusterGpus);
    o->Add("mxp", &mxp, "HPL: HPL-MxP (LU in 16-bit on tensor cores + FP64 refinement)");
    o->Add("bytes", &bytes,
           "OSU: message size, e.g. 8, 1M (default: 8 B latency and allreduce, 4 MiB bandwidth)");
    o->Add("buffer", &buffer,
           "OSU: device (GPU memory, default) or host (CPU memory) buffers, as osu_latency D D / "
           "H H");
    o->Add("grid", &grid,
           "HPCG and halo3d: grid per GPU, NXxNYxNZ (default data/hpc.yaml's: 256^3 HPCG, 512^3 "
           "halo3d)");
    fabric.Declare(o);
  }
};

StatusOr<CommandOutput> RunHpc(const Context& ctx, const HpcOptions& o, Diagnostics* diag) {
  if (o.sku.empty()) return Status::InvalidInput("--sku is required (see: ndtwin sku list)");
  if (o.bench.empty()) return Status::InvalidInput(std::string("--bench is required: ") + kBenches);
  const std::string& b = o.bench;
  const bool hpl = b == "hpl", stream = b == "stream", lat = b == "osu-latency", bw = b == "osu-bw",
             ar = b == "osu-allreduce", hpcg = b == "hpcg", halo = b == "halo3d";
  if (!(hpl || stream || lat || bw || ar || hpcg || halo))
    return Status::InvalidInput("--bench '" + b + "' is unknown; use one of: " + kBenches);
  if (!(hpcg || halo) && !o.grid.empty())
    return Status::InvalidInput(
        "--grid is HPCG's and halo3d's; use it with --bench hpcg or halo3d");
  if (!hpl && (o.n || o.nb || o.p || o.q || o.mxp))
    return Status::InvalidInput(
        "--n, --nb, --p, --q and --mxp are HPL's; use them with --bench hpl");
  if (!(lat || bw || ar) && !o.bytes.empty())
    return Status::InvalidInput(
        "--bytes is the OSU benchmarks'; use it with --bench osu-latency, "
        "osu-bw or osu-allreduce");
  if (!(lat || bw || ar) && !o.buffer.empty())
    return Status::InvalidInput(
        "--buffer is the OSU benchmarks'; use it with --bench osu-latency, "
        "osu-bw or osu-allreduce");
  MpiBuffer buffer = MpiBuffer::kDevice;
  if (!o.buffer.empty()) {
    NDT_ASSIGN_OR_RETURN(buffer, ParseMpiBuffer(o.buffer));
  }
  const HpcParams& params = ctx.hpc;
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
  // The cluster graph joins VMs only through InfiniBand (or an NVL72 rack's NVLink); without it
  // an MPI message between VMs would cross no link and run at infinite bandwidth. STREAM stays
  // inside each GPU and VM.
  if (!stream && c.num_vms() > 1 && !sku->infiniband && c.nvlink_domain_gpus() <= c.gpus_per_vm())
    return Status::InvalidInput(sku->name + " has no InfiniBand: " + b +
                                " across VMs needs a scale-out network; use --vms 1 or a size "
                                "with InfiniBand (see: ndtwin sku list)");
  // The scale-set limits of data/placement.yaml, as fleet reads them.
  NDT_ASSIGN_OR_RETURN(Placement place, PlanPlacement(ctx.fleet.placement, *sku, c.num_vms(), 0,
                                                      /*strict=*/false));
  for (const std::string& w : place.warnings) diag->Warn(w);

  HpcRun run;
  run.bench = b;
  run.sku = sku->name;
  run.gpu = c.gpu_spec().name;
  run.vms = c.num_vms();
  run.gpus = c.num_gpus();
  run.gpus_per_vm = c.gpus_per_vm();
  run.fp64_flops = c.gpu_spec().fp64_flops;
  run.fp64_tensor_flops = c.gpu_spec().fp64_tensor_flops;
  run.bf16_flops = c.gpu_spec().bf16_flops;
  // Hopper's FP64 GEMMs have their own fit (measured DGEMMs); other architectures borrow the
  // fitted fraction of their tensor-core GEMMs, which the output says.
  const ArchCalibration& arch_cal = ctx.compute.For(c.gpu_spec().arch);
  const std::string gemm_note =
      arch_cal.gemm.count(Precision::kFp64) > 0
          ? "DGEMM on the FP64 tensor cores at the " + arch_cal.arch +
                " FP64 GEMM fit (data/calibration/compute.yaml, fitted on DGEMMs ndtwin measured "
                "on an H200: data/measured/)"
          : "DGEMM on the FP64 tensor cores reaches the sustained fraction of peak of the "
            "architecture's fitted tensor-core GEMMs (data/calibration/compute.yaml; no FP64 "
            "GEMM measurement for this architecture)";
  const std::string mpi_note =
      "HPL's panel broadcasts and row swaps are priced by the NCCL collective model on the "
      "cluster graph (a CUDA-aware MPI stand-in)";
  const std::string mpi_model_note =
      "CUDA-aware MPI (HPC-X / UCX) from data/hpc.yaml's mpi constants on the cluster graph: "
      "software overhead and CUDA IPC latency are assumptions, the staging copy measured on a "
      "lent H100; adapter latency from the ConnectX-6 datasheet, switch latency from "
      "data/fabric.yaml";
  if (hpl) {
    HplRequest req;
    req.n = o.n.value_or(0);
    req.nb = o.nb.value_or(0);
    req.p = o.p.value_or(0);
    req.q = o.q.value_or(0);
    req.mxp = o.mxp;
    NDT_ASSIGN_OR_RETURN(HplResult r, RunHpl(c, ctx.compute, ctx.nccl, params, req));
    run.hpl = r;
    run.assumptions.push_back(gemm_note);
    run.assumptions.push_back(mpi_note);
    run.assumptions.push_back(
        "look-ahead depth 1: the next panel's factorization and broadcast hide under the "
        "trailing update; Rpeak at the rated (boost-clock) FP64 peak");
    if (!o.n) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "N fills %.0f%% of GPU memory (data/hpc.yaml)",
                    params.hpl.memory_fraction * 100);
      run.assumptions.push_back(buf);
    }
  } else if (hpcg || halo) {
    const std::string text =
        !o.grid.empty() ? o.grid : (hpcg ? params.stencil.hpcg_grid : params.stencil.halo3d_grid);
    NDT_ASSIGN_OR_RETURN(Grid3 g, ParseGrid(text));
    if (hpcg) {
      NDT_ASSIGN_OR_RETURN(HpcgResult h, RunHpcg(c, ctx.compute, params.mpi, ctx.fabric, g));
      run.hpcg = h;
    } else {
      NDT_ASSIGN_OR_RETURN(Halo3dResult h, RunHalo3d(c, ctx.compute, params.mpi, ctx.fabric, g));
      run.halo3d = h;
    }
    run.assumptions.push_back(
        "kernels stream through HBM at the fitted STREAM fraction (compute.yaml); halo exchanges "
        "cross the slowest neighbour path, nothing overlaps");
    run.assumptions.push_back(mpi_model_note);
    if (hpcg)
      run.assumptions.push_back(
          "HPCG's dot products: MPI_Allreduce of one double in host memory; halo exchanges: "
          "one CUDA-aware MPI message of the GPU's face bytes over its slowest neighbour path");
  } else if (stream) {
    run.stream = RunStream(c, ctx.compute, params.host_memory);
    run.assumptions.push_back(
        "GPU STREAM reaches the fitted HBM fraction of data/calibration/compute.yaml "
        "(STREAM-like rows); the four kernels are not told apart");
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "host STREAM Triad sustains %.0f%% of the DRAM's theoretical bandwidth "
                  "(data/hpc.yaml host_memory, assumption)",
                  params.host_memory.stream_fraction * 100);
    run.assumptions.push_back(buf);
    if (!run.stream->has_host)
      run.assumptions.push_back("no host DRAM figure: data/hpc.yaml has no CPU memory entry for " +
                                sku->name + " (CPU: " + sku->cpu + ")");
  } else {
    double bytes =
        lat ? params.osu.latency_bytes : (bw ? params.osu.bw_bytes : params.osu.allreduce_bytes);
    if (!o.bytes.empty()) {
      NDT_ASSIGN_OR_RETURN(bytes, ParseSizeBytes(o.bytes));
      if (bytes < 1 || bytes > 1099511627776.0)
        return Status::InvalidInput("--bytes must be 1 byte to 1T (got '" + o.bytes + "')");
    }
    const MpiModel mpi(c, params.mpi, ctx.fabric, ctx.compute.For(c.gpu_spec().arch), buffer);
    run.buffer = MpiBufferName(buffer);
    if (ar) {
      NDT_ASSIGN_OR_RETURN(OsuAllreduce a, RunOsuAllreduce(mpi, bytes));
      run.allreduce = a;
    } else {
      NDT_ASSIGN_OR_RETURN(run.osu, RunOsuPairs(mpi, bytes));
    }
    run.assumptions.push_back(mpi_model_note);
    if (ar)
      run.assumptions.push_back(
          "allreduce: recursive doubling up to data/hpc.yaml's allreduce_short, Rabenseifner "
          "above; no HCOLL/SHARP in-network reduction (Azure's launch lines disable HCOLL)");
  }
  return CommandOutput{HpcJson(run), HpcText(run)};
}

}  // namespace

Command HpcCommand() {
  return MakeCommand<HpcOptions>(
      "hpc",
      "HPC benchmarks: HPL (and HPL-MxP), HPCG, STREAM, OSU latency/bandwidth/allreduce, halo3d "
      "stencil scaling",
      RunHpc);
}

}  // namespace ndt
