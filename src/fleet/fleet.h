// File: fleet/fleet.h
// A long training run on a real cluster: interruptions by component class, checkpoints to a
// storage target, restarts, Azure's placement limits, and the goodput and time-to-train that
// follow. Takes a step time (from parallel/ or the user); knows nothing of how a step is
// computed.
//
// Failures: each class (GPU, HBM, NIC, switch/cable, host, software, planned maintenance) is a
// Poisson process whose rate is its per-unit-hour rate (data/reliability.yaml, fitted on Llama
// 3's 54-day counts) times the units the cluster has; the merged process has rate λ = Σ rates.
// Checkpoints: every τ seconds of training the job blocks for b (sync: the whole write; async:
// the device-to-host copy only); a checkpoint is durable L = write time after it started. An
// unexpected interruption loses the work since the last durable checkpoint, then costs
// detection + replacement (a hot spare or a new VM, for the classes that lose a VM) + init
// (linear in GPUs) + checkpoint load; an interruption during a restart starts it again. A planned
// one writes a checkpoint first and loses no work.
// Closed form: Daly (2006) for the expected time of a cycle c = τ + b with restart R under
// exponential failures, E = e^{λR} (e^{λc} - 1) (1/λ + w), R the parts of a restart an
// interruption starts over (detection, init, load), w the mean replacement wait (a VM already
// ordered keeps coming); goodput τ / E, times the share of time planned maintenance leaves;
// Young/Daly's optimum interval. Monte Carlo: failure inter-arrival times are drawn (exponential),
// never stepped; xoshiro256** seeded per run by splitmix64, our own uniform and exponential
// transforms, so a seed gives the same bytes on every platform and thread count. Seconds and bytes
// in and out.
#ifndef NDTWIN_FLEET_FLEET_H_
#define NDTWIN_FLEET_FLEET_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "hw/spec.h"
#include "parallel/memory.h"
#include "parallel/strategy.h"
#include "topo/cluster.h"

