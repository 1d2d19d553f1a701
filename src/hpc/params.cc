#include "hpc/params.h"

#include <cmath>

#include "core/units.h"
#include "core/yaml.h"

namespace ndt {
namespace {

StatusOr<double> CountIn(const YamlMap& m, const char* key, double lo, double hi) {
  NDT_ASSIGN_OR_RETURN(Sourced s, m.Count(key));
  if (!(s.value >= lo && s.value <= hi))
    return m.Error(key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi));
  return s.value;
}

StatusOr<double> TimeIn(const YamlMap& m, const char* key, double lo, double hi) {
  NDT_ASSIGN_OR_RETURN(Sourced s, m.Quantity(key, Dim::kTime));
  if (!(s.value >= lo && s.value <= hi))
    return m.Error(key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + " s");
  return s.value;
}

StatusOr<double> BytesIn(const YamlMap& m, const char* key, double lo, double hi) {
  NDT_ASSIGN_OR_RETURN(Sourced s, m.Quantity(key, Dim::kBytes));
  if (!(s.value >= lo && s.value <= hi))
    return m.Error(key, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + " B");
  return s.value;
}

StatusOr<HpcParams> Parse(const YamlMap& top) {
  HpcParams p;
  p.file = top.file();
  NDT_ASSIGN_OR_RETURN(YamlMap h, top.Map("hpl"));
  NDT_ASSIGN_OR_RETURN(p.hpl.memory_fraction, CountIn(h, "memory_fraction", 0.01, 1));
  NDT_ASSIGN_OR_RETURN(p.hpl.max_memory_fraction, CountIn(h, "max_memory_fraction", 0.01, 1));
  if (p.hpl.memory_fraction > p.hpl.max_memory_fraction)
    return h.Error("memory_fraction", "must not exceed max_memory_fraction");
  NDT_ASSIGN_OR_RETURN(double nb, CountIn(h, "nb", 1, 65536));
  p.hpl.nb = static_cast<int>(nb);
  NDT_ASSIGN_OR_RETURN(p.hpl.panel_kernels_per_column,
                       CountIn(h, "panel_kernels_per_column", 0, 100));
  NDT_ASSIGN_OR_RETURN(std::string prec, h.String("mxp_lu_precision"));
  if (!ParsePrecision(prec, &p.hpl.mxp_lu_precision))
    return h.Error("mxp_lu_precision", "unknown precision '" + prec + "' (e.g. fp16, bf16)");
  NDT_ASSIGN_OR_RETURN(p.hpl.mxp_matrix_bytes, CountIn(h, "mxp_matrix_bytes", 0.5, 8));
  NDT_ASSIGN_OR_RETURN(p.hpl.mxp_panel_bytes, CountIn(h, "mxp_panel_bytes", 0.5, 8));
  NDT_ASSIGN_OR_RETURN(double it, CountIn(h, "mxp_refinement_iterations", 0, 1000));
  p.hpl.mxp_refinement_iterations = static_cast<int>(it);
  NDT_RETURN_IF_ERROR(h.Finish());
  NDT_ASSIGN_OR_RETURN(YamlMap st, top.Map("stencil"));
  NDT_ASSIGN_OR_RETURN(YamlMap hg, st.Map("hpcg_grid"));
  NDT_ASSIGN_OR_RETURN(p.stencil.hpcg_grid, hg.String("value"));
  NDT_ASSIGN_OR_RETURN(std::string hg_src, hg.String("source"));
  NDT_RETURN_IF_ERROR(hg.Finish());
  NDT_ASSIGN_OR_RETURN(YamlMap h3, st.Map("halo3d_grid"));
  NDT_ASSIGN_OR_RETURN(p.stencil.halo3d_grid, h3.String("value"));
  NDT_ASSIGN_OR_RETURN(std::string h3_src, h3.String("source"));
  NDT_RETURN_IF_ERROR(h3.Finish());
  NDT_RETURN_IF_ERROR(st.Finish());
  NDT_ASSIGN_OR_RETURN(YamlMap o, top.Map("osu"));
  NDT_ASSIGN_OR_RETURN(p.osu.latency_bytes, CountIn(o, "latency_bytes", 1, 1e12));
  NDT_ASSIGN_OR_RETURN(p.osu.bw_bytes, CountIn(o, "bw_bytes", 1, 1e12));
  NDT_ASSIGN_OR_RETURN(p.osu.allreduce_bytes, CountIn(o, "allreduce_bytes", 1, 1e12));
  NDT_RETURN_IF_ERROR(o.Finish());
  NDT_ASSIGN_OR_RETURN(YamlMap mp, top.Map("mpi"));
  MpiParams& m = p.mpi;
  NDT_ASSIGN_OR_RETURN(m.software_s, TimeIn(mp, "software", 0, 1e-3));
  NDT_ASSIGN_OR_RETURN(m.adapter_latency_s, TimeIn(mp, "adapter_latency", 0, 1e-3));
  NDT_ASSIGN_OR_RETURN(m.cable_latency_s, TimeIn(mp, "cable_latency", 0, 1e-3));
  NDT_ASSIGN_OR_RETURN(m.ib_mtu_bytes, BytesIn(mp, "ib_mtu", 256, 1 << 20));
  NDT_ASSIGN_OR_RETURN(m.ib_packet_overhead_bytes, BytesIn(mp, "ib_packet_overhead", 0, 4096));
  NDT_ASSIGN_OR_RETURN(m.rndv_threshold_bytes, BytesIn(mp, "rndv_threshold", 0, 1e12));
  NDT_ASSIGN_OR_RETURN(m.gpu_buffer_overhead_s, TimeIn(mp, "gpu_buffer_overhead", 0, 1e-3));
  NDT_ASSIGN_OR_RETURN(m.cuda_copy_latency_s, TimeIn(mp, "cuda_copy_latency", 0, 1e-3));
  NDT_ASSIGN_OR_RETURN(m.cuda_ipc_latency_s, TimeIn(mp, "cuda_ipc_latency", 0, 1e-3));
  NDT_ASSIGN_OR_RETURN(m.shm_latency_s, TimeIn(mp, "shm_latency", 0, 1e-3));
  NDT_ASSIGN_OR_RETURN(Sourced shm, mp.Quantity("shm_bandwidth", Dim::kBandwidth));
  if (!(shm.value > 0)) return mp.Error("shm_bandwidth", "must be above 0");
  m.shm_Bps = shm.value;
  NDT_ASSIGN_OR_RETURN(double w, CountIn(mp, "osu_window", 1, 1e6));
  m.osu_window = static_cast<int>(w);
  NDT_ASSIGN_OR_RETURN(m.allreduce_short_bytes, BytesIn(mp, "allreduce_short", 0, 1e12));
  NDT_RETURN_IF_ERROR(mp.Finish());
  NDT_ASSIGN_OR_RETURN(YamlMap hm, top.Map("host_memory"));
  NDT_ASSIGN_OR_RETURN(p.host_memory.stream_fraction, CountIn(hm, "stream_fraction", 0.01, 1));
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> sizes, hm.MapList("sizes"));
  for (const YamlMap& e : sizes) {
    HostMemorySize h;
    NDT_ASSIGN_OR_RETURN(h.size, e.String("size"));
    NDT_ASSIGN_OR_RETURN(Sourced peak, e.Quantity("peak_per_socket", Dim::kBandwidth));
    if (!(peak.value > 0)) return e.Error("peak_per_socket", "must be above 0");
    h.peak_per_socket_Bps = peak.value;
    h.source = peak.source;
    NDT_ASSIGN_OR_RETURN(std::optional<Sourced> share, e.OptionalCount("share"));
    if (share) {
      if (!(share->value > 0 && share->value <= 1)) return e.Error("share", "must be in (0, 1]");
      h.share = share->value;
    }
    NDT_RETURN_IF_ERROR(e.Finish());
    if (p.host_memory.Find(h.size)) return e.Error("size", "'" + h.size + "' is listed twice");
    p.host_memory.sizes.push_back(h);
  }
  NDT_RETURN_IF_ERROR(hm.Finish());
  NDT_RETURN_IF_ERROR(top.Finish());
  return p;
}

}  // namespace

const HostMemorySize* HostMemoryParams::Find(const std::string& size) const {
  for (const HostMemorySize& h : sizes)
    if (h.size == size) return &h;
  return nullptr;
}

StatusOr<HpcParams> ParseHpcParams(const std::string& text, const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapString(text, name));
  return Parse(m);
}

StatusOr<HpcParams> LoadHpcParams(const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(data_dir + "/hpc.yaml"));
  return Parse(m);
}

}  // namespace ndt
