// File: hpc/params.h
// The HPC benchmarks' knobs and structural assumptions, from data/hpc.yaml (strict: unknown
// keys are errors; every value carries its source). Nothing in it is fitted: the hardware rates
// come from the catalog and the kernel efficiencies from compute/'s calibration.
#ifndef NDTWIN_HPC_PARAMS_H_
#define NDTWIN_HPC_PARAMS_H_

#include <string>
#include <vector>

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

// CUDA-aware MPI's point-to-point and allreduce model (hpc/mpi.h). Times in s, rates in B/s.
struct MpiParams {
  double software_s = 0.4e-6;             // MPI + UCX send and receive path, per message
  double adapter_latency_s = 0.6e-6;      // a pair of HCAs, back to back
  double cable_latency_s = 0.05e-6;       // per InfiniBand link crossed
  double ib_mtu_bytes = 4096;             // payload per IB packet
  double ib_packet_overhead_bytes = 26;   // headers and CRCs per packet
  double rndv_threshold_bytes = 8192;     // eager up to this size, rendezvous above
  double gpu_buffer_overhead_s = 0.5e-6;  // device buffer handling per message (GPUDirect RDMA)
  double cuda_copy_latency_s = 4e-6;      // one staging copy (no GPUDirect RDMA)
  double cuda_ipc_latency_s = 2e-6;       // a CUDA IPC copy inside an NVLink domain
  double shm_latency_s = 0.2e-6;          // host buffers inside a VM
  double shm_Bps = 10e9;                  // host buffers inside a VM
  int osu_window = 64;                    // osu_bw's messages in flight
  double allreduce_short_bytes = 2048;    // recursive doubling up to this size
};

// Host DRAM per VM size for STREAM (hpc/micro.h).
struct HostMemorySize {
  std::string size;                // VM size name as in data/vms/
  double peak_per_socket_Bps = 0;  // theoretical DRAM bandwidth of one socket
  double share = 1;                // of the sockets' bandwidth this VM gets
  std::string source;
};
struct HostMemoryParams {
  double stream_fraction = 0.8;  // STREAM Triad's fraction of the theoretical peak
  std::vector<HostMemorySize> sizes;
  // The entry of a VM size, nullptr when data/hpc.yaml has none.
  const HostMemorySize* Find(const std::string& size) const;
};

struct HpcParams {
  HplParams hpl;
  StencilParams stencil;
  OsuParams osu;
  MpiParams mpi;
  HostMemoryParams host_memory;
  std::string file;  // where it was loaded from
};

// Parses data/hpc.yaml's text; `name` stands in for the file name in errors.
StatusOr<HpcParams> ParseHpcParams(const std::string& text, const std::string& name);
// Loads `data_dir`/hpc.yaml.
StatusOr<HpcParams> LoadHpcParams(const std::string& data_dir);

}  // namespace ndt

#endif  // NDTWIN_HPC_PARAMS_H_
