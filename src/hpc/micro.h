// File: hpc/micro.h
// STREAM and the OSU MPI micro-benchmarks on a cluster.
//   STREAM, GPU: Copy, Scale, Add, Triad reach the HBM bandwidth times compute/'s fitted STREAM
//     fraction (data/calibration/compute.yaml hbm_fraction, fitted on the STREAM-like rows of
//     validation/calibration/microbench.csv); the model does not tell the four kernels apart.
//     The VM's figure is its GPUs' sum (each GPU streams its own HBM).
//   STREAM, host: the VM's DRAM, sockets (data/vms/) x per-socket theoretical bandwidth x share
//     (data/hpc.yaml host_memory, from the CPU vendors' channel counts and DDR rates) x the
//     stated STREAM fraction; absent where the VM's CPU is not in data/hpc.yaml.
//   OSU latency / bandwidth: one message between two GPUs, GPU 0 -> 1 inside VM 0, GPU 0 of VM 0
//     -> GPU 0 of VM 1 (InfiniBand, or NVLink inside an NVL72 rack) and, where the cluster spans
//     more than one NVL72 rack, GPU 0 -> the first GPU of the second rack (InfiniBand), priced
//     by the CUDA-aware MPI model (hpc/mpi.h) with device or host buffers; latency = one way
//     (osu_latency), bandwidth = osu_bw's windowed rate. Each pair also carries the curve over
//     OSU's message sizes (1 B to 4 MiB, and the requested size).
//   OSU allreduce: MPI's allreduce over every GPU of the cluster (hpc/mpi.h).
#ifndef NDTWIN_HPC_MICRO_H_
#define NDTWIN_HPC_MICRO_H_

#include <optional>
#include <string>
#include <vector>

#include "compute/compute.h"
#include "core/status.h"
#include "hpc/mpi.h"
#include "hpc/params.h"
#include "topo/cluster.h"

namespace ndt {

struct StreamResult {
  double gpu_Bps = 0;       // per GPU (Copy, Scale, Add and Triad alike)
  double vm_Bps = 0;        // GPUs per VM x gpu_Bps
  double cluster_Bps = 0;   // all GPUs
  double peak_gpu_Bps = 0;  // the HBM's rated bandwidth
  double fraction = 0;      // gpu_Bps / peak
  // Host DRAM (absent when data/hpc.yaml has no entry for the size).
  bool has_host = false;
  int host_sockets = 0;
  double host_share = 1;
  double host_peak_Bps = 0;  // the VM's theoretical DRAM bandwidth
  double host_Bps = 0;       // x stream_fraction
  double host_fraction = 0;
  double host_cluster_Bps = 0;
  std::string host_cpu, host_source;
};
StreamResult RunStream(const Cluster& cluster, const ComputeCalibration& compute,
                       const HostMemoryParams& host);

// One point of a pair's curve over message sizes.
struct OsuPoint {
  double bytes = 0;
  double latency_s = 0;      // osu_latency: one way
  double bandwidth_Bps = 0;  // osu_bw: windowed
};

// One pair's row: where the two GPUs are and what a message costs.
struct OsuPair {
  std::string scope;      // "intra-vm", "inter-vm", "inter-rack"
  std::string path;       // "NVLink", "InfiniBand", ... as the route says
  std::string transport;  // "cuda-ipc", "ib-gdr", "ib-staged", "ib-host", "shm"
  std::string protocol;   // "ipc", "eager", "rendezvous", "shm"
  int from = 0, to = 1;
  double bytes = 0;
  double time_s = 0;         // one way at `bytes` (osu_latency)
  double bandwidth_Bps = 0;  // osu_bw: bytes / time with a window of messages in flight
  std::vector<OsuPoint> curve;
};
// osu_latency / osu_bw at `bytes`: intra-VM when a VM has 2 GPUs or more, inter-VM when there
// are 2 VMs or more (kInvalidInput when neither: one GPU in total).
StatusOr<std::vector<OsuPair>> RunOsuPairs(const MpiModel& mpi, double bytes);

struct OsuAllreduce {
  double bytes = 0;
  double time_s = 0;
  double busbw_Bps = 0;
  std::string algorithm;  // "recursive-doubling", "rabenseifner"
  std::vector<MpiAllreduceStep> steps;
  std::vector<OsuPoint> curve;  // latency over OSU's sizes (4 B to 4 MiB, and `bytes`)
};
// kInvalidInput for fewer than 2 GPUs.
StatusOr<OsuAllreduce> RunOsuAllreduce(const MpiModel& mpi, double bytes);

}  // namespace ndt

#endif  // NDTWIN_HPC_MICRO_H_
