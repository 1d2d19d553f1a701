// File: hpc/hpl.h
// HPL (and HPL-MxP) on the GPUs of a cluster: a blocked right-looking LU with row partial
// pivoting and a look-ahead of depth one, on a P x Q process grid (one rank per GPU, row-major:
// rank r is process row r / Q, column r % Q, so a process row spans neighbouring GPUs of a VM or
// rack and a process column strides across VMs). Per panel step k (m = N - k NB rows left):
//   - trailing update: each GPU's DGEMM of (m/P) x (m/Q) x NB plus the TRSM of the U block, at
//     the shape-dependent efficiency of compute/'s GEMM model (FP64 tensor cores where the GPU
//     has them; the assumption in data/hpc.yaml), or HBM-bound where that is slower;
//   - panel factorization of the (m/P) x NB panel: per column a pivot all-reduce over the
//     process column and `panel_kernels_per_column` kernel launches, plus the panel's recursive
//     GEMMs and log2(NB) passes over it in HBM;
//   - panel broadcast along the process row and the pivot-row swap (an all-gather of the NB x
//     (m/Q) U block over the process column), priced by the collective model (hpc/comm.h).
// With look-ahead, the next panel's factorization and broadcast run under the current update:
//   step = swap + max(update, panel + broadcast).
// HPL-MxP (--mxp) factors in the LU precision without pivoting (its matrix is diagonally
// dominant: no pivot all-reduces, no row swaps), then refines in FP64 (hpl.cc).
// FLOPs are HPL's: 2/3 N^3 + 3/2 N^2. Rmax = FLOPs / time; Rpeak = GPUs x the FP64 peak (tensor
// where the GPU has it). `bound` names what the critical path spent most time on.
#ifndef NDTWIN_HPC_HPL_H_
#define NDTWIN_HPC_HPL_H_

#include <cstdint>
#include <string>
#include <utility>

#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "core/status.h"
#include "hpc/params.h"
#include "topo/cluster.h"

namespace ndt {

struct HplRequest {
  int64_t n = 0;     // 0: fill HplParams::memory_fraction of the GPUs' memory
  int nb = 0;        // 0: HplParams::nb
  int p = 0, q = 0;  // both 0: the grid closest to square with P <= Q; else both given
  bool mxp = false;  // HPL-MxP: LU in HplParams::mxp_lu_precision + FP64 refinement
};

struct HplResult {
  int gpus = 0;
  int64_t n = 0;
  int nb = 0;
  int p = 0, q = 0;
  bool mxp = false;
  Precision lu_precision = Precision::kFp64;
  double flops = 0;  // 2/3 N^3 + 3/2 N^2
  double time_s = 0;
  double rmax_flops = 0;     // flops / time_s
  double rpeak_flops = 0;    // GPUs x FP64 peak
  double efficiency = 0;     // rmax / rpeak
  double lu_peak_flops = 0;  // GPUs x the LU precision's peak (= rpeak for HPL)
  double matrix_bytes_per_gpu = 0;
  double memory_fraction = 0;  // of one GPU's memory the matrix takes
  int steps = 0;
  // The critical path split by what set each step's time (sums to time_s).
  double dgemm_s = 0, panel_s = 0, comm_s = 0, refinement_s = 0;
  // Totals of each activity, hidden or not.
  double update_total_s = 0, panel_total_s = 0, bcast_total_s = 0, swap_total_s = 0;
  double dgemm_efficiency = 0;  // GEMM model's fraction of peak at the first (largest) step
  std::string bound;            // "dgemm", "panel" or "communication"
};

// HPL's operation count for order n: 2/3 n^3 + 2 n^2.
double HplFlops(double n);
// The P x Q grid closest to square with P <= Q and P x Q = gpus.
std::pair<int, int> HplGrid(int gpus);
// The largest N (a multiple of nb) whose matrix of `bytes_per_element` fills at most
// `fraction` of `gpus` GPUs of `gpu_memory_bytes` each.
int64_t HplNFromMemory(int gpus, double gpu_memory_bytes, double fraction, double bytes_per_element,
                       int nb);

// Errors (kInvalidInput, naming the flag): --p/--q given alone or not multiplying to the GPUs,
// --nb < 1 or above N, --n too large for the GPUs' memory (kDoesNotFit), --mxp on a GPU
// without the LU precision's tensor path (kUnsupported).
StatusOr<HplResult> RunHpl(const Cluster& cluster, const ComputeCalibration& compute,
                           const NcclCalibrationSet& nccl, const HpcParams& params,
                           const HplRequest& req);

}  // namespace ndt

#endif  // NDTWIN_HPC_HPL_H_
