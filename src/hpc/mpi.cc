#include "hpc/mpi.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace ndt {
namespace {

// What a route crosses, read off the cluster graph.
struct RouteFacts {
  double latency_s = 0;   // the slowest path's link latencies
  double gpu_side_s = 0;  // PCIe / C2C / socket links (GPU <-> NIC hops), first path
  int ib_links = 0;       // InfiniBand links of the first path
  double ib_Bps = std::numeric_limits<double>::infinity();     // slowest IB link / fraction
  double other_Bps = std::numeric_limits<double>::infinity();  // slowest other link / fraction
};

RouteFacts Facts(const Cluster& c, const Route& r) {
  RouteFacts f;
  for (size_t i = 0; i < r.size(); ++i) {
    const Path& path = r[i];
    const double frac = path.fraction > 0 ? path.fraction : 1;
    double lat = 0;
    for (LinkId id : path.links) {
      const Link& l = c.link(id);
      lat += l.latency_s;
      if (l.kind == LinkKind::kIb) {
        f.ib_Bps = std::min(f.ib_Bps, l.bw_Bps / frac);
        if (i == 0) ++f.ib_links;
      } else {
        f.other_Bps = std::min(f.other_Bps, l.bw_Bps / frac);
        if (i == 0 && l.kind != LinkKind::kNvlink) f.gpu_side_s += l.latency_s;
      }
    }
    f.latency_s = std::max(f.latency_s, lat);
  }
  return f;
}

}  // namespace

const char* MpiBufferName(MpiBuffer b) { return b == MpiBuffer::kDevice ? "device" : "host"; }

