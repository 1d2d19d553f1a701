// File: serve/allreduce.h
// The TP all-reduce a serving engine runs, as the engine chooses it. TensorRT-LLM does not always
// call NCCL: below a message size it runs its own all-reduce kernels, which read the peers'
// buffers directly over NVLink (CUDA IPC) and sync with flags in peer memory:
//   one-shot  every rank reads all tp inputs and reduces them locally: one flag barrier and one
//             remote read, (tp - 1) x S bytes into each GPU;
//   two-shot  a reduce-scatter then an all-gather over the same buffers: each rank reduces 1/tp
//             of the message and the others read it back, 2 (tp - 1) / tp x S bytes into each GPU
//             and two barriers.
// Which one runs (data/serve/engine.yaml `custom_allreduce`, with sources):
//   tensorrt-llm 0.9-0.14 (TensorRT backend, the AllReduce plugin's AUTO strategy): NCCL above the
//     workspace (16 MB at TP 2, 8 MB above); TP 2 one-shot; TP 3-4 one-shot below 1 MB, else
//     two-shot; TP > 4 one-shot below 500 kB, else two-shot;
//   tensorrt-llm 0.20-1.0 (PyTorch backend, AllreduceOp AUTO): NCCL above the workspace; TP 2 the
//     MIN_LATENCY kernels; TP 3-4 MIN_LATENCY below 1 MB, else NCCL; TP > 4 MIN_LATENCY below
//     500 kB, else NCCL; MIN_LATENCY runs one-shot up to 128 tokens, else two-shot.
// Time of the custom kernels (seconds) from the NVLink path between two GPUs of the TP group
// (topo/: its bandwidth per direction and one-way latency, data/gpus and data/fabric.yaml):
//   one-shot = launch + 3 L + (tp - 1) S / (B e)
//   two-shot = launch + 6 L + 2 (tp - 1) / tp x S / (B e)
// L: one-way latency (a flag store is seen after L, a remote read returns after 2 L; two-shot
// pays barrier + read twice); B e: the path's bandwidth times the achieved fraction of SM-driven
// NVLink copies (coll/'s fitted bw_efficiency for the arch); launch: one kernel's fixed cost
// (compute/'s kernel_overhead for the arch). NCCL's time comes from coll/ (serve/comm.h).
// The 2024 plugin's kernels (customAllReduceKernels.cu of 0.10-0.14: oneShotAllReduceKernel,
// twoShotAllReduceKernel) add two costs of how they are written:
//   - each block first copies its part of the input into the IPC-shared buffer (S bytes read and
//     S written in local HBM): + 2 S / H, H the calibrated HBM rate;
//   - they run at most MAX_ALL_REDUCE_BLOCKS = 24 blocks of 512 threads, and each thread loads
//     16 B from every rank, sums and stores before its next loads: at most I = 24 x 512 x 16 B
//     (192 KiB) of remote reads in flight per peer, each returning after a round trip R. By
//     Little's law the peers' data arrive at no more than (tp - 1) I / R, so the read term uses
//     min(B e, (tp - 1) I / R). At TP 2 only one remote load per thread is in flight: this is
//     where the cap binds; at TP 4-8 (tp - 1) loads are, and the link is the limit. R is not
//     published for NVLink 4 through NVSwitch: it is fitted per architecture on serving.csv
//     (data/serve/engine.yaml remote_read_round_trip_2024; R = 2 L, 1.2 us on H100, gives
//     164 GB/s at TP 2, under the link's ~370 GB/s achieved); an arch without a value uses 2 L.
#ifndef NDTWIN_SERVE_ALLREDUCE_H_
#define NDTWIN_SERVE_ALLREDUCE_H_

#include <string>

namespace ndt {

// Which engine's all-reduce selection a run follows (the serving stack's tp_allreduce trait).
enum class TpAllReduceImpl {
  kNccl,        // always NCCL
  kTrtllm2024,  // TensorRT-LLM 0.9-0.14, TensorRT backend AllReduce plugin
  kTrtllm2025,  // TensorRT-LLM 0.20-1.0, PyTorch backend AllreduceOp
};
const char* TpAllReduceName(TpAllReduceImpl impl);  // "nccl", "trtllm-2024", "trtllm-2025"
bool ParseTpAllReduce(const std::string& s, TpAllReduceImpl* out);

enum class TpAllReduceAlgo { kNccl, kOneShot, kTwoShot };

// data/serve/engine.yaml custom_allreduce (bytes are decimal, as TensorRT-LLM writes them).
struct CustomAllReduceParams {
  double workspace_tp2_bytes = 16e6;  // largest message of the custom kernels at TP <= 2
  double workspace_bytes = 8e6;       // above TP 2
  double oneshot_below_tp4_bytes = 1e6;
  double oneshot_below_bytes = 500e3;  // TP > 4
  int min_latency_oneshot_max_tokens = 128;
  // The 2024 kernels' remote reads in flight per peer: blocks x threads x bytes per load.
  double inflight_bytes_2024 = 24 * 512 * 16.0;
};

// The algorithm `impl` runs for one all-reduce of `bytes` (= tokens x hidden x 2) over tp GPUs.
TpAllReduceAlgo ChooseTpAllReduce(TpAllReduceImpl impl, int tp, double bytes, int tokens,
                                  const CustomAllReduceParams& p);

// The NVLink path the custom kernels use between two GPUs of the group.
struct NvlinkPath {
  double bw_Bps = 0;     // per direction, already times the achieved fraction
  double latency_s = 0;  // one way
  double launch_s = 0;   // one kernel's fixed cost
  // The 2024 kernels' traits (above); 0: not modelled (the 2025 kernels, NCCL).
  double inflight_bytes = 0;     // remote reads in flight per peer
  double copy_Bps = 0;           // local HBM rate of the copy into the shared buffer
  double read_round_trip_s = 0;  // one remote load's round trip; 0: 2 x latency_s
};

// Time of a one-shot or two-shot all-reduce of `bytes` over tp GPUs (formulas above).
// REQUIRES: algo != kNccl, tp >= 2, path.bw_Bps > 0.
double CustomAllReduceTime(TpAllReduceAlgo algo, int tp, double bytes, const NvlinkPath& path);

}  // namespace ndt

#endif  // NDTWIN_SERVE_ALLREDUCE_H_
