// File: topo/route.cc
// Routes between GPUs from the builder's tables, without searching the graph (O(hops)).
// NCCL's preference order (topology.md §8): NVLink before PCIe before the network. Inside an
// NVLink domain: NVSwitch = one path per switch chip carrying lanes-to-that-chip / all lanes;
// cube-mesh = the direct NVLink, else PCIe through the host (and the socket link), as NCCL
// does for unconnected pairs; PCIe-only = through the shared PCIe switch or the host.
// Between domains: GPU -> own NIC -> leaf [-> spine [-> core -> spine]] -> leaf -> NIC -> GPU;
// the uplink is a hash of (a, b) or, with ecmp_spread, every uplink in equal fractions.
#include <cstdint>

#include "core/check.h"
#include "topo/cluster.h"

namespace ndt {
namespace {

// splitmix64: a fixed, well-mixed hash so the chosen uplink is deterministic per GPU pair.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

void Cluster::AppendHost(int a, int b, std::vector<LinkId>* out) const {
  if (pcie_sw_[a] >= 0 && pcie_sw_[a] == pcie_sw_[b]) {
    out->push_back(to_host_[a].l[0]);
    out->push_back(to_host_[b].l[0] ^ 1);
    return;
  }
  const Hops& ha = to_host_[a];
  const Hops& hb = to_host_[b];
  for (int i = 0; i < ha.n; ++i) out->push_back(ha.l[i]);
  if (host_cpu_idx_[a] != host_cpu_idx_[b]) {
    const size_t c = cpus_per_vm_;
    LinkId l = cpu_cpu_[(gpus_[a].vm * c + host_cpu_idx_[a]) * c + host_cpu_idx_[b]];
    NDT_CHECK(l >= 0, "no socket link between the GPUs' CPUs");
    out->push_back(l);
  }
  for (int i = hb.n - 1; i >= 0; --i) out->push_back(hb.l[i] ^ 1);
}

void Cluster::AppendFabric(int na, int nb, int u, int k, std::vector<LinkId>* out) const {
  if (na == nb) return;  // two GPUs sharing one HCA: loopback inside the NIC
  const int la = nic_leaf_[na];
  const int lb = nic_leaf_[nb];
  const size_t un = layout_.leaf_up_ports;
  const size_t kn = layout_.cores_per_plane;
  out->push_back(nic_up_[na]);
  if (la != lb) {
    const int pa = leaf_pod_[la];
    const int pb = leaf_pod_[lb];
    out->push_back(leaf_up_[la * un + u]);
    if (pa != pb) {
      out->push_back(spine_up_[(pa * un + u) * kn + k]);
      out->push_back(spine_up_[(pb * un + u) * kn + k] ^ 1);
    }
    out->push_back(leaf_up_[lb * un + u] ^ 1);
  }
  out->push_back(nic_up_[nb] ^ 1);
}

Route Cluster::GpuRoute(int a, int b) const {
  NDT_CHECK(a >= 0 && b >= 0 && a < num_gpus() && b < num_gpus() && a != b,
            "GpuRoute needs two distinct GPU ranks");
  const GpuInfo& ga = gpus_[a];
  const GpuInfo& gb = gpus_[b];
  if (ga.domain != gb.domain) return NetRoute(a, b);
  Route r;
  switch (intra_) {
    case Intra::kSwitch:
      r.reserve(nvsw_);
      for (int s = 0; s < nvsw_; ++s) {
        LinkId up = nvsw_up_[static_cast<size_t>(a) * nvsw_ + s];
        LinkId down = nvsw_up_[static_cast<size_t>(b) * nvsw_ + s] ^ 1;
        r.push_back(Path{{up, down}, nvsw_frac_[s]});
      }
      return r;
    case Intra::kMesh: {
      const size_t n = mesh_n_;
      LinkId l = mesh_[(ga.vm * n + ga.local) * n + gb.local];
      if (l >= 0) return Route{Path{{l}, 1.0}};
      break;
    }
    case Intra::kPcie:
      break;
  }
  Path p;
  AppendHost(a, b, &p.links);
  r.push_back(std::move(p));
  return r;
}

Route Cluster::NetRoute(int a, int b) const {
  NDT_CHECK(a >= 0 && b >= 0 && a < num_gpus() && b < num_gpus() && a != b,
            "NetRoute needs two distinct GPU ranks");
  const int na = nic_of_[a];
  const int nb = nic_of_[b];
  if (na < 0 || nb < 0) return Route{};  // no scale-out network on this size
  const int la = nic_leaf_[na];
  const int lb = nic_leaf_[nb];
  const bool cross_leaf = na != nb && la != lb;
  const bool cross_pod = cross_leaf && leaf_pod_[la] != leaf_pod_[lb];
  const int u_n = cross_leaf ? layout_.leaf_up_ports : 1;
  const int k_n = cross_pod ? layout_.cores_per_plane : 1;
  auto make = [&](int u, int k, double fraction) {
    Path p;
    p.fraction = fraction;
    const Hops& ha = to_nic_[a];
    const Hops& hb = to_nic_[b];
    p.links.reserve(ha.n + hb.n + 6);
    for (int i = 0; i < ha.n; ++i) p.links.push_back(ha.l[i]);
    AppendFabric(na, nb, u, k, &p.links);
    for (int i = hb.n - 1; i >= 0; --i) p.links.push_back(hb.l[i] ^ 1);
    return p;
  };
  Route r;
  if (spec_.fabric.ecmp_spread) {
    const double f = 1.0 / (static_cast<double>(u_n) * k_n);
    r.reserve(static_cast<size_t>(u_n) * k_n);
    for (int u = 0; u < u_n; ++u) {
      for (int k = 0; k < k_n; ++k) r.push_back(make(u, k, f));
    }
    return r;
  }
  uint64_t h = Mix((static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b));
  r.push_back(make(static_cast<int>(h % u_n), static_cast<int>((h >> 32) % k_n), 1.0));
  return r;
}

}  // namespace ndt
