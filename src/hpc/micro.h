// File: hpc/micro.h
// STREAM and the OSU MPI micro-benchmarks on a cluster.
//   STREAM (per GPU): Copy, Scale, Add, Triad reach the HBM bandwidth times compute/'s fitted
//     STREAM fraction (data/calibration/compute.yaml hbm_fraction, fitted on the STREAM-like rows
//     of validation/calibration/microbench.csv); the model does not tell the four kernels apart.
//     The VM's figure is its GPUs' sum (each GPU streams its own HBM).
//   OSU latency / bandwidth: one message between two GPUs, GPU 0 -> 1 inside VM 0 (NVLink or
//     PCIe), GPU 0 of VM 0 -> GPU 0 of VM 1 (InfiniBand, or NVLink inside an NVL72 rack) and,
//     where the cluster spans more than one NVL72 rack, GPU 0 -> the first GPU of the second rack
//     (InfiniBand), each a send_recv of the collective model; latency = its time, bandwidth =
//     bytes / time.
//   OSU allreduce: one all_reduce over every GPU of the cluster.
// MPI is priced by the NCCL model of coll/ (the assumption data/hpc.yaml states).
#ifndef NDTWIN_HPC_MICRO_H_
#define NDTWIN_HPC_MICRO_H_

#include <string>
#include <vector>

#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "core/status.h"
#include "topo/cluster.h"

namespace ndt {

struct StreamResult {
  double gpu_Bps = 0;       // per GPU (Copy, Scale, Add and Triad alike)
  double vm_Bps = 0;        // GPUs per VM x gpu_Bps
  double cluster_Bps = 0;   // all GPUs
  double peak_gpu_Bps = 0;  // the HBM's rated bandwidth
  double fraction = 0;      // gpu_Bps / peak
};
StreamResult RunStream(const Cluster& cluster, const ComputeCalibration& compute);

// One pair's row: where the two GPUs are and what a message costs.
struct OsuPair {
  std::string scope;  // "intra-vm", "inter-vm", "inter-rack"
  std::string path;   // "NVLink", "InfiniBand", ... as the route says
  int from = 0, to = 1;
  double bytes = 0;
  double time_s = 0;
  double bandwidth_Bps = 0;  // bytes / time
};
// osu_latency / osu_bw at `bytes`: intra-VM when a VM has 2 GPUs or more, inter-VM when there
// are 2 VMs or more (kInvalidInput when neither: one GPU in total).
StatusOr<std::vector<OsuPair>> RunOsuPairs(const Cluster& cluster, const NcclCalibrationSet& nccl,
                                           double bytes);

struct OsuAllreduce {
  double bytes = 0;
  double time_s = 0;
  double busbw_Bps = 0;
  std::string algorithm, protocol;
};
// kInvalidInput for fewer than 2 GPUs.
StatusOr<OsuAllreduce> RunOsuAllreduce(const Cluster& cluster, const NcclCalibrationSet& nccl,
                                       double bytes);

}  // namespace ndt

#endif  // NDTWIN_HPC_MICRO_H_
