// File: serve/run.h
// One call from names to an inference result, shared by `ndtwin infer` and the validation
// suite: looks up the VM size, builds the cluster graph of the VMs (topo/) for communication
// times, loads the compute calibration and engine constants from data/, and runs
// RunInference (serve/service.h).
#ifndef NDTWIN_SERVE_RUN_H_
#define NDTWIN_SERVE_RUN_H_

#include <string>

#include "core/status.h"
#include "hw/catalog.h"
#include "model/transformer.h"
#include "serve/service.h"

namespace ndt {

// data_dir "" = Catalog::DefaultDataDir(). Errors: unknown size (did you mean), bad VM count,
// model does not fit, no rate meets the SLO.
StatusOr<InferResult> RunInferenceOn(const Catalog& catalog, const std::string& sku_name,
                                     const TransformerSpec& model, const InferOptions& options,
                                     const std::string& data_dir);

}  // namespace ndt

#endif  // NDTWIN_SERVE_RUN_H_
