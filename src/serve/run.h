// File: serve/run.h
// One call from names to an inference result, shared by `ndtwin infer`, `plan infer` and the
// validation suite: looks up the VM size, builds the cluster graph of the VMs (topo/) for
// communication times and runs RunInference (serve/service.h) with the loaded data it is given
// (cmd/context.h loads it once; nothing here reads data/).
#ifndef NDTWIN_SERVE_RUN_H_
#define NDTWIN_SERVE_RUN_H_

#include <string>

#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "core/status.h"
#include "hw/catalog.h"
#include "model/transformer.h"
#include "serve/deployment.h"
#include "serve/service.h"
#include "topo/fabric_params.h"

namespace ndt {

// The loaded data a service run reads; every pointer must be set and outlive the call.
struct ServeData {
  const Catalog* catalog = nullptr;
  const FabricParams* fabric = nullptr;
  const ComputeCalibration* compute = nullptr;
  const EngineParams* engine = nullptr;
  const NcclCalibrationSet* nccl = nullptr;
  std::string data_dir;  // where dataset presets and models are read by name
};

// Errors: unknown size (did you mean), bad VM count, model does not fit, no rate meets the SLO.
StatusOr<InferResult> RunInferenceOn(const ServeData& data, const std::string& sku_name,
                                     const TransformerSpec& model, const InferOptions& options);

}  // namespace ndt

#endif  // NDTWIN_SERVE_RUN_H_
