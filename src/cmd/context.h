// File: cmd/context.h
// The data every command reads, loaded once from one data directory and then frozen (leveldb's
// Env, one level up): the catalog (GPUs, VM sizes, prices), the fabric's assumed latencies,
// the compute calibration, the serving engine's constants, the named software stacks and the
// prediction intervals (data/calibration/intervals.yaml, written by validate). Commands
// pass the parts down to the library explicitly; nothing below reads data/ on its own. Thread-safe
// once loaded.
#ifndef NDTWIN_CMD_CONTEXT_H_
#define NDTWIN_CMD_CONTEXT_H_

#include <string>

#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "core/status.h"
#include "fleet/fleet.h"
#include "hpc/params.h"
#include "hw/catalog.h"
#include "parallel/memory_reserve.h"
#include "parallel/stack.h"
#include "parallel/variability.h"
#include "report/intervals.h"
#include "serve/deployment.h"
#include "topo/fabric_params.h"

namespace ndt {

struct Context {
  std::string data_dir;  // the directory the rest was loaded from
  Catalog catalog;
  FabricParams fabric;
  ComputeCalibration compute;
  EngineParams engine;
  NcclCalibrationSet nccl;            // data/calibration/nccl.yaml
  std::vector<SoftwareStack> stacks;  // data/stacks/*.yaml, in file-name order
  Intervals intervals;                // data/calibration/intervals.yaml
  FleetData fleet;                    // data/reliability.yaml, storage.yaml, placement.yaml
  HpcParams hpc;                      // data/hpc.yaml
  GpuVariabilityTable variability;    // data/variability.yaml
  MemoryReserveTable memory_reserve;  // data/memory_reserve.yaml

  // Loads everything from `data_dir` ("" = Catalog::DefaultDataDir(): the built-in data/ or
  // $NDTWIN_DATA). Errors carry file:line.
  static StatusOr<Context> Load(const std::string& data_dir);
};

}  // namespace ndt

#endif  // NDTWIN_CMD_CONTEXT_H_
