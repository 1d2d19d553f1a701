// File: cli/fabric_flags.h
// The scale-out fabric flags of the commands that build a multi-VM cluster (collective, topo,
// train, infer): --tiers --radix --vms-per-leaf --oversubscription --ecmp-spread. Azure does not
// publish its fat trees, so these are what-if parameters; topo/ validates them.
#ifndef NDTWIN_CLI_FABRIC_FLAGS_H_
#define NDTWIN_CLI_FABRIC_FLAGS_H_

#include "cli/cli.h"
#include "topo/cluster.h"

namespace ndt {

struct FabricFlags {
  int tiers = 0;  // 0: the fewest tiers the radix can wire
  int radix = FabricSpec{}.switch_radix;
  int vms_per_leaf = 0;
  double oversubscription = 1.0;
  bool ecmp_spread = false;
};

void AddFabricFlags(CLI::App* sub, FabricFlags* f);

// The flags as a FabricSpec; tiers stays 0 ("the fewest that fit") for the caller to resolve.
FabricSpec ToFabricSpec(const FabricFlags& f);

// Copies the flags into spec->fabric; spec->sku must be set (tiers 0 picks the fewest that fit).
void ApplyFabricFlags(const FabricFlags& f, ClusterSpec* spec);

}  // namespace ndt

#endif  // NDTWIN_CLI_FABRIC_FLAGS_H_
