// File: core/validation.h
// One row of `ndtwin validate`: a published measurement, what ndtwin predicts for it, and the
// signed relative error (predicted - measured) / measured. Suites (coll/, parallel/, serve/)
// return rows; cli/validate.cc prints them and the summary.
#ifndef NDTWIN_CORE_VALIDATION_H_
#define NDTWIN_CORE_VALIDATION_H_

#include <string>

namespace ndt {

struct ValidationRow {
  std::string suite;    // "collectives", "training", "inference"
  std::string case_id;  // e.g. "ndm_a100_v4 1vm all_reduce 1G"
  std::string sku;      // the VM size the case ran on (its GPU gives the interval class)
  // The interval class's workload when it is not the suite's own: "training-zero3" for runs
  // that shard parameters (ZeRO-3 gathers are a mechanism of their own, with their own errors).
  std::string workload;
  std::string metric;  // e.g. "busbw_GBps"
  std::string unit;    // e.g. "GB/s"
  double measured = 0;
  double predicted = 0;
  bool calibration = false;  // true if the case was used to fit a parameter (not validation)
  std::string source;
  // Non-empty when the model refused the case (e.g. "does not fit: ..."): predicted is not set
  // and the row is left out of the error summary but listed, since a refusal of a configuration
  // that ran is itself a miss.
  std::string refused;
  double error() const { return measured != 0 ? (predicted - measured) / measured : 0; }
};

}  // namespace ndt

#endif  // NDTWIN_CORE_VALIDATION_H_
