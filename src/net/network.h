// File: net/network.h
// Network models: "these flows start at start_s; when does each finish?" over the directed
// links of a Cluster (bw_Bps per direction, latency_s one-way). Two fidelities:
//  * analytical: finish = start + path latency + bytes / share, where a subflow's share of a
//    link is the link bandwidth divided by the number of subflows crossing that link (counted
//    over all given flows, regardless of timing), and the subflow's rate is its smallest share
//    along its path. Closed form, no events. Exact when nothing contends.
//  * flow: fluid flows with max-min fair sharing (progressive filling / water-filling) of every
//    link, re-solved at each event (a start or a completion; a completion re-solves only the
//    subflows at or above the finishing rate, which leaves the others exactly where a full
//    re-solve would). Exact max-min, deterministic (ties broken by link and flow index). The
//    latency of the path is added once, at the end.
// Multipath Routes split a flow into subflows by Path::fraction; a flow finishes when its last
// subflow does. Units: bytes, seconds, bytes/s.
#ifndef NDTWIN_NET_NETWORK_H_
#define NDTWIN_NET_NETWORK_H_

#include <vector>

#include "topo/cluster.h"

namespace ndt {

struct Flow {
  Route route;
  double bytes = 0;
  double start_s = 0;
};

enum class NetFidelity { kAnalytical, kFlow };

// Finish time of each flow (same order as `flows`). A flow of 0 bytes finishes at start + path
// latency. REQUIRES: every link id in a route is a link of `cluster` with bw_Bps > 0.
std::vector<double> FinishTimes(const Cluster& cluster, const std::vector<Flow>& flows,
                                NetFidelity fidelity);

std::vector<double> FinishAnalytical(const Cluster& cluster, const std::vector<Flow>& flows);
std::vector<double> FinishMaxMin(const Cluster& cluster, const std::vector<Flow>& flows);

// Max-min fair rates of subflows that share links (one rate per subflow): the progressive
// filling solver used by FinishMaxMin, exposed for tests. `paths[i]` lists link ids.
std::vector<double> MaxMinRates(const Cluster& cluster,
                                const std::vector<std::vector<LinkId>>& paths);

}  // namespace ndt

#endif  // NDTWIN_NET_NETWORK_H_
