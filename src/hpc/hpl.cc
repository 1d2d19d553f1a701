#include "hpc/hpl.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "hpc/comm.h"

namespace ndt {
namespace {

// Panel steps a run may take (N / NB): a bound on the model's work, far above real runs
// (Eagle's N ~ 1.1e7 at NB 1024 is 11,000 steps).
constexpr int64_t kMaxSteps = 1000000;

std::string Num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

// One GEMM of m x n x k on one GPU at the GEMM model's shape-dependent efficiency, or bound by
// HBM where that is slower (C read and written, A and B read, `elem` bytes per element).
double GemmTime(const GpuSpec& gpu, const ArchCalibration& cal, const ComputeCalibration& compute,
                double m, double n, double k, Precision p, double elem, double* eff_out) {
  if (m < 1 || n < 1 || k < 1) return 0;
  const double eff = GemmEfficiency(gpu, static_cast<int64_t>(std::llround(m)),
                                    static_cast<int64_t>(std::llround(n)),
                                    static_cast<int64_t>(std::llround(k)), 1, p, compute);
  if (eff_out != nullptr) *eff_out = eff;
  const double compute_s = 2 * m * n * k / (gpu.PeakFlops(p) * eff);
  const double bytes = elem * (m * k + k * n + 2 * m * n);
  const double memory_s = bytes / (gpu.memory_Bps * cal.hbm_fraction);
  return std::max(compute_s, memory_s) + cal.kernel_overhead_s;
}

}  // namespace

// HPL's count (testing/ptest/HPL_pdtest.c): 2/3 N^3 - 1/2 N^2 for the LU factorization plus
// 2 N^2 for the triangular solves, so 2/3 N^3 + 3/2 N^2.
double HplFlops(double n) { return 2.0 / 3.0 * n * n * n + 1.5 * n * n; }

std::pair<int, int> HplGrid(int gpus) {
  int p = 1;
  for (int d = 1; static_cast<int64_t>(d) * d <= gpus; ++d) {
    if (gpus % d == 0) p = d;
  }
  return {p, gpus / p};
}

int64_t HplNFromMemory(int gpus, double gpu_memory_bytes, double fraction, double bytes_per_element,
                       int nb) {
  const double n = std::sqrt(fraction * gpu_memory_bytes * gpus / bytes_per_element);
  const int64_t blocks = static_cast<int64_t>(std::floor(n / nb));
  return std::max<int64_t>(blocks, 1) * nb;
}

StatusOr<HplResult> RunHpl(const Cluster& cluster, const ComputeCalibration& compute,
                           const NcclCalibrationSet& nccl, const HpcParams& params,
                           const HplRequest& req) {
  const GpuSpec& gpu = cluster.gpu_spec();
  const ArchCalibration& cal = compute.For(gpu.arch);
  const HplParams& hp = params.hpl;
  HplResult r;
  r.gpus = cluster.num_gpus();
  r.mxp = req.mxp;
  r.lu_precision = req.mxp ? hp.mxp_lu_precision : Precision::kFp64;
  const double elem = req.mxp ? hp.mxp_matrix_bytes : 8.0;
  const double panel_elem = req.mxp ? hp.mxp_panel_bytes : 8.0;
  if (gpu.PeakFlops(Precision::kFp64) <= 0)
    return Status::Unsupported(gpu.name + " has no FP64 rate in the catalog; HPL cannot run");
  if (req.mxp && gpu.PeakFlops(r.lu_precision) <= 0)
    return Status::Unsupported(std::string("--mxp: ") + gpu.name + " has no " +
                               PrecisionName(r.lu_precision) +
                               " tensor path for HPL-MxP's LU; run plain HPL (leave out --mxp)");

  // Grid.
  if ((req.p > 0) != (req.q > 0))
    return Status::InvalidInput(
        "--p and --q go together (the P x Q process grid); give both or "
        "neither");
  if (req.p > 0) {
    if (static_cast<int64_t>(req.p) * req.q != r.gpus)
      return Status::InvalidInput(
          "--p " + std::to_string(req.p) + " x --q " + std::to_string(req.q) + " = " +
          std::to_string(static_cast<int64_t>(req.p) * req.q) + " ranks, but the cluster has " +
          std::to_string(r.gpus) + " GPUs (one rank per GPU); choose P x Q = " +
          std::to_string(r.gpus) + " or leave both out");
    r.p = req.p;
    r.q = req.q;
  } else {
    std::tie(r.p, r.q) = HplGrid(r.gpus);
  }

  // N and NB.
  r.nb = req.nb > 0 ? req.nb : hp.nb;
  const double gpu_mem = gpu.memory_bytes;
  if (req.n > 0) {
    r.n = req.n;
    if (r.nb > r.n)
      return Status::InvalidInput("--nb " + std::to_string(r.nb) + " is larger than --n " +
                                  std::to_string(r.n) + "; choose a block size below N");
  } else {
    r.n = HplNFromMemory(r.gpus, gpu_mem, hp.memory_fraction, elem, r.nb);
  }
  if ((r.n + r.nb - 1) / r.nb > kMaxSteps)
    return Status::InvalidInput("--nb " + std::to_string(r.nb) + " makes " +
                                std::to_string((r.n + r.nb - 1) / r.nb) + " panel steps for N " +
                                std::to_string(r.n) +
                                ", more than 1,000,000; use a block size of at least " +
                                std::to_string(r.n / kMaxSteps + 1) + " (GPU runs use 256-1024)");
  // The busiest GPU holds ceil(N/P) x ceil(N/Q) elements.
  const double rows_loc = std::ceil(static_cast<double>(r.n) / r.p);
  const double cols_loc = std::ceil(static_cast<double>(r.n) / r.q);
  r.matrix_bytes_per_gpu = rows_loc * cols_loc * elem;
  r.memory_fraction = r.matrix_bytes_per_gpu / gpu_mem;
  if (r.memory_fraction > hp.max_memory_fraction) {
    const int64_t n_max = HplNFromMemory(r.gpus, gpu_mem, hp.max_memory_fraction, elem, 1);
    return Status::DoesNotFit(
        "--n " + std::to_string(r.n) + " needs " + Num(r.matrix_bytes_per_gpu / 1e9) +
        " GB of matrix per GPU, more "
        "than " +
        Num(hp.max_memory_fraction * 100) + "% of " + gpu.name + "'s " + Num(gpu_mem / 1e9) +
        " GB; use --n " + std::to_string(n_max) + " or less, or more VMs");
  }

  // Groups: process row 0 (Q neighbouring ranks) and process column 0 (P ranks, stride Q).
  std::vector<int> row(r.q), col(r.p);
  for (int j = 0; j < r.q; ++j) row[j] = j;
  for (int i = 0; i < r.p; ++i) col[i] = i * r.q;
  CollOptions co;
  co.calibration = &nccl;
  co.host_hidden = true;
  const double n = static_cast<double>(r.n);
  const double nb = r.nb;
  NDT_ASSIGN_OR_RETURN(CommCurve bcast, CommCurve::Build(cluster, CollOp::kBroadcast, row,
                                                         rows_loc * nb * panel_elem, co));
  NDT_ASSIGN_OR_RETURN(CommCurve swap, CommCurve::Build(cluster, CollOp::kAllGather, col,
                                                        cols_loc * nb * panel_elem, co));
  NDT_ASSIGN_OR_RETURN(CommCurve pivot,
                       CommCurve::Build(cluster, CollOp::kAllReduce, col, (nb + 4) * 8, co));

  const Precision prec = r.lu_precision;
  double t_dgemm_c = 0, t_panel_c = 0, t_comm_c = 0;
  const int64_t steps = (r.n + r.nb - 1) / r.nb;
  r.steps = static_cast<int>(steps);
  for (int64_t k = 0; k < steps; ++k) {
    const double m = n - static_cast<double>(k) * nb;  // rows and columns left
    const double w = std::min(nb, m);                  // this panel's width
    const double rest = m - w;                         // trailing matrix order
    const double m_loc = rest / r.p, n_loc = rest / r.q;
    // Trailing update: TRSM of the U block (w x n_loc, w^2 n_loc FLOPs) + the DGEMM.
    double eff = 0;
    double t_update = GemmTime(gpu, cal, compute, m_loc, n_loc, w, prec, elem, &eff);
    if (n_loc > 0)
      t_update += GemmTime(gpu, cal, compute, w / 2, n_loc, w / 2, prec, elem, nullptr) * 2;
    if (k == 0) r.dgemm_efficiency = eff;
    // Panel factorization: (m/P) x w, recursive: its GEMMs are about (m/P) x w/2 x w/2, and it
    // makes log2(w) passes over the panel in HBM; per column a pivot all-reduce and kernels.
    const double pm = m / r.p;
    const double pass = std::max(1.0, std::log2(w));
    const double panel_gemm =
        GemmTime(gpu, cal, compute, pm, w / 2, w / 2, prec, elem, nullptr) * 2;
    const double panel_mem = 2 * pm * w * elem * pass / (gpu.memory_Bps * cal.hbm_fraction);
    const double t_panel =
        std::max(panel_gemm, panel_mem) + w * (hp.panel_kernels_per_column * cal.kernel_overhead_s +
                                               (req.mxp ? 0.0 : pivot.Time((w + 4) * 8)));
    const double t_bcast = bcast.Time(pm * w * panel_elem);
    // Row swaps: the w pivot rows of the trailing columns gathered over the process column, and
    // copied in and out of HBM locally.
    // HPL-MxP factors its diagonally dominant matrix without pivoting: no pivot search, no swaps.
    const double t_swap = req.mxp ? 0.0
                                  : swap.Time(w * n_loc * panel_elem) +
                                        4 * w * n_loc * elem / (gpu.memory_Bps * cal.hbm_fraction);
    r.update_total_s += t_update;
    r.panel_total_s += t_panel;
    r.bcast_total_s += t_bcast;
    r.swap_total_s += t_swap;
    // Look-ahead: the next panel (factor + broadcast) runs under this update; the first panel
    // has nothing to hide under.
    if (k == 0) {
      t_panel_c += t_panel;
      t_comm_c += t_bcast;
    }
    if (t_update >= t_panel + t_bcast || k + 1 == steps) {
      t_dgemm_c += t_update;
    } else {
      t_panel_c += t_panel;
      t_comm_c += t_bcast;
    }
    t_comm_c += t_swap;
  }
  r.dgemm_s = t_dgemm_c;
  r.panel_s = t_panel_c;
  r.comm_s = t_comm_c;
  r.time_s = t_dgemm_c + t_panel_c + t_comm_c;
  if (req.mxp) {
    // Iterative refinement in FP64: per iteration the residual (a mat-vec over the working
    // matrix) and two triangular solves over the factors, HBM-bound, plus a broadcast of each of
    // the N / NB diagonal solves along the grid (latency-bound).
    const double per_gpu_bytes = r.matrix_bytes_per_gpu * (1 + 2 * hp.mxp_panel_bytes / elem);
    const double per_iter = per_gpu_bytes / (gpu.memory_Bps * cal.hbm_fraction) +
                            static_cast<double>(steps) * 2 * bcast.Time(nb * 8);
    r.refinement_s = hp.mxp_refinement_iterations * per_iter;
    r.time_s += r.refinement_s;
  }
  r.flops = HplFlops(n);
  r.rmax_flops = r.flops / r.time_s;
  r.rpeak_flops = r.gpus * gpu.PeakFlops(Precision::kFp64);
  r.lu_peak_flops = r.gpus * gpu.PeakFlops(prec);
  r.efficiency = r.rmax_flops / r.rpeak_flops;
  if (r.dgemm_s >= r.panel_s && r.dgemm_s >= r.comm_s)
    r.bound = "dgemm";
  else if (r.panel_s >= r.comm_s)
    r.bound = "panel";
  else
    r.bound = "communication";
  return r;
}

}  // namespace ndt