StatusOr<MpiBuffer> ParseMpiBuffer(const std::string& s) {
  std::string l;
  for (char ch : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (l == "device" || l == "d" || l == "gpu") return MpiBuffer::kDevice;
  if (l == "host" || l == "h" || l == "cpu") return MpiBuffer::kHost;
  return Status::InvalidInput("--buffer '" + s + "' is unknown; use device or host");
}

MpiModel::MpiModel(const Cluster& cluster, const MpiParams& params, const FabricParams& fabric,
                   const ArchCalibration& gpu_cal, MpiBuffer buffer)
    : c_(cluster), p_(params), f_(fabric), cal_(gpu_cal), buffer_(buffer) {}

int MpiModel::NicSharers(int a) const {
  const GpuInfo& g = c_.gpu(a);
  if (g.nic < 0) return 1;
  int n = 0;
  const int first = g.vm * c_.gpus_per_vm();
  for (int r = first; r < first + c_.gpus_per_vm(); ++r)
    if (c_.gpu(r).nic == g.nic) ++n;
  return std::max(n, 1);
}

P2pTime MpiModel::PointToPoint(int a, int b, double bytes, int nic_share) const {
  P2pTime t;
  const bool device = buffer_ == MpiBuffer::kDevice;
  const bool same_vm = c_.gpu(a).vm == c_.gpu(b).vm;
  const bool same_domain = c_.gpu(a).domain == c_.gpu(b).domain;
  if (!device && same_vm) {
    t.transport = "shm";
    t.protocol = "shm";
    t.latency_s = p_.software_s + p_.shm_latency_s;
    t.bandwidth_Bps = p_.shm_Bps;
  } else if (device && same_domain) {
    const RouteFacts f = Facts(c_, c_.GpuRoute(a, b));
    t.transport = "cuda-ipc";
    t.protocol = "ipc";
    t.latency_s = p_.software_s + p_.cuda_ipc_latency_s + f.latency_s;
    t.bandwidth_Bps = std::min(f.ib_Bps, f.other_Bps);
  } else {
    const RouteFacts f = Facts(c_, c_.NetRoute(a, b));
    const double payload = p_.ib_mtu_bytes / (p_.ib_mtu_bytes + p_.ib_packet_overhead_bytes);
    const int switches = std::max(f.ib_links - 1, 0);
    const double wire_s =
        p_.adapter_latency_s + f.ib_links * p_.cable_latency_s + switches * f_.switch_latency_s;
    // A route without InfiniBand links (no IB on the size): its slowest link carries the data.
    double bw = (f.ib_links > 0 ? f.ib_Bps * payload : f.other_Bps) / std::max(nic_share, 1);
    double lat = p_.software_s + wire_s;
    const bool gdr = c_.sku().infiniband && c_.sku().infiniband->gpudirect_rdma;
    if (!device) {
      t.transport = "ib-host";
    } else if (gdr) {
      t.transport = "ib-gdr";
      lat += p_.gpu_buffer_overhead_s + f.gpu_side_s;
      bw = std::min(bw, f.other_Bps);
    } else {
      t.transport = "ib-staged";
      lat += 2 * p_.cuda_copy_latency_s;
      bw = std::min(bw, f.other_Bps);
    }
    t.protocol = "eager";
    if (bytes > p_.rndv_threshold_bytes) {
      t.protocol = "rendezvous";
      lat += p_.software_s + 2 * wire_s;
    }
    t.latency_s = lat;
    t.bandwidth_Bps = bw;
    // Eager payloads are copied into a registered bounce buffer on send and out of one on
    // receive (UCX bcopy; gdrcopy for device buffers), each at the single-core copy rate.
    if (t.protocol == "eager" && bytes > 0) t.copy_s = 2 * bytes / p_.shm_Bps;
  }
  t.time_s = t.latency_s + t.copy_s + (bytes > 0 ? bytes / t.bandwidth_Bps : 0);
  return t;
}

double MpiModel::WindowBandwidth(int a, int b, double bytes) const {
  const P2pTime t = PointToPoint(a, b, bytes);
  const double w = p_.osu_window;
  // The sender issues a message every software (+ its half of the bounce copies) seconds, the
  // wire drains one every bytes / bw.
  const double per_msg = std::max(bytes / t.bandwidth_Bps, p_.software_s + t.copy_s / 2);
  return w * bytes / (t.time_s + (w - 1) * per_msg);
}

double MpiModel::ReduceTime(double bytes) const {
  if (bytes <= 0) return 0;
  if (buffer_ == MpiBuffer::kHost) return 3 * bytes / p_.shm_Bps;
  return cal_.kernel_overhead_s + 3 * bytes / (c_.gpu_spec().memory_Bps * cal_.hbm_fraction);
}

namespace {

// The pair of ranks (r, r XOR mask, both < ranks) whose path is the slowest class a step at
// distance `mask` uses: across NVLink domains, else across VMs, else inside a VM.
std::pair<int, int> WorstPair(const Cluster& c, int ranks, int mask) {
  std::pair<int, int> best{0, mask};
  int best_class = -1;
  for (int r = 0; r < ranks; ++r) {
    const int s = r ^ mask;
    if (s >= ranks) continue;
    const int cls = c.gpu(r).domain != c.gpu(s).domain ? 2 : (c.gpu(r).vm != c.gpu(s).vm ? 1 : 0);
    if (cls > best_class) {
      best_class = cls;
      best = {r, s};
      if (cls == 2) break;
    }
  }
  return best;
}

}  // namespace

StatusOr<MpiAllreduce> TimeMpiAllreduce(const MpiModel& m, int ranks, double bytes) {
  if (ranks < 2) return Status::InvalidInput("osu-allreduce needs at least 2 GPUs; use more VMs");
  // The model's cluster is reached through the steps' pairs; ranks <= its GPUs.
  MpiAllreduce out;
  out.bytes = bytes;
  out.ranks = ranks;
  int pof2 = 1;
  while (pof2 * 2 <= ranks) pof2 *= 2;
  const bool short_msg = bytes <= m.params().allreduce_short_bytes;
  out.algorithm = short_msg ? "recursive-doubling" : "rabenseifner";
  const Cluster& c = m.cluster();
  auto step = [&](const char* phase, int a, int b, int distance, double sz, bool reduce) {
    const int share = c.gpu(a).vm != c.gpu(b).vm ? m.NicSharers(a) : 1;
    const P2pTime t = m.PointToPoint(a, b, sz, share);
    MpiAllreduceStep s;
    s.phase = phase;
    s.distance = distance;
    s.bytes = sz;
    s.transport = t.transport;
    s.time_s = t.time_s + (reduce ? m.ReduceTime(sz) : 0);
    out.time_s += s.time_s;
    out.steps.push_back(s);
  };
  if (ranks > pof2) step("fold", pof2, 0, pof2, bytes, true);
  if (short_msg) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const auto [a, b] = WorstPair(c, pof2, mask);
      step("exchange", a, b, mask, bytes, true);
    }
  } else {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const auto [a, b] = WorstPair(c, pof2, mask);
      step("reduce-scatter", a, b, mask, bytes / (2.0 * mask), true);
    }
    for (int mask = pof2 / 2; mask >= 1; mask >>= 1) {
      const auto [a, b] = WorstPair(c, pof2, mask);
      step("all-gather", a, b, mask, bytes / (2.0 * mask), false);
    }
  }
  if (ranks > pof2) step("unfold", 0, pof2, pof2, bytes, false);
  out.busbw_Bps = out.time_s > 0 ? bytes / out.time_s * 2.0 * (ranks - 1) / ranks : 0;
  return out;
}

}  // namespace ndt
