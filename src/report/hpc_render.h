// File: report/hpc_render.h
// `ndtwin hpc`'s JSON document (schema ndtwin.hpc/1) and text, over hpc/run.h's HpcRun.
// JSON: {schema, bench, sku, gpu, vms, gpus, gpus_per_vm, fp64_flops_per_gpu,
// fp64_tensor_flops_per_gpu, bf16_flops_per_gpu, assumptions[], and the bench's block}: hpl:
// rmax_flops, rpeak_flops, efficiency, time_s, n, nb, p, q, bound, flops, mxp, lu_precision,
// matrix_bytes_per_gpu, memory_fraction, steps, dgemm_efficiency, critical_path_s {dgemm, panel,
// communication, refinement}, totals_s {update, panel, broadcast, swap}; stream: gpu_Bps,
// vm_Bps, cluster_Bps, peak_gpu_Bps, fraction, host {cpu, sockets, share, peak_Bps, vm_Bps,
// fraction, cluster_Bps, source} (null when data/hpc.yaml has no entry for the size);
// osu-*: buffer ("device" | "host"); osu-latency / osu-bw: pairs[] {scope, path, transport,
// protocol, from, to, bytes, time_s, latency_us (one way), bandwidth_Bps (osu_bw's windowed
// rate), curve[] {bytes, latency_us, bandwidth_Bps}}; osu-allreduce: allreduce {bytes, time_s,
// latency_us, busbw_Bps, algorithm, steps[] {phase, distance, bytes, transport, time_s},
// curve[] {bytes, latency_us, busbw_Bps}}; hpcg: grid, gflops, gflops_per_gpu,
// fraction_of_peak, flops_per_iteration, time_per_iteration_s, memory_s, halo_s, allreduce_s,
// bound; halo3d: grid, strong_stops_at, rows[] {gpus, path, weak_time_s, weak_efficiency,
// strong_time_s, strong_speedup, strong_efficiency}. Units are SI (FLOP/s, B/s, s) except
// gflops (GFLOP/s) and *_us (microseconds).
#ifndef NDTWIN_REPORT_HPC_RENDER_H_
#define NDTWIN_REPORT_HPC_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>

#include "hpc/run.h"

namespace ndt {

nlohmann::ordered_json HpcJson(const HpcRun& run);
std::string HpcText(const HpcRun& run);

}  // namespace ndt

#endif  // NDTWIN_REPORT_HPC_RENDER_H_
