// File: coll/schedule.h
// Collectives are schedules: an algorithm is a pure function returning steps of transfers
// (who sends how many bytes to whom); a step starts when the previous one ends and repeats
// `count` times (a ring step is described once and multiplied). Two evaluators price a schedule:
// the closed form (each transfer alone at its route's bottleneck bandwidth, no contention) and
// a replay on a net/ model (all transfers of a step concurrently, max-min sharing).
// Units: bytes, seconds.
#ifndef NDTWIN_COLL_SCHEDULE_H_
#define NDTWIN_COLL_SCHEDULE_H_

#include <span>
#include <vector>

#include "coll/collective.h"
#include "net/network.h"
#include "topo/cluster.h"

namespace ndt {

struct Transfer {
  int src = 0;  // global GPU rank
  int dst = 0;
  double bytes = 0;
};

struct Step {
  std::vector<Transfer> transfers;
  int count = 1;  // identical repetitions of this step
};

using Schedule = std::vector<Step>;

// Ring schedule of NCCL's Ring algorithm for `op` over `group` (ring order = group order).
// On one node: one step in which every rank sends bytes_per_step to its successor, repeated
// NCCL's step count (2(n-1) all_reduce, n-1 all_gather/reduce_scatter, n-1 broadcast/reduce).
// Across nodes (nodes = NVLink domains, ranks grouped by node in group order): NCCL runs one
// ring per channel, each entering and leaving a node through a different NIC; the inter-node
// step is one transfer per (node boundary, rail): local rank r of node v to local rank r of
// node v+1 (cyclic), each carrying a 1/rails share. Chunk = per-rank chunk bytes / n.
Schedule RingSchedule(const Cluster& cluster, CollOp op, double bytes, std::span<const int> group);

// NCCL's double binary tree between nodes (Tree, and the inter-node part of NVLS+Tree), built as
// NCCL's trees.cc does: tree 0 over node indices, rank r (r > 0) with lowest set bit b has parent
// (r ^ b) | (b << 1), or r ^ b when that is out of range; tree 1 mirrors tree 0 (even node
// count: r -> N-1-r) or shifts it by one (odd). Each tree carries half the buffer, each rail a
// 1/rails share (one tree channel per NIC, rail r of a node to rail r of its parent). The reduce
// (up) and broadcast (down) phases are split into steps in which every node sends at most one and
// receives at most one transfer (children below the parent, then above; where tree 1's shift
// wraps, a node's second child below moves to the second step), so on a non-blocking
// fabric nothing shares a link and the replay differs from the closed form only by fabric
// contention: the algorithm's own fan-in is priced by NCCL's tree bandwidth, not again here.
// all_reduce runs up then down; reduce only up; broadcast only down. Empty on one node.
Schedule TreeSchedule(const Cluster& cluster, CollOp op, double bytes, std::span<const int> group);
// Node-level parent of `r` in NCCL's tree `t` (0 or 1) over `n` nodes; -1 for the root.
int TreeParent(int t, int r, int n);

// PAT (all_gather / reduce_scatter with one rank per node): log2(N) steps; in step k every node
// exchanges with the node 2^k away, carrying 2^k / N of the buffer (aggregated). Empty on one
// node.
Schedule PatSchedule(const Cluster& cluster, CollOp op, double bytes, std::span<const int> group);

// All-to-all: one step, every rank sends bytes/n to every other rank.
Schedule AllToAllSchedule(double bytes, std::span<const int> group);

// How the closed form sees the scale-out fabric. kAsBuilt: every link as built, including leaf
// uplinks thinned by oversubscription. kNonBlocking: switch-to-switch links (leaf, spine, core)
// are left out of the bottleneck, as on a non-blocking fat tree, where they are never slower
// than the NIC ports below them; what NCCL's cost model assumes.
enum class FabricView { kAsBuilt, kNonBlocking };

// Closed form: sum over steps of count x max over transfers of (route latency + bytes / the
// route's bottleneck alone), where a link shared by several paths of one route (ECMP spread)
// carries their fractions together; and no less than the busiest endpoint link (GPU, NIC and
// host links, not switch-to-switch ones) with every transfer of the step it carries: where more
// transfers enter a node than it has NICs (a lone VM paired with a rack's 72 NICs), those
// NICs' ports are the step's bound whatever the fabric.
double EvaluateClosedForm(const Cluster& cluster, const Schedule& s,
                          FabricView view = FabricView::kAsBuilt);
// Replay on a network model: sum over steps of count x (last finish of the step's transfers
// started together).
double EvaluateOnNetwork(const Cluster& cluster, const Schedule& s, NetFidelity fidelity);

}  // namespace ndt

#endif  // NDTWIN_COLL_SCHEDULE_H_
