#include "report/hpc_render.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

std::string F(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string F(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// 1.23 PFLOP/s, 45.6 TFLOP/s, ...
std::string Flops(double v) {
  if (v >= 1e18) return F("%.2f EFLOP/s", v / 1e18);
  if (v >= 1e15) return F("%.2f PFLOP/s", v / 1e15);
  if (v >= 1e12) return F("%.2f TFLOP/s", v / 1e12);
  return F("%.2f GFLOP/s", v / 1e9);
}

std::string Bw(double v) {
  if (v >= 1e12) return F("%.2f TB/s", v / 1e12);
  return F("%.2f GB/s", v / 1e9);
}

std::string Seconds(double s) {
  if (s >= 3600) return F("%.0f s (%.1f h)", s, s / 3600);
  if (s >= 1) return F("%.1f s", s);
  if (s >= 1e-3) return F("%.2f ms", s * 1e3);
  return F("%.2f us", s * 1e6);
}

Json HplJson(const HplResult& h) {
  Json j;
  j["rmax_flops"] = h.rmax_flops;
  j["rpeak_flops"] = h.rpeak_flops;
  j["efficiency"] = h.efficiency;
  j["time_s"] = h.time_s;
  j["n"] = h.n;
  j["nb"] = h.nb;
  j["p"] = h.p;
  j["q"] = h.q;
  j["bound"] = h.bound;
  j["flops"] = h.flops;
  j["mxp"] = h.mxp;
  j["lu_precision"] = PrecisionName(h.lu_precision);
  j["lu_peak_flops"] = h.lu_peak_flops;
  j["matrix_bytes_per_gpu"] = h.matrix_bytes_per_gpu;
  j["memory_fraction"] = h.memory_fraction;
  j["steps"] = h.steps;
  j["dgemm_efficiency"] = h.dgemm_efficiency;
  j["critical_path_s"] = {{"dgemm", h.dgemm_s},
                          {"panel", h.panel_s},
                          {"communication", h.comm_s},
                          {"refinement", h.refinement_s}};
  j["totals_s"] = {{"update", h.update_total_s},
                   {"panel", h.panel_total_s},
                   {"broadcast", h.bcast_total_s},
                   {"swap", h.swap_total_s}};
  return j;
}

}  // namespace

Json HpcJson(const HpcRun& run) {
  Json j;
  j["schema"] = "ndtwin.hpc/1";
  j["bench"] = run.bench;
  j["sku"] = run.sku;
  j["gpu"] = run.gpu;
  j["vms"] = run.vms;
  j["gpus"] = run.gpus;
  j["gpus_per_vm"] = run.gpus_per_vm;
  j["fp64_flops_per_gpu"] = run.fp64_flops;
  j["fp64_tensor_flops_per_gpu"] = run.fp64_tensor_flops;
  j["bf16_flops_per_gpu"] = run.bf16_flops;
  if (run.hpl) j["hpl"] = HplJson(*run.hpl);
  if (run.stream) {
    const StreamResult& s = *run.stream;
    j["stream"] = {{"gpu_Bps", s.gpu_Bps},
                   {"vm_Bps", s.vm_Bps},
                   {"cluster_Bps", s.cluster_Bps},
                   {"peak_gpu_Bps", s.peak_gpu_Bps},
                   {"fraction", s.fraction}};
    if (s.has_host) {
      j["stream"]["host"] = {{"cpu", s.host_cpu},
                             {"sockets", s.host_sockets},
                             {"share", s.host_share},
                             {"peak_Bps", s.host_peak_Bps},
                             {"vm_Bps", s.host_Bps},
                             {"fraction", s.host_fraction},
                             {"cluster_Bps", s.host_cluster_Bps},
                             {"source", s.host_source}};
    } else {
      j["stream"]["host"] = nullptr;
    }
  }
  if (!run.buffer.empty()) j["buffer"] = run.buffer;
  if (!run.osu.empty()) {
    Json pairs = Json::array();
    for (const OsuPair& p : run.osu) {
      Json curve = Json::array();
      for (const OsuPoint& c : p.curve)
        curve.push_back({{"bytes", c.bytes},
                         {"latency_us", c.latency_s * 1e6},
                         {"bandwidth_Bps", c.bandwidth_Bps}});
      pairs.push_back({{"scope", p.scope},
                       {"path", p.path},
                       {"transport", p.transport},
                       {"protocol", p.protocol},
                       {"from", p.from},
                       {"to", p.to},
                       {"bytes", p.bytes},
                       {"time_s", p.time_s},
                       {"latency_us", p.time_s * 1e6},
                       {"bandwidth_Bps", p.bandwidth_Bps},
                       {"curve", curve}});
    }
    j["pairs"] = pairs;
  }
  if (run.allreduce) {
    const OsuAllreduce& a = *run.allreduce;
    Json steps = Json::array();
    for (const MpiAllreduceStep& s : a.steps)
      steps.push_back({{"phase", s.phase},
                       {"distance", s.distance},
                       {"bytes", s.bytes},
                       {"transport", s.transport},
                       {"time_s", s.time_s}});
    Json curve = Json::array();
    for (const OsuPoint& c : a.curve)
      curve.push_back(
          {{"bytes", c.bytes}, {"latency_us", c.latency_s * 1e6}, {"busbw_Bps", c.bandwidth_Bps}});
    j["allreduce"] = {{"bytes", a.bytes},
                      {"time_s", a.time_s},
                      {"latency_us", a.time_s * 1e6},
                      {"busbw_Bps", a.busbw_Bps},
                      {"algorithm", a.algorithm},
                      {"steps", steps},
                      {"curve", curve}};
  }
  if (run.hpcg) {
    const HpcgResult& h = *run.hpcg;
    j["hpcg"] = {{"grid", h.grid},
                 {"gflops", h.gflops},
                 {"gflops_per_gpu", h.gflops_per_gpu},
                 {"fraction_of_peak", h.fraction_of_peak},
                 {"flops_per_iteration", h.flops_per_iteration},
                 {"time_per_iteration_s", h.time_per_iteration_s},
                 {"memory_s", h.memory_s},
                 {"halo_s", h.halo_s},
                 {"allreduce_s", h.allreduce_s},
                 {"bound", h.bound}};
  }
  if (run.halo3d) {
    const Halo3dResult& h = *run.halo3d;
    Json rows = Json::array();
    for (const Halo3dRow& r : h.rows) {
      rows.push_back({{"gpus", r.gpus},
                      {"path", r.path},
                      {"weak_time_s", r.weak_time_s},
                      {"weak_efficiency", r.weak_efficiency},
                      {"strong_time_s", r.strong_time_s},
                      {"strong_speedup", r.strong_speedup},
                      {"strong_efficiency", r.strong_efficiency}});
    }
    j["halo3d"] = {{"grid", h.grid}, {"strong_stops_at", h.strong_stops_at}, {"rows", rows}};
  }
  j["assumptions"] = run.assumptions;
  return j;
}

std::string HpcText(const HpcRun& run) {
  std::string t;
  t += F("# ndtwin hpc: %s, %d VM(s) of %s, %d GPUs (%s)\n", run.bench.c_str(), run.vms,
         run.sku.c_str(), run.gpus, run.gpu.c_str());
  if (run.hpl) {
    const HplResult& h = *run.hpl;
    if (run.fp64_tensor_flops > run.fp64_flops)
      t += F("FP64 per GPU: %s vector, %s on tensor cores (HPL's DGEMMs run there)\n",
             Flops(run.fp64_flops).c_str(), Flops(run.fp64_tensor_flops).c_str());
    else
      t += F("FP64 per GPU: %s (no faster FP64 tensor path)\n", Flops(run.fp64_flops).c_str());
    const double fp64 = std::max(run.fp64_flops, run.fp64_tensor_flops);
    if (run.bf16_flops > 0 && fp64 > 0)
      t += F("%-11s FP64 is 1/%.0f of the GPU's dense BF16 tensor rate (%s)\n", "",
             run.bf16_flops / fp64, Flops(run.bf16_flops).c_str());
    t += F("%-11s %lld\n", "N", static_cast<long long>(h.n));
    t += F("%-11s %d\n", "NB", h.nb);
    t += F("%-11s %d x %d\n", "P x Q", h.p, h.q);
    t += F("%-11s %.1f GB per GPU (%.0f%% of its memory)\n", "matrix", h.matrix_bytes_per_gpu / 1e9,
           h.memory_fraction * 100);
    if (h.mxp) {
      t += F("%-11s HPL-MxP: LU in %s (%s peak), %s of FP64 refinement\n", "mode",
             PrecisionName(h.lu_precision), Flops(h.lu_peak_flops).c_str(),
             Seconds(h.refinement_s).c_str());
    }
    t += F("%-11s %s\n", "Rmax", Flops(h.rmax_flops).c_str());
    t += F("%-11s %s (FP64)\n", "Rpeak", Flops(h.rpeak_flops).c_str());
    t += F("%-11s %.1f%%%s\n", "efficiency", h.efficiency * 100,
           h.mxp ? " (of the FP64 peak: HPL-MxP's speed-up over it)" : "");
    t += F("%-11s %s (%.3g FLOP = 2/3 N^3 + 3/2 N^2, %d panel steps)\n", "time",
           Seconds(h.time_s).c_str(), h.flops, h.steps);
    t += F("%-11s %s (critical path: DGEMM %s, panel %s, communication %s)\n", "bound",
           h.bound.c_str(), Seconds(h.dgemm_s).c_str(), Seconds(h.panel_s).c_str(),
           Seconds(h.comm_s).c_str());
    t +=
        F("%-11s %.1f%% of peak at the first trailing update\n", "DGEMM", h.dgemm_efficiency * 100);
  }
  if (run.stream) {
    const StreamResult& s = *run.stream;
    t += F("%-24s %s per GPU (%.1f%% of the HBM's %s)\n", "GPU Copy/Scale/Add/Triad",
           Bw(s.gpu_Bps).c_str(), s.fraction * 100, Bw(s.peak_gpu_Bps).c_str());
    t += F("%-24s %s per VM (%d GPUs)\n", "", Bw(s.vm_Bps).c_str(), run.gpus_per_vm);
    t += F("%-24s %s over the cluster\n", "", Bw(s.cluster_Bps).c_str());
    if (s.has_host) {
      t += F("%-24s %s per VM (%.1f%% of %s: %d socket(s) of %s%s)\n", "host Triad",
             Bw(s.host_Bps).c_str(), s.host_fraction * 100, Bw(s.host_peak_Bps).c_str(),
             s.host_sockets, s.host_cpu.c_str(),
             s.host_share < 1 ? F(", %.0f%% share", s.host_share * 100).c_str() : "");
      t += F("%-24s %s over the cluster\n", "", Bw(s.host_cluster_Bps).c_str());
    } else {
      t += F("%-24s not in data/hpc.yaml (%s)\n", "host Triad", s.host_cpu.c_str());
    }
  }
  if (!run.osu.empty()) {
    t += F("%s buffers (osu_latency / osu_bw %s)\n", run.buffer.c_str(),
           run.buffer == "host" ? "H H" : "D D");
    t += F("%-10s %-20s %-10s %-10s %6s %6s %12s %12s %12s\n", "scope", "path", "transport",
           "protocol", "from", "to", "bytes", "latency(us)", "bw(GB/s)");
    for (const OsuPair& p : run.osu) {
      t += F("%-10s %-20s %-10s %-10s %6d %6d %12.0f %12.2f %12.2f\n", p.scope.c_str(),
             p.path.c_str(), p.transport.c_str(), p.protocol.c_str(), p.from, p.to, p.bytes,
             p.time_s * 1e6, p.bandwidth_Bps / 1e9);
    }
  }
  if (run.allreduce) {
    const OsuAllreduce& a = *run.allreduce;
    t += F("%-11s %.0f B over %d GPUs (%s buffers): %.2f us (busbw %.2f GB/s, %s, %zu steps)\n",
           "allreduce", a.bytes, run.gpus, run.buffer.c_str(), a.time_s * 1e6, a.busbw_Bps / 1e9,
           a.algorithm.c_str(), a.steps.size());
    t += F("%-15s %9s %12s %-10s %12s\n", "step", "distance", "bytes", "transport", "time(us)");
    for (const MpiAllreduceStep& st : a.steps)
      t += F("%-15s %9d %12.0f %-10s %12.2f\n", st.phase.c_str(), st.distance, st.bytes,
             st.transport.c_str(), st.time_s * 1e6);
  }
  if (run.hpcg) {
    const HpcgResult& h = *run.hpcg;
    t += F("%-11s %lld x %lld x %lld per GPU\n", "grid", static_cast<long long>(h.grid[0]),
           static_cast<long long>(h.grid[1]), static_cast<long long>(h.grid[2]));
    t += F("%-11s %.1f GFLOP/s (%.1f per GPU, %.2f%% of the FP64 peak)\n", "HPCG", h.gflops,
           h.gflops_per_gpu, h.fraction_of_peak * 100);
    t += F("%-11s %s per CG iteration: memory %s, halo %s, all-reduce %s\n", "time",
           Seconds(h.time_per_iteration_s).c_str(), Seconds(h.memory_s).c_str(),
           Seconds(h.halo_s).c_str(), Seconds(h.allreduce_s).c_str());
    t += F("%-11s %s\n", "bound", h.bound.c_str());
  }
  if (run.halo3d) {
    const Halo3dResult& h = *run.halo3d;
    t += F("7-point FP64 stencil, %lld x %lld x %lld per GPU (weak) / on one GPU (strong)\n",
           static_cast<long long>(h.grid[0]), static_cast<long long>(h.grid[1]),
           static_cast<long long>(h.grid[2]));
    t += F("%6s  %-20s %12s %9s %12s %9s %9s\n", "GPUs", "slowest neighbour", "weak(ms)",
           "weak eff", "strong(ms)", "speed-up", "strong eff");
    for (const Halo3dRow& r : h.rows) {
      t += F("%6d  %-20s %12.3f %8.1f%% %12.3f %9.1f %8.1f%%\n", r.gpus, r.path.c_str(),
             r.weak_time_s * 1e3, r.weak_efficiency * 100, r.strong_time_s * 1e3, r.strong_speedup,
             r.strong_efficiency * 100);
    }
    if (h.strong_stops_at > 0)
      t += F("strong scaling stops at %d GPUs (efficiency below 50%%)\n", h.strong_stops_at);
    else
      t += "strong scaling holds above 50% efficiency to every GPU of the cluster\n";
  }
  for (const std::string& a : run.assumptions) t += "assumes: " + a + "\n";
  return t;
}

}  // namespace ndt
