// File: serve/disaggregate.h
// Disaggregated serving (--disaggregate P:D, serve/service.h): the replicas split into a prefill
// pool (prompt + first token) and a decode pool; each request's K/V cache moves between them by
// coll's send/recv (CommFns::kv_transfer_s). Every engine is simulated; measured by makespan.
#ifndef NDTWIN_SERVE_DISAGGREGATE_H_
#define NDTWIN_SERVE_DISAGGREGATE_H_

#include "core/status.h"
#include "serve/scenario.h"
#include "serve/service.h"

namespace ndt {

// The first GPU of replica `r` of TP `tp` x PP `pp` on VMs of `vm_gpus` GPUs in NVLink domains of
// `domain_gpus` (a VM, or an NVL72 rack), as serve/deployment.h CountReplicas lays them out:
// replicas that fit a VM fill the VMs in order, vm_gpus / (tp x pp) to a VM; wider ones are pp
// consecutive TP groups, each inside one domain (domain_gpus / tp to a domain).
int ReplicaFirstGpu(int r, int tp, int pp, int vm_gpus, int domain_gpus);
// The first GPU of stage `s` of that replica (stage s is tp GPUs from it).
int StageFirstGpu(int r, int s, int tp, int pp, int vm_gpus, int domain_gpus);

// Splits `plan`'s replicas P:D (recorded in plan.dep) and runs the requests (o.trace, else
// offline or Poisson at o.qps) through both pools. Errors: fewer than 2 replicas, a ratio that
// does not split them, VMs without InfiniBand, server/interactive without --qps or a trace.
StatusOr<InferResult> RunDisaggregatedScenario(DeploymentPlan& plan, const InferContext& ctx,
                                               const InferOptions& o, bool latency);

}  // namespace ndt

#endif  // NDTWIN_SERVE_DISAGGREGATE_H_
