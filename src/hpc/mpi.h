// File: hpc/mpi.h
// CUDA-aware MPI (HPC-X: Open MPI over UCX) on the cluster graph: the path the OSU
// micro-benchmarks measure, priced from the graph's topology (which links a message crosses,
// their rates, how many IB switches) and data/hpc.yaml's `mpi` constants (each with its unit
// and source; most are stated assumptions).
//
// Point-to-point, one message of s bytes, one way (osu_latency's half round trip):
//   inter-VM over InfiniBand, host buffers:
//     t = software + adapter + cables x IB links + switches x switch latency (fabric.yaml)
//         + s / bw, bw = min(IB port x payload efficiency, the route's other links)
//         + (eager only) 2 s / shm_bandwidth: the payload copied into a registered bounce
//         buffer on send and out of one on receive (UCX bcopy; gdrcopy for device buffers)
//   device buffers add, with GPUDirect RDMA, gpu_buffer_overhead + the route's GPU-side PCIe /
//   C2C hops (the NIC reads and writes GPU memory across them); without it (staging through
//   host memory), 2 x cuda_copy_latency and the PCIe copies pipelined with the wire (bw = the
//   slower of the two).
//   Above rndv_threshold (UCX's eager/rendezvous switch) the data waits for a control round
//   trip (RTS to the receiver, its RDMA read request back): + software + 2 x (adapter + cables
//   + switches).
//   inside an NVLink domain (a VM, or an NVL72 rack), device buffers: CUDA IPC (a copy-engine
//   copy over NVLink / PCIe peer-to-peer): software + cuda_ipc_latency + the route's link
//   latencies + s / the route's rate.
//   inside a VM, host buffers: shared memory, software + shm_latency + s / shm_bandwidth.
// osu_bw: a window of `osu_window` back-to-back non-blocking sends, then one acknowledgement:
//   bw = W s / (t(s) + (W - 1) max(s / bw_path, software + s / shm_bandwidth)).
// Allreduce (osu_allreduce, MPICH's / Open MPI's algorithm choice): recursive doubling up to
//   allreduce_short_bytes, Rabenseifner (reduce-scatter by recursive halving, all-gather by
//   recursive doubling) above; ranks are row-major (a VM's GPUs are neighbours), so the short
//   distances stay inside a VM. A non-power-of-two count p folds the extra p - 2^floor(log2 p)
//   ranks in and out first (2 more full-size steps). Every step costs the point-to-point time
//   of its bytes on its partner's path (the NIC's rate split between the GPUs that share it),
//   plus the local reduction on the GPU (a kernel launch + 3 s / HBM rate) or CPU (3 s / shm
//   rate). No HCOLL/SHARP in-network reduction: Azure's recommended launch lines disable HCOLL
//   (shared/reference/topology.md §3.3, §4.1).
#ifndef NDTWIN_HPC_MPI_H_
#define NDTWIN_HPC_MPI_H_

#include <string>
#include <vector>

#include "compute/compute.h"
#include "core/status.h"
#include "hpc/params.h"
#include "topo/cluster.h"
#include "topo/fabric_params.h"

namespace ndt {

enum class MpiBuffer { kDevice, kHost };
const char* MpiBufferName(MpiBuffer b);  // "device", "host"
// "device" / "d" / "gpu", "host" / "h" / "cpu"; kInvalidInput naming --buffer otherwise.
StatusOr<MpiBuffer> ParseMpiBuffer(const std::string& s);

// What one point-to-point message costs and how it went.
struct P2pTime {
  double time_s = 0;
  double latency_s = 0;      // the size-independent part
  double copy_s = 0;         // eager bounce-buffer copies (inter-VM eager only)
  double bandwidth_Bps = 0;  // the path's rate for the payload
  std::string transport;     // "ib-gdr", "ib-staged", "ib-host", "cuda-ipc", "shm"
  std::string protocol;      // "eager", "rendezvous" (IB), "ipc", "shm"
};

// The MPI model on one cluster. All references must outlive it.
class MpiModel {
 public:
  MpiModel(const Cluster& cluster, const MpiParams& params, const FabricParams& fabric,
           const ArchCalibration& gpu_cal, MpiBuffer buffer);
  // One message of `bytes` from GPU (rank) a to b (a != b). nic_share: GPUs sending through the
  // same NIC at the same time (collective steps), dividing its rate.
  P2pTime PointToPoint(int a, int b, double bytes, int nic_share = 1) const;
  // osu_bw's windowed bandwidth for a to b.
  double WindowBandwidth(int a, int b, double bytes) const;
  // The local reduction of `bytes` (a GPU kernel, or the CPU for host buffers).
  double ReduceTime(double bytes) const;
  // GPUs of rank a's VM that use rank a's NIC.
  int NicSharers(int a) const;
  MpiBuffer buffer() const { return buffer_; }
  const Cluster& cluster() const { return c_; }
  const MpiParams& params() const { return p_; }

 private:
  const Cluster& c_;
  const MpiParams& p_;
  const FabricParams& f_;
  const ArchCalibration& cal_;
  MpiBuffer buffer_;
};

struct MpiAllreduceStep {
  std::string phase;  // "fold", "exchange", "reduce-scatter", "all-gather", "unfold"
  int distance = 0;   // partner rank distance (rank XOR distance; p' for fold/unfold)
  double bytes = 0;
  std::string transport;
  double time_s = 0;  // transfer + reduction
};
struct MpiAllreduce {
  double bytes = 0;
  int ranks = 0;
  std::string algorithm;  // "recursive-doubling", "rabenseifner"
  double time_s = 0;
  double busbw_Bps = 0;  // nccl-tests' convention: bytes / t x 2 (p - 1) / p
  std::vector<MpiAllreduceStep> steps;
};
// Over ranks 0..ranks-1 of the model's cluster. kInvalidInput for fewer than 2.
StatusOr<MpiAllreduce> TimeMpiAllreduce(const MpiModel& m, int ranks, double bytes);

}  // namespace ndt

#endif  // NDTWIN_HPC_MPI_H_
