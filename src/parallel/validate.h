// File: parallel/validate.h
// The training validation suite: Narayanan et al. SC21 Table 1 (GPT 1.7B-1T on up to 3,072
// A100 80GB GPUs, Selene: 8 HDR NICs per node) replayed on Standard_ND96amsr_A100_v4, with the
// paper's TP, PP and global batch, full recompute and the interleaved schedule; micro-batch and
// VPP are chosen as the best feasible (the paper does not print them per row). Compared metric:
// achieved TFLOP/s per GPU = eq. (3) FLOPs (with recompute) / predicted step time / GPUs.
// Nothing here is fitted to the table.
#ifndef NDTWIN_PARALLEL_VALIDATE_H_
#define NDTWIN_PARALLEL_VALIDATE_H_

#include <string>
#include <vector>

#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "core/status.h"
#include "core/validation.h"
#include "hw/catalog.h"
#include "parallel/memory_reserve.h"
#include "parallel/stack.h"
#include "parallel/variability.h"
#include "topo/fabric_params.h"

namespace ndt {

// Reads shared_dir/validation/training/megatron_table1.csv (and megatron_other.csv) and runs
// each case on the catalog's data with the software stack of its year (from `stacks`); with
// `variability`, each step waits for the slowest GPU of the run (parallel/variability.h).
StatusOr<std::vector<ValidationRow>> ValidateTraining(
    const Catalog& catalog, const FabricParams& fabric, const ComputeCalibration& cal,
    const NcclCalibrationSet& nccl, const std::vector<SoftwareStack>& stacks,
    const std::string& shared_dir, const MemoryReserveTable& memory_reserve,
    const GpuVariabilityTable* variability = nullptr);

}  // namespace ndt

#endif  // NDTWIN_PARALLEL_VALIDATE_H_