namespace ndt {

// ---- Data (data/reliability.yaml, data/storage.yaml, data/placement.yaml) ----

enum class FailureUnit { kGpu, kVm, kNic, kSwitch };
const char* FailureUnitName(FailureUnit u);

struct FailureClass {
  std::string name;  // "gpu", "hbm", "nic", "switch_cable", "host", "software", "planned"
  FailureUnit unit = FailureUnit::kGpu;
  bool planned = false;
  bool needs_new_vm = false;  // the job must replace a VM before it restarts
  double count = 0;           // in the fitting window
  double rate_per_unit_hour = 0;
  std::string source, derived;
};

struct ReliabilityData {
  std::string hardware_generation;  // "Hopper": the architecture the rates were fitted on
  double exposure_hours = 0, exposure_gpus = 0, exposure_vms = 0, exposure_nics = 0,
         exposure_switches = 0;
  std::vector<FailureClass> classes;  // in file order
  double detection_s = 0, spare_swap_s = 0, new_vm_s = 0;
  double init_per_gpu_s = 0, init_per_gpu_unoptimized_s = 0;
};

struct StorageData {
  double nvme_write_per_disk_Bps = 0, nvme_read_per_disk_Bps = 0;
  std::vector<std::pair<std::string, int>> nvme_disks;  // size name -> disks
  int nvme_default_disks = 1;
  double blob_write_Bps = 0, blob_read_Bps = 0;
  double lustre_write_Bps = 0, lustre_read_Bps = 0;
  double memory_usable_frac = 0.5;
};

struct PlacementData {
  int scale_set_default_vms = 100;
  int scale_set_max_vms = 300;
  int availability_set_max_vms = 200;
  int rack_vms = 18;
  std::string scale_set_source, rack_source;
};

struct FleetData {
  ReliabilityData reliability;
  StorageData storage;
  PlacementData placement;
};

// Loads the three files under `data_dir` strictly (core/yaml.h); errors carry file:line. A
// class's rate must equal count / (exposure units x hours) within 0.1%.
StatusOr<FleetData> LoadFleetData(const std::string& data_dir);
// The same from texts (tests).
StatusOr<FleetData> ParseFleetData(const std::string& reliability_yaml,
                                   const std::string& storage_yaml,
                                   const std::string& placement_yaml);

// ---- The cluster as the fleet sees it ----

struct FleetCluster {
  const SkuSpec* sku = nullptr;
  int gpus = 0, vms = 0, gpus_per_vm = 0, nics = 0, switches = 0;
  double host_link_Bps = 0;  // one GPU's link to host memory (PCIe or C2C), per direction
  double nic_Bps = 0;        // one GPU's share of the scale-out NICs, per direction
};
FleetCluster DescribeCluster(const Cluster& cluster);

// ---- Checkpoints ----

enum class CheckpointTarget { kNvme, kManagedDisk, kBlob, kLustre, kMemory };
bool ParseCheckpointTarget(const std::string& s, CheckpointTarget* out);
const char* CheckpointTargetName(CheckpointTarget t);

// Bytes one GPU writes per checkpoint (the largest writer): the model state the strategy keeps,
// from the training memory model (parallel/memory.h): 16-bit weights and the optimizer states
// (fp32 master weights and Adam moments), not gradients (a checkpoint is taken between steps).
// Replicated state is written once (deduplicated, as torch DCP and Megatron's distributed
// checkpoints do): ZeRO >= 1 spreads it over the data-parallel replicas; ZeRO 0 has the first
// replica write the whole optimizer state and 1/dp of the weights each.
double CheckpointBytesPerGpu(const MemoryBreakdown& m, const Strategy& s);
// Bytes of one checkpoint, all writers: bytes_per_gpu x (gpus with ZeRO >= 1, else gpus / dp).
double CheckpointTotalBytes(double bytes_per_gpu, const Strategy& s, int gpus);

struct CheckpointPlan {
  CheckpointTarget target = CheckpointTarget::kBlob;
  bool async = false;
  double bytes_per_gpu = 0;
  double total_bytes = 0;
  double d2h_s = 0;    // device-to-host copy of one GPU's share
  double write_s = 0;  // from start to durable
  double block_s = 0;  // what training waits per checkpoint (sync: write_s; async: d2h_s)
  double load_s = 0;
  std::string write_limit;  // what bounds the write ("the storage account's ingress 7.5 GB/s")
  std::string load_limit;
  std::vector<std::string> warnings;
};

// Write and load times for `bytes_per_gpu` on the cluster's VMs to `target`. `service_Bps`
// overrides the service's throughput (blob, lustre; both ways). Errors (kInvalidInput): the size
// has no such storage (no temp disk, no published disk throughput), or two checkpoints do not
// fit its temp disk / host memory.
StatusOr<CheckpointPlan> PlanCheckpoint(const FleetData& data, const FleetCluster& cluster,
                                        CheckpointTarget target, bool async, double bytes_per_gpu,
                                        double total_bytes, std::optional<double> service_Bps);

// ---- Placement ----

struct Placement {
  int scale_sets = 1;           // scale sets of at most the limit (InfiniBand reaches inside one)
  int racks = 0;                // NVL72 racks (0 for sizes without a rack-wide NVLink domain)
  bool azure_arranged = false;  // the IB domain exceeds any customer scale set
  std::vector<std::string> warnings;
};

// Scale sets and racks for `vms` + `spares` VMs of `sku`. Errors: spares that would fall in
// another scale set than the job (kInvalidInput, "--spares"); with `strict`, a job whose
// InfiniBand domain exceeds a customer scale set (kInfeasible, "--strict-placement").
StatusOr<Placement> PlanPlacement(const PlacementData& data, const SkuSpec& sku, int vms,
                                  int spares, bool strict);

// One line for reports: "2 scale sets, 4 NVL72 racks of 18 VMs; beyond one scale set's ...".
std::string DescribePlacement(const Placement& p, const PlacementData& limits);

// ---- The run ----

// One failure class applied to a cluster: its rate for the whole job.
struct ClassRate {
  std::string name;
  bool planned = false;
  bool needs_new_vm = false;
  double per_s = 0;
};

// Everything the simulation needs, in seconds.
struct FleetModel {
  std::vector<ClassRate> classes;  // data order
  double unexpected_per_s = 0, planned_per_s = 0;
  int gpus = 0, vms = 0, spares = 0;
  double detection_s = 0, spare_swap_s = 0, new_vm_s = 0, init_s = 0;
  double load_s = 0, write_s = 0, block_s = 0;
  double step_s = 1;
};

// Rates from the data scaled by the cluster's units and `failure_scale`; restart times with
// init linear in GPUs (`unoptimized_init`: MegaScale's default Megatron-LM figure).
FleetModel BuildFleetModel(const ReliabilityData& rel, const FleetCluster& cluster,
                           const CheckpointPlan& ckpt, double failure_scale, int spares,
                           bool unoptimized_init, double step_s);

// Mean restart (unexpected, planned) in seconds: detection (unexpected), replacement for the
// classes that lose a VM (a spare if any, else a new VM), init, load.
double MeanUnexpectedRestartS(const FleetModel& m);
double MeanPlannedRestartS(const FleetModel& m);

struct ClosedForm {
  double mtbi_s = 0;  // unexpected interruptions only
  double goodput = 0;
  double young_interval_s = 0;  // sqrt(2 b M)
  double daly_interval_s = 0;   // Daly 2006 higher-order, b the blocking time
};
ClosedForm EvaluateClosedForm(const FleetModel& m, double interval_s);

// How long the run is: `work_s` of failure-free training (from --tokens), or a wall-clock window
// `wall_s` (--days) in which the job does what it can. Exactly one is > 0.
struct RunLength {
  double work_s = 0;
  double wall_s = 0;
};

// Lost time is attributed to a cause: each failure class (its lost work, detection, replacement,
// init and load, and a planned one's final checkpoint), plus "checkpoint" (time training blocks on
// periodic checkpoints).
struct RunOutcome {
  double wall_s = 0;
  double work_s = 0;
  std::vector<int> interruptions;  // per class
  std::vector<double> lost_s;      // per class, then one more for checkpoints (job seconds)
};

// One timeline span of a simulated run (for --trace): "train", "checkpoint", "restart", ...
struct FleetSpan {
  int track = 0;  // 0 job, 1 interruptions
  std::string name, category;
  double start_s = 0, dur_s = 0;
};

// One run, seeded by `seed`. `spans` (optional) receives its timeline.
RunOutcome SimulateRun(const FleetModel& m, double interval_s, const RunLength& len, uint64_t seed,
                       std::vector<FleetSpan>* spans = nullptr);

struct Quantiles {
  double p10 = 0, p50 = 0, p90 = 0, mean = 0;
};

struct MonteCarloResult {
  int runs = 0;
  Quantiles wall_s, work_s, goodput;
  std::vector<double> interruptions_mean;  // per class
  double unexpected_mean = 0, planned_mean = 0;
  std::vector<double> lost_gpu_hours_mean;  // per class, then checkpoints
};

// `runs` runs, run i seeded with a hash of (seed, i), over `threads` threads (results are the
// same for any thread count). REQUIRES: runs >= 1, threads >= 1.
MonteCarloResult RunMonteCarlo(const FleetModel& m, double interval_s, const RunLength& len,
                               int runs, uint64_t seed, int threads);

// The interval (a whole number of steps, at least `min_interval_s`) with the best mean goodput
// over up to `runs` common-random-number runs: a log grid around Daly's interval, then refined.
double OptimizeInterval(const FleetModel& m, const RunLength& len, double min_interval_s, int runs,
                        uint64_t seed, int threads);

}  // namespace ndt

#endif  // NDTWIN_FLEET_FLEET_H_
