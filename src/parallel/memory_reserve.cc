// File: parallel/memory_reserve.cc
// The reserve of a training process on a GPU; see memory_reserve.h and data/memory_reserve.yaml.
#include "parallel/memory_reserve.h"

#include <algorithm>
#include <utility>

#include "core/yaml.h"
#include "parallel/memory.h"

namespace ndt {
namespace {

StatusOr<double> Bytes(const YamlMap& m, const char* key) {
  NDT_ASSIGN_OR_RETURN(Sourced q, m.Quantity(key, Dim::kBytes));
  if (q.source.empty()) return m.Error(key, "needs its source");
  if (!(q.value >= 0)) return m.Error(key, "must be >= 0 bytes");
  return q.value;
}

StatusOr<MemoryReserveTable> Parse(const YamlMap& top) {
  NDT_ASSIGN_OR_RETURN(YamlMap nccl, top.Map("nccl"));
  double channel_bytes = 0;
  for (const char* key : {"simple_buffer", "ll_buffer", "ll128_buffer"}) {
    NDT_ASSIGN_OR_RETURN(double b, Bytes(nccl, key));
    channel_bytes += b;
  }
  NDT_RETURN_IF_ERROR(nccl.Finish());
  NDT_ASSIGN_OR_RETURN(Sourced frag, top.Count("allocator_fragmentation"));
  if (!(frag.value >= 0 && frag.value < 1)) {
    return top.Error("allocator_fragmentation", "must be a fraction in [0, 1) (0.05 = 5%)");
  }
  if (frag.source.empty()) return top.Error("allocator_fragmentation", "needs its source");
  MemoryReserveTable t;
  NDT_ASSIGN_OR_RETURN(std::vector<YamlMap> archs, top.MapList("archs"));
  if (archs.empty()) return top.Error("archs", "needs at least one entry");
  for (const YamlMap& a : archs) {
    MemoryReserve r;
    NDT_ASSIGN_OR_RETURN(r.arch, a.String("arch"));
    if (r.arch.empty()) return a.Error("arch", "must not be empty");
    for (const MemoryReserve& seen : t.archs) {
      if (seen.arch == r.arch) return a.Error("arch", "'" + r.arch + "' is listed twice");
    }
    NDT_ASSIGN_OR_RETURN(r.cuda_context_bytes, Bytes(a, "cuda_context"));
    NDT_ASSIGN_OR_RETURN(r.cublas_workspace_bytes, Bytes(a, "cublas_workspace"));
    NDT_ASSIGN_OR_RETURN(Sourced ch, a.Count("nccl_channels"));
    if (!(ch.value >= 1 && ch.value <= 64 && ch.value == static_cast<int>(ch.value))) {
      return a.Error("nccl_channels", "must be a whole number of channels in 1..64");
    }
    if (ch.source.empty()) return a.Error("nccl_channels", "needs its source");
    r.nccl_channels = static_cast<int>(ch.value);
    r.nccl_channel_bytes = channel_bytes;
    r.allocator_fragmentation = frag.value;
    NDT_RETURN_IF_ERROR(a.Finish());
    t.archs.push_back(std::move(r));
  }
  NDT_RETURN_IF_ERROR(top.Finish());
  return t;
}

}  // namespace

StatusOr<MemoryReserve> MemoryReserveTable::For(const std::string& arch) const {
  for (const MemoryReserve& r : archs) {
    if (r.arch == arch) return r;
  }
  return Status::InvalidInput("data/memory_reserve.yaml has no entry for GPU architecture '" +
                              arch +
                              "'; add one under archs: with its cuda_context, cublas_workspace "
                              "and nccl_channels (each with a source)");
}

StatusOr<MemoryReserveTable> ParseMemoryReserve(const std::string& text, const std::string& name) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapString(text, name));
  return Parse(m);
}

StatusOr<MemoryReserveTable> LoadMemoryReserve(const std::string& data_dir) {
  NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(data_dir + "/memory_reserve.yaml"));
  return Parse(m);
}

int NcclCommunicators(const Strategy& s) {
  const int64_t world = static_cast<int64_t>(s.tp) * s.pp * s.cp * s.dp;
  std::vector<int64_t> sizes;  // sizes of the counted groups
  auto add = [&](bool on, int64_t size) {
    if (on && size > 1) sizes.push_back(size);
  };
  add(true, s.tp);
  add(true, s.cp);
  add(true, static_cast<int64_t>(s.dp) * s.cp);
  add(s.cp > 1, s.dp);
  add(true, s.pp);
  add(true, s.ep);
  add(s.ep > 1, static_cast<int64_t>(s.dp) * s.cp / std::max(1, s.ep));
  add(s.tp > 1 && s.pp > 1, static_cast<int64_t>(s.tp) * s.pp);
  // A group spanning every rank is the world's rank set: the default group is not a second one.
  const bool world_counted = std::find(sizes.begin(), sizes.end(), world) != sizes.end();
  add(!world_counted, world);
  return static_cast<int>(sizes.size());
}

ReserveBreakdown ReserveOf(const MemoryReserve& r, double capacity_bytes,
                           const TransformerSpec& model, const Strategy& s) {
  ReserveBreakdown b;
  b.cuda_context_bytes = r.cuda_context_bytes;
  b.cublas_workspace_bytes = r.cublas_workspace_bytes;
  b.nccl_communicators = NcclCommunicators(s);
  b.nccl_buffers_bytes = b.nccl_communicators * r.nccl_channels * r.nccl_channel_bytes;
  b.userbuffers_bytes = UserbufferBytes(model, s);
  // The caching allocator's pool: what CUDA can allocate less what is allocated outside it.
  const double pool =
      capacity_bytes - b.cuda_context_bytes - b.nccl_buffers_bytes - b.userbuffers_bytes;
  b.allocator_fragmentation_bytes = r.allocator_fragmentation * std::max(0.0, pool);
  return b;
}

double UsableBytes(const MemoryReserve& r, double capacity_bytes, const TransformerSpec& model,
                   const Strategy& s) {
  return ReserveOf(r, capacity_bytes, model, s).usable_bytes(capacity_bytes);
}

}  // namespace ndt
