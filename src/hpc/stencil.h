// File: hpc/stencil.h
// HPCG and halo3d: memory-bound stencil codes on a 3-D grid per GPU, with halo exchanges
// between neighbouring GPUs and (HPCG) dot-product all-reduces.
//   HPCG (the benchmark's definition: a 27-point stencil, CSR with 8-byte values and 4-byte
//   column indices, CG preconditioned by a 4-level multigrid with a symmetric Gauss-Seidel
//   smoother, 3 dot products per iteration): per CG iteration the fine SpMV (2 nnz FLOPs), per
//   multigrid level above the coarsest a pre- and post-smoothing SymGS (4 nnz each) and a residual
//   SpMV (2 nnz), the coarsest a SymGS; vectors 3 dots and 3 WAXPBYs. Each kernel streams its
//   matrix (12 B per nonzero) and vectors through HBM at compute/'s fitted STREAM fraction; each
//   SpMV and SymGS first exchanges the 6 faces of its level's grid with the neighbours; each dot
//   is an 8-byte MPI all-reduce over every GPU. Nothing overlaps (the reference code's order).
//   halo3d: a 7-point FP64 stencil sweep (16 B per cell: read and write) and a 6-face exchange per
//   iteration, weak scaling (the grid is per GPU) and strong scaling (the grid of one GPU split
//   over more) from 1 GPU to all of the cluster's.
// Face exchanges are priced as one CUDA-aware MPI message of the GPU's face bytes over the
// slowest path its neighbours use: NVLink (CUDA IPC) inside a VM or an NVL72 rack, InfiniBand
// beyond (hpc/mpi.h); HPCG's dot products are MPI allreduces of one double in host memory (the
// local sum comes back to the host, as the reference code's ComputeDotProduct does).
#ifndef NDTWIN_HPC_STENCIL_H_
#define NDTWIN_HPC_STENCIL_H_

#include <array>
#include <string>
#include <vector>

#include "compute/compute.h"
#include "core/status.h"
#include "hpc/params.h"
#include "topo/cluster.h"
#include "topo/fabric_params.h"

namespace ndt {

using Grid3 = std::array<int64_t, 3>;
// "256x256x256" (or one number for a cube); kInvalidInput naming --grid otherwise.
StatusOr<Grid3> ParseGrid(const std::string& text);

struct HpcgResult {
  Grid3 grid{};                    // per GPU
  double flops_per_iteration = 0;  // all GPUs
  double time_per_iteration_s = 0;
  double memory_s = 0, halo_s = 0, allreduce_s = 0;  // per iteration
  double gflops = 0;                                 // all GPUs, GFLOP/s
  double gflops_per_gpu = 0;
  double fraction_of_peak = 0;  // of the FP64 peak
  std::string bound;            // "memory", "halo" or "allreduce"
};
StatusOr<HpcgResult> RunHpcg(const Cluster& cluster, const ComputeCalibration& compute,
                             const MpiParams& mpi, const FabricParams& fabric, const Grid3& grid);

struct Halo3dRow {
  int gpus = 0;
  std::string path;              // where the slowest neighbour is
  double weak_time_s = 0;        // per iteration, grid per GPU
  double weak_efficiency = 0;    // t(1) / t(G)
  double strong_time_s = 0;      // per iteration, one GPU's grid split over G
  double strong_speedup = 0;     // t(1) / t(G)
  double strong_efficiency = 0;  // speedup / G
};
struct Halo3dResult {
  Grid3 grid{};
  std::vector<Halo3dRow> rows;  // G = 1, 2, 4, ... and the cluster's GPUs
  int strong_stops_at = 0;      // the first G whose strong efficiency is below 50% (0: none)
};
StatusOr<Halo3dResult> RunHalo3d(const Cluster& cluster, const ComputeCalibration& compute,
                                 const MpiParams& mpi, const FabricParams& fabric,
                                 const Grid3& grid);

}  // namespace ndt

#endif  // NDTWIN_HPC_STENCIL_H_
