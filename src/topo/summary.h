// File: topo/summary.h
// Read-only views of a built Cluster for people: per-GPU NVLink and scale-out bandwidth
// (B/s per direction), node and link counts by kind, the route printed hop by hop, and a
// Graphviz DOT export (one undirected edge per full-duplex link).
#ifndef NDTWIN_TOPO_SUMMARY_H_
#define NDTWIN_TOPO_SUMMARY_H_

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "topo/cluster.h"

namespace ndt {

// Sum of the NVLink links leaving GPU `rank`, per direction (0 without NVLink).
double GpuNvlinkBps(const Cluster& c, int rank = 0);
// The rate of the NIC GPU `rank` uses, divided by the GPUs of its VM sharing that NIC
// (0 without a scale-out network).
double GpuScaleoutBps(const Cluster& c, int rank = 0);
// Bisection bandwidth of the scale-out fabric per direction (FabricLayout::bisection_Bps).
double BisectionBps(const Cluster& c);

// Kinds present, in enum order, with their counts. Links count full-duplex links.
std::vector<std::pair<NodeKind, int>> NodeCounts(const Cluster& c);
std::vector<std::pair<LinkKind, int>> LinkCounts(const Cluster& c);
// Number of full-duplex links (directed links / 2).
int DuplexLinks(const Cluster& c);

// The slowest link of a path (B/s) and the sum of its link latencies (s).
double PathBottleneckBps(const Cluster& c, const Path& p);
double PathLatency(const Cluster& c, const Path& p);

// One line per path ("path 1 of 4 (25%): ...") then one line per hop:
// "  vm0/gpu0 -> vm0/nvsw0  nvlink  50 GB/s x2". Bandwidths in GB/s (1e9 B/s).
std::string FormatRoute(const Cluster& c, const Route& r);

// Writes the graph as Graphviz: `graph cluster { ... }`, nodes shaped by kind.
void WriteDot(const Cluster& c, std::ostream& out);

// "450", "12.5", "0.781" : a number in GB/s with up to 3 significant decimals.
std::string FormatGBps(double bps);

}  // namespace ndt

#endif  // NDTWIN_TOPO_SUMMARY_H_
