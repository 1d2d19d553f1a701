// File: cli/fabric_flags.cc
#include "cli/fabric_flags.h"

#include "topo/builders.h"

namespace ndt {

void AddFabricFlags(CLI::App* sub, FabricFlags* f) {
  sub->add_option("--tiers", f->tiers, "Fat-tree tiers, 2 or 3 (default: fewest that fit)");
  sub->add_option("--radix", f->radix, "Ports per IB switch (default 64)");
  sub->add_option("--vms-per-leaf", f->vms_per_leaf, "VMs per leaf group (default radix/2)");
  sub->add_option("--oversubscription", f->oversubscription,
                  "Leaf down:up bandwidth ratio (default 1 = non-blocking)");
  sub->add_flag("--ecmp-spread", f->ecmp_spread,
                "Spread each flow over all uplinks, like adaptive routing (default: one hashed "
                "uplink per GPU pair)");
}

FabricSpec ToFabricSpec(const FabricFlags& f) {
  FabricSpec s;
  s.tiers = f.tiers;
  s.switch_radix = f.radix;
  s.vms_per_leaf = f.vms_per_leaf;
  s.oversubscription = f.oversubscription;
  s.ecmp_spread = f.ecmp_spread;
  return s;
}

void ApplyFabricFlags(const FabricFlags& f, ClusterSpec* spec) {
  spec->fabric = ToFabricSpec(f);
  if (spec->fabric.tiers == 0) spec->fabric.tiers = ChooseTiers(*spec);
}

}  // namespace ndt
