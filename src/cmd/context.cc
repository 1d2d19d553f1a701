#include "cmd/context.h"

namespace ndt {

StatusOr<Context> Context::Load(const std::string& data_dir) {
  Context ctx;
  ctx.data_dir = data_dir.empty() ? Catalog::DefaultDataDir() : data_dir;
  NDT_ASSIGN_OR_RETURN(ctx.catalog, Catalog::Load(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.fabric, LoadFabricParams(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.compute, LoadComputeCalibration(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.engine, LoadEngineParams(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.nccl, LoadNcclCalibration(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.stacks, LoadStacks(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.intervals, LoadIntervals(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.fleet, LoadFleetData(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.hpc, LoadHpcParams(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.variability, LoadGpuVariability(ctx.data_dir));
  NDT_ASSIGN_OR_RETURN(ctx.memory_reserve, LoadMemoryReserve(ctx.data_dir));
  return ctx;
}

}  // namespace ndt
