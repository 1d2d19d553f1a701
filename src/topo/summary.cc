// File: topo/summary.cc
// Summaries of a Cluster computed from the graph itself (links out of a node), so they check
// the builder rather than repeat its inputs.
#include "topo/summary.h"

#include <algorithm>
#include <cstdio>

namespace ndt {

double GpuNvlinkBps(const Cluster& c, int rank) {
  double sum = 0;
  for (LinkId l : c.out_links(c.gpu(rank).node)) {
    if (c.link(l).kind == LinkKind::kNvlink) sum += c.link(l).bw_Bps;
  }
  return sum;
}

double GpuScaleoutBps(const Cluster& c, int rank) {
  const GpuInfo& g = c.gpu(rank);
  if (g.nic < 0) return 0;
  double port = 0;
  for (LinkId l : c.out_links(g.nic)) {
    if (c.link(l).kind == LinkKind::kIb) port = std::max(port, c.link(l).bw_Bps);
  }
  int sharing = 0;
  const int first = g.vm * c.gpus_per_vm();
  for (int i = 0; i < c.gpus_per_vm(); ++i) sharing += c.gpu(first + i).nic == g.nic ? 1 : 0;
  return port / sharing;
}

double BisectionBps(const Cluster& c) { return c.fabric_layout().bisection_Bps; }

std::vector<std::pair<NodeKind, int>> NodeCounts(const Cluster& c) {
  std::vector<int> n(static_cast<int>(NodeKind::kCore) + 1, 0);
  for (const Node& x : c.nodes()) ++n[static_cast<int>(x.kind)];
  std::vector<std::pair<NodeKind, int>> out;
  for (size_t k = 0; k < n.size(); ++k) {
    if (n[k] > 0) out.emplace_back(static_cast<NodeKind>(k), n[k]);
  }
  return out;
}

std::vector<std::pair<LinkKind, int>> LinkCounts(const Cluster& c) {
  std::vector<int> n(static_cast<int>(LinkKind::kIb) + 1, 0);
  for (size_t i = 0; i < c.links().size(); i += 2) ++n[static_cast<int>(c.links()[i].kind)];
  std::vector<std::pair<LinkKind, int>> out;
  for (size_t k = 0; k < n.size(); ++k) {
    if (n[k] > 0) out.emplace_back(static_cast<LinkKind>(k), n[k]);
  }
  return out;
}

int DuplexLinks(const Cluster& c) { return static_cast<int>(c.links().size() / 2); }

double PathBottleneckBps(const Cluster& c, const Path& p) {
  double bw = 0;
  for (size_t i = 0; i < p.links.size(); ++i) {
    double b = c.link(p.links[i]).bw_Bps;
    bw = i == 0 ? b : std::min(bw, b);
  }
  return bw;
}

double PathLatency(const Cluster& c, const Path& p) {
  double s = 0;
  for (LinkId l : p.links) s += c.link(l).latency_s;
  return s;
}

std::string FormatGBps(double bps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", bps / 1e9);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string FormatRoute(const Cluster& c, const Route& r) {
  std::string out;
  char buf[160];
  for (size_t i = 0; i < r.size(); ++i) {
    const Path& p = r[i];
    std::snprintf(buf, sizeof buf,
                  "path %zu of %zu (%.4g%%): %zu hops, bottleneck %s GB/s, latency %.3g us\n",
                  i + 1, r.size(), p.fraction * 100, p.links.size(),
                  FormatGBps(PathBottleneckBps(c, p)).c_str(), PathLatency(c, p) * 1e6);
    out += buf;
    for (LinkId l : p.links) {
      const Link& k = c.link(l);
      out += "  " + c.node(k.src).name + " -> " + c.node(k.dst).name + "  " + LinkKindName(k.kind) +
             "  " + FormatGBps(k.bw_Bps) + " GB/s";
      if (k.lanes > 1) out += " (" + std::to_string(k.lanes) + " lanes)";
      out += "\n";
    }
  }
  return out;
}

namespace {
const char* Shape(NodeKind k) {
  switch (k) {
    case NodeKind::kGpu:
      return "box";
    case NodeKind::kNvSwitch:
      return "diamond";
    case NodeKind::kPcieSwitch:
      return "trapezium";
    case NodeKind::kCpu:
      return "ellipse";
    case NodeKind::kNic:
      return "hexagon";
    case NodeKind::kLeaf:
    case NodeKind::kSpine:
    case NodeKind::kCore:
      return "octagon";
  }
  return "ellipse";
}
}  // namespace

void WriteDot(const Cluster& c, std::ostream& out) {
  out << "graph cluster {\n  // " << c.sku().name << " x " << c.num_vms()
      << " VMs; edge labels: GB/s per direction\n";
  for (const Node& n : c.nodes()) {
    out << "  n" << n.id << " [label=\"" << n.name << "\", shape=" << Shape(n.kind) << "];\n";
  }
  for (size_t i = 0; i < c.links().size(); i += 2) {
    const Link& l = c.links()[i];
    out << "  n" << l.src << " -- n" << l.dst << " [label=\"" << LinkKindName(l.kind) << " "
        << FormatGBps(l.bw_Bps) << "\"];\n";
  }
  out << "}\n";
}

}  // namespace ndt
