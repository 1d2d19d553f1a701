// File: cmd/registry.h
// One factory per command, each in cmd/<name>.cc; Registry() (cmd/command.cc) lists them.
#ifndef NDTWIN_CMD_REGISTRY_H_
#define NDTWIN_CMD_REGISTRY_H_

#include "cmd/command.h"

namespace ndt {

Command SkuListCommand();     // cmd/sku.cc
Command SkuShowCommand();     // cmd/sku.cc
Command TopoCommand();        // cmd/topo.cc
Command CollectiveCommand();  // cmd/collective.cc
Command ModelListCommand();   // cmd/model.cc
Command ModelShowCommand();   // cmd/model.cc
Command TrainCommand();       // cmd/train.cc
Command InferCommand();       // cmd/infer.cc
Command PlanTrainCommand();   // cmd/plan.cc
Command PlanInferCommand();   // cmd/plan.cc
Command FleetCommand();       // cmd/fleet.cc
Command ValidateCommand();    // cmd/validate.cc
Command SweepCommand();       // cmd/sweep.cc
Command HpcCommand();         // cmd/hpc.cc

}  // namespace ndt

#endif  // NDTWIN_CMD_REGISTRY_H_
