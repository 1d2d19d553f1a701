#include "serve/run.h"

#include "compute/compute.h"
#include "serve/comm.h"
#include "topo/builders.h"
#include "topo/fabric_params.h"

namespace ndt {

StatusOr<InferResult> RunInferenceOn(const Catalog& catalog, const std::string& sku_name,
                                     const TransformerSpec& model, const InferOptions& options,
                                     const std::string& data_dir) {
  if (options.vms < 1) {
    return Status::InvalidInput("--vms must be >= 1 (got " + std::to_string(options.vms) + ")");
  }
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, catalog.FindSku(sku_name));
  const GpuSpec& gpu = catalog.GpuOf(*sku);
  NDT_ASSIGN_OR_RETURN(ComputeCalibration cal, LoadComputeCalibration(data_dir));
  NDT_ASSIGN_OR_RETURN(EngineParams params, LoadEngineParams(data_dir));
  ClusterSpec cs;
  cs.sku = sku;
  cs.gpu = &gpu;
  cs.vms = options.vms;
  cs.fabric.tiers = ChooseTiers(cs);
  NDT_ASSIGN_OR_RETURN(FabricParams fp,
                       LoadFabricParams(data_dir.empty() ? DefaultFabricDataDir() : data_dir));
  NDT_ASSIGN_OR_RETURN(Cluster cluster, BuildCluster(cs, fp));
  InferContext ctx;
  ctx.sku = sku;
  ctx.gpu = &gpu;
  ctx.model = &model;
  ctx.calibration = &cal;
  ctx.params = params;
  ctx.comm = MakeCommFns(cluster);
  return RunInference(ctx, options);
}

}  // namespace ndt
