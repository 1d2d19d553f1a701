#include "serve/run.h"

#include "compute/compute.h"
#include "serve/comm.h"
#include "topo/builders.h"

namespace ndt {

StatusOr<InferResult> RunInferenceOn(const ServeData& data, const std::string& sku_name,
                                     const TransformerSpec& model, const InferOptions& options) {
  const Catalog& catalog = *data.catalog;
  if (options.vms < 1) {
    return Status::InvalidInput("--vms must be >= 1 (got " + std::to_string(options.vms) + ")");
  }
  NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, catalog.FindSku(sku_name));
  const GpuSpec& gpu = catalog.GpuOf(*sku);
  ClusterSpec cs;
  cs.sku = sku;
  cs.gpu = &gpu;
  cs.vms = options.vms;
  cs.fabric.tiers = ChooseTiers(cs);
  NDT_ASSIGN_OR_RETURN(Cluster cluster, BuildCluster(cs, *data.fabric));
  InferContext ctx;
  ctx.sku = sku;
  ctx.gpu = &gpu;
  ctx.model = &model;
  ctx.calibration = data.compute;
  ctx.params = *data.engine;
  ctx.comm = MakeCommFns(cluster, *data.nccl);
  return RunInference(ctx, options);
}

}  // namespace ndt
