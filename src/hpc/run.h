// File: hpc/run.h
// One `ndtwin hpc` run: the cluster it ran on and the result of its benchmark (one of the
// optionals is set, by `bench`), for report/hpc_render.h to render.
#ifndef NDTWIN_HPC_RUN_H_
#define NDTWIN_HPC_RUN_H_

#include <optional>
#include <string>
#include <vector>

#include "hpc/hpl.h"
#include "hpc/micro.h"
#include "hpc/stencil.h"

namespace ndt {

struct HpcRun {
  std::string bench;  // "hpl", "hpcg", "stream", "osu-latency", "osu-bw", "osu-allreduce", "halo3d"
  std::string sku, gpu;
  int vms = 0, gpus = 0, gpus_per_vm = 0;
  double fp64_flops = 0;         // per GPU, vector
  double fp64_tensor_flops = 0;  // per GPU, tensor (0 if none)
  double bf16_flops = 0;         // per GPU, dense BF16 tensor (what AI work runs at)
  std::optional<HplResult> hpl;
  std::optional<StreamResult> stream;
  std::string buffer;  // OSU: "device" or "host"
  std::vector<OsuPair> osu;
  std::optional<OsuAllreduce> allreduce;
  std::optional<HpcgResult> hpcg;
  std::optional<Halo3dResult> halo3d;
  std::vector<std::string> assumptions;  // what the numbers assume, one line each
};

}  // namespace ndt

#endif  // NDTWIN_HPC_RUN_H_
