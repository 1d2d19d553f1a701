#include "topo/cluster.h"

#include <utility>

namespace ndt {

const char* NodeKindName(NodeKind k) {
  switch (k) {
    case NodeKind::kGpu:
      return "gpu";
    case NodeKind::kNvSwitch:
      return "nvswitch";
    case NodeKind::kPcieSwitch:
      return "pcie_switch";
    case NodeKind::kCpu:
      return "cpu";
    case NodeKind::kNic:
      return "nic";
    case NodeKind::kLeaf:
      return "leaf";
    case NodeKind::kSpine:
      return "spine";
    case NodeKind::kCore:
      return "core";
  }
  return "?";
}

const char* LinkKindName(LinkKind k) {
  switch (k) {
    case LinkKind::kNvlink:
      return "nvlink";
    case LinkKind::kPcie:
      return "pcie";
    case LinkKind::kC2c:
      return "c2c";
    case LinkKind::kCpuCpu:
      return "cpu_cpu";
    case LinkKind::kIb:
      return "ib";
  }
  return "?";
}

NodeId Cluster::AddNode(NodeKind kind, int vm, int index, std::string name) {
  NodeId id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(Node{id, kind, vm, index, std::move(name)});
  return id;
}

LinkId Cluster::AddDuplex(NodeId a, NodeId b, LinkKind kind, double bw_Bps, double latency_s,
                          int lanes) {
  LinkId ab = static_cast<LinkId>(links_.size());
  links_.push_back(Link{ab, a, b, kind, bw_Bps, latency_s, lanes});
  links_.push_back(Link{ab + 1, b, a, kind, bw_Bps, latency_s, lanes});
  return ab;
}

std::vector<LinkId> Cluster::out_links(NodeId n) const {
  std::vector<LinkId> out;
  for (const Link& l : links_) {
    if (l.src == n) out.push_back(l.id);
  }
  return out;
}

}  // namespace ndt
