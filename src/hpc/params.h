// File: hpc/params.h
// The HPC benchmarks' knobs and structural assumptions, from data/hpc.yaml (strict: unknown
// keys are errors; every value carries its source). Nothing in it is fitted: the hardware rates
// come from the catalog and the kernel efficiencies from compute/'s calibration.
#ifndef NDTWIN_HPC_PARAMS_H_
#define NDTWIN_HPC_PARAMS_H_

#include <string>

#include "core/status.h"
#include "hw/spec.h"

namespace ndt {

struct HplParams {
  double memory_fraction = 0.85;      // of the GPUs' memory N fills when not given
  double max_memory_fraction = 0.95;  // the most --n may fill
  int nb = 1024;                      // block size when not given
  double panel_kernels_per_column = 3;
  Precision mxp_lu_precision = Precision::kFp16;
  double mxp_matrix_bytes = 4;  // bytes per element of the HPL-MxP working matrix
  double mxp_panel_bytes = 2;   // bytes per element of the panels HPL-MxP sends
  int mxp_refinement_iterations = 3;
};

struct OsuParams {
  double latency_bytes = 8;
  double bw_bytes = 4194304;
  double allreduce_bytes = 8;
};

struct StencilParams {
  std::string hpcg_grid = "256x256x256";
  std::string halo3d_grid = "512x512x512";
};

struct HpcParams {
  HplParams hpl;
  StencilParams stencil;
  OsuParams osu;
  std::string file;  // where it was loaded from
};

// Parses data/hpc.yaml's text; `name` stands in for the file name in errors.
StatusOr<HpcParams> ParseHpcParams(const std::string& text, const std::string& name);
// Loads `data_dir`/hpc.yaml.
StatusOr<HpcParams> LoadHpcParams(const std::string& data_dir);

}  // namespace ndt

#endif  // NDTWIN_HPC_PARAMS_H_
