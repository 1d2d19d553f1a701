// File: coll/validate.h
// The collectives validation suite: every CSV under <shared_dir>/validation/ (recursively, in
// path order) whose header has the columns system, nodes, gpus, collective,
// message_size_label and busbw_GBps (nccl-tests sweeps). Each row becomes one ValidationRow:
// measured busbw vs ndtwin's prediction (analytical model, NCCL's default algorithm choice).
// The system string maps to a VM size ("A100-SXM4-80GB"/"NDm A100 v4" ->
// Standard_ND96amsr_A100_v4, "A100" -> Standard_ND96asr_v4, "H100" -> Standard_ND96isr_H100_v5,
// "H200" -> Standard_ND96isr_H200_v5, "GB200" -> Standard_ND128isr_NDR_GB200_v6, "GB300" ->
// Standard_ND128isr_GB300_v6, "V100"/"NDv2" -> Standard_ND40rs_v2). Size labels are powers of
// two as nccl-tests prints them ("33M" = 2^25 bytes): the label wins over message_bytes. Rows
// from files under validation/calibration/ are marked calibration = true. A "software" column
// naming "NCCL x.y.z" selects that release's tuner (NcclVersionOf); otherwise the pinned one.
// A sweep that forced an algorithm (NCCL_ALGO) is priced with it (ForcedAlgo), falling back to
// NCCL's choice where the system does not offer it. nccl-tests' host cost follows the launch the
// sweep's source used (GpusPerThreadOf): a "gpus_per_thread" column, else one thread on all GPUs
// of a VM for Azure's AI-benchmarking-guide (its script runs `-g <GPUs of the VM>`), else one
// process per GPU (CollOptions::gpus_per_thread).
#ifndef NDTWIN_COLL_VALIDATE_H_
#define NDTWIN_COLL_VALIDATE_H_

#include <optional>
#include <string>
#include <vector>

#include "coll/collective.h"
#include "coll/nccl_model.h"
#include "core/status.h"
#include "core/validation.h"
#include "hw/catalog.h"
#include "topo/fabric_params.h"

namespace ndt {

StatusOr<std::vector<ValidationRow>> ValidateCollectives(const Catalog& catalog,
                                                         const FabricParams& fabric,
                                                         const NcclCalibrationSet& nccl,
                                                         const std::string& shared_dir);

// The VM size a "system" string of a validation CSV names, or kNotFound.
StatusOr<std::string> SkuForSystem(const std::string& system);

// Bytes of an nccl-tests size label: the power of two nearest to ParseSizeBytes(label).
StatusOr<double> LabelBytes(const std::string& label);

// The NCCL release named in a "software" string ("NCCL 2.18.5, CUDA 12.5" -> 21805), encoded
// major*10000 + minor*100 + patch; kPinnedNcclVersion when it names none.
int NcclVersionOf(const std::string& software);

// The algorithm a row says its sweep forced: an "algorithm" column (`column`) if not empty,
// else in the note "NCCL_ALGO=X" or "X algorithm" (X: Ring, Tree, NVLS, NVLSTree, CollNet,
// CollNetDirect, CollNetChain, PAT; first match), unless the note says to treat the algorithm
// as NCCL's default ("NCCL default"). nullopt: NCCL's own choice. Error (kInvalidInput): an
// "algorithm" column that names no algorithm.
StatusOr<std::optional<Algo>> ForcedAlgo(const std::string& column, const std::string& note);

// GPUs one nccl-tests thread drove in a sweep (its -g): `column` (a "gpus_per_thread" column)
// when not empty; else the VM's GPUs when `source` names Azure's AI-benchmarking-guide, whose
// NCCLBandwidth.py runs `all_reduce_perf -b 8 -e 8G -f 2 -g <GPUs of the VM>` in one process;
// else 1 (one process per GPU, what mpirun-launched sweeps do). Error (kInvalidInput): a column
// that is not a number from 1 to gpus_per_vm.
StatusOr<int> GpusPerThreadOf(const std::string& column, const std::string& source,
                              int gpus_per_vm);

}  // namespace ndt

#endif  // NDTWIN_COLL_VALIDATE_H_
