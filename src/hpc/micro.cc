#include "hpc/micro.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace ndt {
namespace {

// The link kind a route between two GPUs takes: inside the NVLink domain or over the fabric.
std::string PathName(const Cluster& c, int a, int b, MpiBuffer buffer) {
  const SkuSpec& sku = c.sku();
  const bool same_vm = c.gpu(a).vm == c.gpu(b).vm;
  if (buffer == MpiBuffer::kHost && same_vm) return "shared memory";
  if (c.gpu(a).domain == c.gpu(b).domain && (buffer == MpiBuffer::kDevice || same_vm)) {
    if (sku.fabric == IntraVmFabric::kPcie) return "PCIe";
    return same_vm ? "NVLink" : "NVLink (NVL72 rack)";
  }
  return sku.infiniband ? "InfiniBand" : "Ethernet";
}

// OSU's message sizes: powers of two from `from` to 4 MiB, plus `extra`, ascending, unique.
std::vector<double> OsuSizes(double from, double extra) {
  std::vector<double> s;
  for (double b = from; b <= 4194304; b *= 2) s.push_back(b);
  s.push_back(extra);
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

// "39G", "512M": the largest whole number of GiB, MiB, KiB or bytes not above `bytes`, as --bytes
// takes it.
std::string SizeFloor(double bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (u < 4 && bytes >= 1024.0) {
    bytes /= 1024.0;
    ++u;
  }
  return std::to_string(static_cast<int64_t>(std::floor(bytes))) + units[u];
}

// Each OSU rank allocates a send and a receive buffer of the message size (osu_latency and
// osu_bw: s_buf and r_buf; osu_allreduce: sendbuf and recvbuf), in its GPU's memory (device
// buffers) or in its VM's memory, shared with the other ranks there (host buffers). A message
// whose buffers cannot be allocated is refused: before, osu-bw --bytes 1T on an 80 GB GPU
// printed a bandwidth.
Status CheckOsuBuffers(const MpiModel& mpi, double bytes, int ranks_per_vm) {
  const Cluster& c = mpi.cluster();
  const bool device = mpi.buffer() == MpiBuffer::kDevice;
  const double capacity = device ? c.gpu_spec().memory_bytes : c.sku().memory_bytes;
  const int sharers = device ? 1 : ranks_per_vm;
  if (capacity <= 0 || 2.0 * bytes * sharers <= capacity) return Status::Ok();
  const std::string where = device ? "per GPU, more than " + c.gpu_spec().name + "'s"
                                   : "of " + c.sku().name + "'s memory (" +
                                         std::to_string(sharers) + " ranks per VM), more than its";
  const auto gb = [](double b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, b >= 1e12 ? "%.0f GB" : "%.4g GB", b / 1e9);
    return std::string(buf);
  };
  const std::string need = gb(2.0 * bytes * sharers), have = gb(capacity);
  return Status::InvalidInput(
      "--bytes " + SizeFloor(bytes) + ": the send and receive buffers take " + need + " " + where +
      " " + have + "; use --bytes " + SizeFloor(capacity / (2.0 * sharers)) + " or less");
}

}  // namespace

StreamResult RunStream(const Cluster& cluster, const ComputeCalibration& compute,
                       const HostMemoryParams& host) {
  const GpuSpec& gpu = cluster.gpu_spec();
  const ArchCalibration& cal = compute.For(gpu.arch);
  StreamResult s;
  s.peak_gpu_Bps = gpu.memory_Bps;
  s.fraction = cal.hbm_fraction;
  s.gpu_Bps = gpu.memory_Bps * cal.hbm_fraction;
  s.vm_Bps = s.gpu_Bps * cluster.gpus_per_vm();
  s.cluster_Bps = s.gpu_Bps * cluster.num_gpus();
  const SkuSpec& sku = cluster.sku();
  s.host_cpu = sku.cpu;
  if (const HostMemorySize* h = host.Find(sku.name)) {
    s.has_host = true;
    s.host_sockets = std::max(sku.cpu_sockets, 1);
    s.host_share = h->share;
    s.host_peak_Bps = s.host_sockets * h->peak_per_socket_Bps * h->share;
    s.host_fraction = host.stream_fraction;
    s.host_Bps = s.host_peak_Bps * host.stream_fraction;
    s.host_cluster_Bps = s.host_Bps * cluster.num_vms();
    s.host_source = h->source;
  }
  return s;
}

StatusOr<std::vector<OsuPair>> RunOsuPairs(const MpiModel& mpi, double bytes) {
  const Cluster& cluster = mpi.cluster();
  std::vector<std::pair<std::string, std::pair<int, int>>> pairs;
  if (cluster.gpus_per_vm() >= 2) pairs.push_back({"intra-vm", {0, 1}});
  if (cluster.num_vms() >= 2) pairs.push_back({"inter-vm", {0, cluster.gpus_per_vm()}});
  // A rack-scale NVLink domain (NVL72): also a pair in two racks, over InfiniBand.
  const int domain = cluster.nvlink_domain_gpus();
  if (domain > cluster.gpus_per_vm() && cluster.num_gpus() > domain)
    pairs.push_back({"inter-rack", {0, domain}});
  if (pairs.empty())
    return Status::InvalidInput(
        "OSU point-to-point needs 2 GPUs; use --vms 2 or a size with "
        "several GPUs");
  // Two ranks share a VM where the intra-VM pair runs.
  NDT_RETURN_IF_ERROR(CheckOsuBuffers(mpi, bytes, std::min(cluster.gpus_per_vm(), 2)));
  std::vector<OsuPair> out;
  for (const auto& [scope, ab] : pairs) {
    const auto [a, b] = ab;
    const P2pTime t = mpi.PointToPoint(a, b, bytes);
    OsuPair p;
    p.scope = scope;
    p.path = PathName(cluster, a, b, mpi.buffer());
    p.transport = t.transport;
    p.protocol = t.protocol;
    p.from = a;
    p.to = b;
    p.bytes = bytes;
    p.time_s = t.time_s;
    p.bandwidth_Bps = mpi.WindowBandwidth(a, b, bytes);
    for (double s : OsuSizes(1, bytes)) {
      p.curve.push_back({s, mpi.PointToPoint(a, b, s).time_s, mpi.WindowBandwidth(a, b, s)});
    }
    out.push_back(p);
  }
  return out;
}

StatusOr<OsuAllreduce> RunOsuAllreduce(const MpiModel& mpi, double bytes) {
  const int ranks = mpi.cluster().num_gpus();
  NDT_ASSIGN_OR_RETURN(MpiAllreduce r, TimeMpiAllreduce(mpi, ranks, bytes));
  NDT_RETURN_IF_ERROR(CheckOsuBuffers(mpi, bytes, mpi.cluster().gpus_per_vm()));
  OsuAllreduce a;
  a.bytes = bytes;
  a.time_s = r.time_s;
  a.busbw_Bps = r.busbw_Bps;
  a.algorithm = r.algorithm;
  a.steps = r.steps;
  for (double s : OsuSizes(4, bytes)) {
    NDT_ASSIGN_OR_RETURN(MpiAllreduce x, TimeMpiAllreduce(mpi, ranks, s));
    a.curve.push_back({s, x.time_s, x.busbw_Bps});
  }
  return a;
}

}  // namespace ndt
