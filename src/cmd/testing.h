// Test helpers shared by the command tests of several modules (cmd/, sweep/).
#ifndef NDT_CMD_TESTING_H_
#define NDT_CMD_TESTING_H_

#include "cmd/options.h"  // Json

namespace ndt {

// train's request for plan's result `r` (one row of `plan train --json`'s results, run with the
// request `plan_args`): every knob plan chose given, at the fidelity plan scored it at, and the
// straggler as plan had it.
inline Json TrainArgsOfPlanResult(const Json& plan_args, const Json& r) {
  Json t = {{"sku", r["sku"]},
            {"vms", r["vms"]},
            {"model", plan_args["model"]},
            {"gbs", plan_args["gbs"]},
            {"tp", r["tp"]},
            {"pp", r["pp"]},
            {"uneven-stages", r["uneven_stages"]},
            {"dp", r["dp"]},
            {"ep", r["ep"]},
            {"vpp", r["vpp"]},
            {"mbs", r["mbs"]},
            {"sp", r["sp"]},
            {"tp-overlap", r["tp_overlap"]},
            {"zero", r["zero"]},
            {"recompute", r["recompute"]},
            {"precision", r["precision"]},
            {"fidelity", r["fidelity"]}};
  if (plan_args.contains("gpu-variability")) t["gpu-variability"] = plan_args["gpu-variability"];
  return t;
}

}  // namespace ndt

#endif  // NDT_CMD_TESTING_H_
