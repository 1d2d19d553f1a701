#include "hpc/stencil.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

#include "hpc/mpi.h"

namespace ndt {
namespace {

// HPCG's definition (the benchmark's reference code): a 27-point stencil; CSR values of 8 bytes
// and column indices of 4 (local_int_t); a multigrid of 4 levels, each halving the grid.
constexpr double kNnzPerRow = 27;
constexpr double kBytesPerNnz = 12;
constexpr int kMgLevels = 4;
// A grid side up to 2^20 cells (2^60 cells per GPU is far beyond any memory).
constexpr int64_t kMaxSide = 1 << 20;

// The 3-D process grid closest to a cube with a x b x c = g (a <= b <= c).
Grid3 ProcessGrid(int g) {
  Grid3 best{1, 1, g};
  int64_t best_spread = g;
  for (int a = 1; a * a * a <= g; ++a) {
    if (g % a) continue;
    for (int b = a; a * b * b <= g; ++b) {
      if ((g / a) % b) continue;
      const int c = g / a / b;
      if (c - a < best_spread) {
        best_spread = c - a;
        best = {a, b, c};
      }
    }
  }
  return best;
}

// Face bytes one GPU exchanges per sweep (8-byte values, both sides of every split dimension).
double FaceBytes(const Grid3& local, const Grid3& procs) {
  double bytes = 0;
  for (int d = 0; d < 3; ++d) {
    if (procs[d] < 2) continue;
    const double area = static_cast<double>(local[(d + 1) % 3]) * local[(d + 2) % 3];
    bytes += 2 * area * 8;
  }
  return bytes;
}

// The neighbour pair whose path is the slowest a job of g GPUs uses (ranks 0..g-1), and its name.
std::pair<int, int> SlowestPair(const Cluster& c, int g, std::string* path) {
  const int per_vm = c.gpus_per_vm();
  const int domain = std::max(c.nvlink_domain_gpus(), per_vm);
  if (g <= per_vm) {
    *path = c.sku().fabric == IntraVmFabric::kPcie ? "PCIe" : "NVLink";
    return {0, 1};
  }
  if (g <= domain) {
    *path = "NVLink (NVL72 rack)";
    return {0, per_vm};
  }
  *path = c.sku().infiniband ? "InfiniBand" : "Ethernet";
  return {0, domain};
}

// A GPU's face exchange with its neighbours: one CUDA-aware MPI message of all its face bytes
// over the slowest neighbour path (a, b), the NIC shared by the VM's GPUs that use it (every
// GPU exchanges at once).
double HaloTime(const MpiModel& m, int a, int b, double bytes) {
  if (bytes <= 0) return 0;
  const Cluster& c = m.cluster();
  const int share = c.gpu(a).vm != c.gpu(b).vm ? m.NicSharers(a) : 1;
  return m.PointToPoint(a, b, bytes, share).time_s;
}

}  // namespace

StatusOr<Grid3> ParseGrid(const std::string& text) {
  Grid3 g{};
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == 'x' || text[i] == 'X') {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (parts.size() == 1) parts = {parts[0], parts[0], parts[0]};
  if (parts.size() != 3)
    return Status::InvalidInput("--grid '" + text + "' is not NXxNYxNZ; write e.g. 256x256x256");
  for (int d = 0; d < 3; ++d) {
    const std::string& p = parts[d];
    if (p.empty() || p.size() > 8 || p.find_first_not_of("0123456789") != std::string::npos)
      return Status::InvalidInput("--grid '" + text + "' is not NXxNYxNZ; write e.g. 256x256x256");
    g[d] = std::atoll(p.c_str());
    if (g[d] < 2 || g[d] > kMaxSide)
      return Status::InvalidInput("--grid '" + text + "': each side must be 2 to " +
                                  std::to_string(kMaxSide) + " cells");
  }
  return g;
}

StatusOr<HpcgResult> RunHpcg(const Cluster& cluster, const ComputeCalibration& compute,
                             const MpiParams& mpi, const FabricParams& fabric, const Grid3& grid) {
  const GpuSpec& gpu = cluster.gpu_spec();
  const ArchCalibration& cal = compute.For(gpu.arch);
  const double bw = gpu.memory_Bps * cal.hbm_fraction;
  const int g = cluster.num_gpus();
  // Matrix + vectors must fit: ~ (12 x 27 + 8 x 10) bytes per row at the fine level, x 8/7
  // for the coarser levels.
  const double rows = static_cast<double>(grid[0]) * grid[1] * grid[2];
  const double need = rows * (kBytesPerNnz * kNnzPerRow + 80) * 8 / 7;
  if (need > gpu.memory_bytes)
    return Status::DoesNotFit("--grid " + std::to_string(grid[0]) + "x" + std::to_string(grid[1]) +
                              "x" + std::to_string(grid[2]) + " needs " +
                              std::to_string(static_cast<int64_t>(need / 1e9)) +
                              " GB per GPU for HPCG's matrix and vectors, more than " + gpu.name +
                              " has; use a smaller --grid");
  const Grid3 procs = ProcessGrid(g);
  std::string path;
  const auto [a, b] = SlowestPair(cluster, g, &path);
  const MpiModel device(cluster, mpi, fabric, cal, MpiBuffer::kDevice);
  const MpiModel host(cluster, mpi, fabric, cal, MpiBuffer::kHost);
  HpcgResult r;
  r.grid = grid;
  double flops = 0, bytes = 0, halo_s = 0;
  for (int l = 0; l < kMgLevels; ++l) {
    const double f = std::pow(8.0, -l);
    const double n = rows * f, nnz = n * kNnzPerRow;
    const Grid3 local{std::max<int64_t>(1, grid[0] >> l), std::max<int64_t>(1, grid[1] >> l),
                      std::max<int64_t>(1, grid[2] >> l)};
    const double t_face = HaloTime(device, a, b, FaceBytes(local, procs));
    const double spmv_b = kBytesPerNnz * nnz + 16 * n, symgs_b = 2 * spmv_b;
    if (l == 0) {  // CG's own SpMV
      flops += 2 * nnz;
      bytes += spmv_b;
      halo_s += t_face;
    }
    if (l + 1 < kMgLevels) {  // pre-smooth, residual, post-smooth
      flops += 4 * nnz + 2 * nnz + 4 * nnz;
      bytes += 2 * symgs_b + spmv_b;
      halo_s += 3 * t_face;
    } else {  // coarsest: one SymGS
      flops += 4 * nnz;
      bytes += symgs_b;
      halo_s += t_face;
    }
  }
  // CG's vectors: 3 dots (2 n FLOPs, 16 n bytes) and 3 WAXPBYs (2 n, 24 n).
  flops += 3 * 2 * rows + 3 * 2 * rows;
  bytes += 3 * 16 * rows + 3 * 24 * rows;
  double t_dot = 0;
  if (g > 1) {
    // The dot's local sum comes back to the host; MPI_Allreduce of one double in host memory.
    NDT_ASSIGN_OR_RETURN(MpiAllreduce ar, TimeMpiAllreduce(host, g, 8));
    t_dot = ar.time_s;
  }
  r.memory_s = bytes / bw;
  r.halo_s = halo_s;
  r.allreduce_s = 3 * t_dot;
  r.time_per_iteration_s = r.memory_s + r.halo_s + r.allreduce_s;
  r.flops_per_iteration = flops * g;
  r.gflops = r.flops_per_iteration / r.time_per_iteration_s / 1e9;
  r.gflops_per_gpu = r.gflops / g;
  r.fraction_of_peak = r.gflops * 1e9 / (g * gpu.PeakFlops(Precision::kFp64));
  r.bound = r.memory_s >= r.halo_s && r.memory_s >= r.allreduce_s
                ? "memory"
                : (r.halo_s >= r.allreduce_s ? "halo" : "allreduce");
  return r;
}

StatusOr<Halo3dResult> RunHalo3d(const Cluster& cluster, const ComputeCalibration& compute,
                                 const MpiParams& mpi, const FabricParams& fabric,
                                 const Grid3& grid) {
  const GpuSpec& gpu = cluster.gpu_spec();
  const ArchCalibration& cal = compute.For(gpu.arch);
  const double bw = gpu.memory_Bps * cal.hbm_fraction;
  const double cells = static_cast<double>(grid[0]) * grid[1] * grid[2];
  if (cells * 16 > gpu.memory_bytes)
    return Status::DoesNotFit(
        "--grid needs " + std::to_string(static_cast<int64_t>(cells * 16 / 1e9)) +
        " GB per GPU (two FP64 copies), more than " + gpu.name + " has; use a smaller --grid");
  Halo3dResult r;
  r.grid = grid;
  const int total = cluster.num_gpus();
  std::vector<int> counts;
  for (int g = 1; g < total; g *= 2) counts.push_back(g);
  counts.push_back(total);
  const MpiModel device(cluster, mpi, fabric, cal, MpiBuffer::kDevice);
  const double t1 = cells * 16 / bw;
  for (int g : counts) {
    Halo3dRow row;
    row.gpus = g;
    const Grid3 procs = ProcessGrid(g);
    double t_weak = t1, t_strong = t1;
    if (g > 1) {
      const auto [a, b] = SlowestPair(cluster, g, &row.path);
      const Grid3 strong_local{std::max<int64_t>(1, grid[0] / procs[0]),
                               std::max<int64_t>(1, grid[1] / procs[1]),
                               std::max<int64_t>(1, grid[2] / procs[2])};
      const double weak_face = FaceBytes(grid, procs);
      const double strong_face = FaceBytes(strong_local, procs);
      t_weak = t1 + HaloTime(device, a, b, weak_face);
      const double local_cells =
          static_cast<double>(strong_local[0]) * strong_local[1] * strong_local[2];
      t_strong = local_cells * 16 / bw + HaloTime(device, a, b, strong_face);
    } else {
      row.path = "-";
    }
    row.weak_time_s = t_weak;
    row.weak_efficiency = t1 / t_weak;
    row.strong_time_s = t_strong;
    row.strong_speedup = t1 / t_strong;
    row.strong_efficiency = row.strong_speedup / g;
    if (r.strong_stops_at == 0 && row.strong_efficiency < 0.5) r.strong_stops_at = g;
    r.rows.push_back(row);
  }
  return r;
}

}  // namespace ndt
