// File: cmd/validate.cc
// `ndtwin validate [--suite all|collectives|training|inference] [--data DIR]`: reproduces the
// published measurements under DIR/validation/ (default: ../shared/ beside the repo when it has
// validation/, else the copy in this repo's validation/) and
// prints predicted against measured, the signed error per case, and a summary per suite.
// Rows used to fit a parameter (validation/calibration/) are marked and summarized apart: they
// show the fit, not the model's accuracy.
// The inference suite also runs the serving calibration rows src/serve/fit_serving.py fits
// (serve/validate.h ValidateServingCalibration; B200 on a calibration-only stand-in size), so the
// serving interval classes have cases. --write-intervals (with --suite all) writes
// data/calibration/intervals.yaml: per class (architecture x workload), p10/p90 of measured /
// predicted by the rules of report/intervals.h.
#include "coll/validate.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/registry.h"
#include "core/files.h"
#include "hw/catalog.h"
#include "parallel/validate.h"
#include "report/intervals.h"
#include "report/validate_render.h"
#include "serve/validate.h"

namespace ndt {
namespace {

struct ValidateOptions : CommandRequest {
  std::string suite = "all";
  std::string shared_dir;  // empty: DefaultSharedDir()
  bool write_intervals = false;
  void Declare(OptionList* o) override {
    o->Add("suite", &suite, "Which suite to run: all (default), collectives, training, inference");
    o->Add("write-intervals", &write_intervals,
           "Write the prediction intervals (p10/p90 of measured/predicted per architecture x "
           "workload) to data/calibration/intervals.yaml (needs --suite all)");
    o->Add("data", &shared_dir,
           "Folder holding validation/ (default: ../shared beside the repo, else the repo's copy)")
        .LocalFile();
  }
};

// ../shared/ beside the repo when it holds validation/ (it may have more cases than the copy),
// else an installed binary's PREFIX/share/ndtwin (make install copies validation/ there), else
// the repo itself, whose validation/ is a copy of the published measurements.
std::string DefaultSharedDir() {
  std::error_code ec;
  const std::string sibling = NDT_SHARED_SIBLING_DIR;
  if (std::filesystem::is_directory(sibling + "/validation", ec)) return sibling;
  if (const std::string share = InstalledShareDir();
      !share.empty() && std::filesystem::is_directory(share + "/validation", ec)) {
    return share;
  }
  return NDT_SHARED_DIR;
}

// `catalog` is ctx.catalog with the serving calibration's stand-in sizes (serve/validate.h).
StatusOr<std::vector<ValidationRow>> RunSuite(const std::string& suite, const Context& ctx,
                                              const Catalog& catalog,
                                              const std::string& shared_dir) {
  if (suite == "collectives")
    return ValidateCollectives(ctx.catalog, ctx.fabric, ctx.nccl, shared_dir);
  if (suite == "training") {
    return ValidateTraining(ctx.catalog, ctx.fabric, ctx.compute, ctx.nccl, ctx.stacks, shared_dir,
                            ctx.memory_reserve, &ctx.variability);
  }
  const ServeData data{&catalog, &ctx.fabric, &ctx.compute, &ctx.engine, &ctx.nccl, ctx.data_dir};
  std::map<std::string, ServingTraits> traits;  // each serving stack's engine traits
  for (const SoftwareStack& st : ctx.stacks) {
    if (st.kind != StackKind::kServing) continue;
    ServingTraits& t = traits[st.name];
    t.host_overlap = st.host_overlap;
    t.cuda_graphs = st.cuda_graphs;
    ParseTpAllReduce(st.tp_allreduce, &t.tp_allreduce);  // a name the stack parser checked
  }
  NDT_ASSIGN_OR_RETURN(std::vector<ValidationRow> rows,
                       ValidateInference(data, shared_dir, traits));
  // The serving calibration rows (fit residuals): the serving interval classes pool them.
  NDT_ASSIGN_OR_RETURN(std::vector<ValidationRow> cal,
                       ValidateServingCalibration(data, shared_dir, traits));
  rows.insert(rows.end(), cal.begin(), cal.end());
  return rows;
}

StatusOr<CommandOutput> RunValidate(const Context& ctx, const ValidateOptions& opts,
                                    Diagnostics* diag) {
  if (opts.suite != "all" && opts.suite != "collectives" && opts.suite != "training" &&
      opts.suite != "inference") {
    return Status::InvalidInput("--suite '" + opts.suite +
                                "'; use all, collectives, training or inference");
  }
  if (opts.write_intervals && opts.suite != "all") {
    return Status::InvalidInput("--write-intervals needs every suite; drop --suite " + opts.suite);
  }
  if (opts.write_intervals) {
    NDT_RETURN_IF_ERROR(
        CheckWritablePath(ctx.data_dir + "/calibration/intervals.yaml", "--write-intervals"));
  }
  const std::string shared_dir = opts.shared_dir.empty() ? DefaultSharedDir() : opts.shared_dir;
  std::vector<Residual> residuals;
  std::vector<std::pair<std::string, int>> refused;
  // Named as given, or relative to the repo: no machine's absolute path in logs, the README or
  // the JSON a server passes on.
  const std::string shown = ShownDataDir(opts.shared_dir, shared_dir, NDT_SHARED_DIR);
  diag->Note("ndtwin: measurements from " + shown + "/validation");
  NDT_ASSIGN_OR_RETURN(const Catalog catalog, WithServingStandIns(ctx.catalog));
  std::vector<std::string> suites = {"collectives", "training", "inference"};
  if (opts.suite != "all") suites = {opts.suite};
  ValidateView view;
  view.data = shown;
  for (const std::string& suite : suites) {
    diag->Progress("ndtwin: validating " + suite + "...");
    StatusOr<std::vector<ValidationRow>> rows = RunSuite(suite, ctx, catalog, shared_dir);
    if (!rows.ok()) return rows.status().WithPrefix("validate " + suite + ": ");
    const std::string suite_workload = suite == "inference" ? "serving" : suite;
    for (const ValidationRow& r : *rows) {
      NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, catalog.FindSku(r.sku));
      const std::string arch = ArchClassName(catalog.GpuOf(*sku).arch);
      const std::string workload = r.workload.empty() ? suite_workload : r.workload;
      if (!r.refused.empty()) {
        refused.emplace_back(arch + " " + workload, 1);
        continue;
      }
      residuals.push_back(
          {arch, workload, r.metric, r.measured, r.predicted, r.calibration, SourceKey(r.source)});
    }
    view.suites.push_back({suite, std::move(*rows)});
  }
  std::optional<Intervals> written;
  if (opts.write_intervals) {
    written = ComputeIntervals(residuals, refused);
    const std::string path = ctx.data_dir + "/calibration/intervals.yaml";
    NDT_RETURN_IF_ERROR(WriteFileAtomic(path, IntervalsYaml(*written), "--write-intervals"));
    diag->Note("ndtwin: wrote " + ShownDataDir("", ctx.data_dir, NDT_SHARED_DIR) +
               "/calibration/intervals.yaml");
    view.written = &*written;
  }
  return CommandOutput{ValidateJson(view), ValidateText(view)};
}

}  // namespace

Command ValidateCommand() {
  return MakeCommand<ValidateOptions>(
      "validate", "Reproduce published measurements and print the error table", RunValidate);
}

}  // namespace ndt
