// File: cmd/validate.cc
// `ndtwin validate [--suite all|collectives|training|inference] [--data DIR]`: reproduces the
// published measurements under DIR/validation/ (default: ../shared/ beside the repo when it has
// validation/, else the copy in this repo's validation/) and
// prints predicted against measured, the signed error per case, and a summary per suite.
// Rows used to fit a parameter (validation/calibration/) are marked and summarized apart: they
// show the fit, not the model's accuracy.
// --write-intervals (with --suite all) writes data/calibration/intervals.yaml: per class
// (architecture x workload), p10/p90 of measured / predicted (report/intervals.h).
#include "coll/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cmd/command.h"
#include "cmd/registry.h"
#include "core/files.h"
#include "hw/catalog.h"
#include "parallel/validate.h"
#include "report/intervals.h"
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

struct Summary {
  int n = 0;
  int refused = 0;  // cases the model would not run (listed, not in the errors)
  double mean = 0, median = 0, max = 0;
  std::string worst;
};

Summary Summarize(const std::vector<ValidationRow>& rows) {
  Summary s;
  std::vector<double> errs;
  for (const ValidationRow& r : rows) {
    if (!r.refused.empty()) {
      ++s.refused;
      continue;
    }
    double e = std::fabs(r.error());
    errs.push_back(e);
    if (e >= s.max) {
      s.max = e;
      s.worst = r.case_id;
    }
  }
  s.n = static_cast<int>(errs.size());
  if (errs.empty()) return s;
  double sum = 0;
  for (double e : errs) sum += e;
  s.mean = sum / errs.size();
  std::sort(errs.begin(), errs.end());
  size_t m = errs.size() / 2;
  s.median = errs.size() % 2 ? errs[m] : (errs[m - 1] + errs[m]) / 2;
  return s;
}

StatusOr<std::vector<ValidationRow>> RunSuite(const std::string& suite, const Context& ctx,
                                              const std::string& shared_dir) {
  if (suite == "collectives")
    return ValidateCollectives(ctx.catalog, ctx.fabric, ctx.nccl, shared_dir);
  if (suite == "training") {
    return ValidateTraining(ctx.catalog, ctx.fabric, ctx.compute, ctx.nccl, ctx.stacks, shared_dir);
  }
  const ServeData data{&ctx.catalog, &ctx.fabric, &ctx.compute,
                       &ctx.engine,  &ctx.nccl,   ctx.data_dir};
  std::map<std::string, bool> overlap;  // each serving stack's host_overlap trait
  for (const SoftwareStack& st : ctx.stacks) {
    if (st.kind == StackKind::kServing) overlap[st.name] = st.host_overlap;
  }
  return ValidateInference(data, shared_dir, overlap);
}

Json SummaryJson(const Summary& s) {
  Json j;
  j["cases"] = s.n;
  j["mean_abs_error"] = s.mean;
  j["median_abs_error"] = s.median;
  j["max_abs_error"] = s.max;
  j["worst_case"] = s.worst;
  j["refused"] = s.refused;
  return j;
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
  // Said relative to the working directory when it can be, so logs and the README carry no
  // machine's absolute path.
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  std::string shown = shared_dir;
  if (!ec) {
    const std::string rel =
        std::filesystem::path(shared_dir).lexically_normal().lexically_relative(cwd).string();
    if (!rel.empty()) shown = rel;
  }
  diag->Note("ndtwin: measurements from " + shown + "/validation");
  std::vector<std::string> suites = {"collectives", "training", "inference"};
  if (opts.suite != "all") suites = {opts.suite};
  Json out;
  out["schema"] = "ndtwin.validate/1";
  out["ndtwin_version"] = NDT_VERSION;
  out["data"] = shared_dir;
  Json jsuites = Json::array();
  std::string text;
  for (const std::string& suite : suites) {
    diag->Progress("ndtwin: validating " + suite + "...");
    StatusOr<std::vector<ValidationRow>> rows = RunSuite(suite, ctx, shared_dir);
    if (!rows.ok()) return rows.status().WithPrefix("validate " + suite + ": ");
    std::vector<ValidationRow> cal, val;
    for (const ValidationRow& r : *rows) (r.calibration ? cal : val).push_back(r);
    const std::string suite_workload = suite == "inference" ? "serving" : suite;
    for (const ValidationRow& r : *rows) {
      NDT_ASSIGN_OR_RETURN(const SkuSpec* sku, ctx.catalog.FindSku(r.sku));
      const std::string arch = ArchClassName(ctx.catalog.GpuOf(*sku).arch);
      const std::string workload = r.workload.empty() ? suite_workload : r.workload;
      if (!r.refused.empty()) {
        refused.emplace_back(arch + " " + workload, 1);
        continue;
      }
      residuals.push_back({arch, workload, r.metric, r.measured, r.predicted, r.calibration});
    }
    Summary sv = Summarize(val), sc = Summarize(cal);

    text += fmt::format("== {} ({} validation cases, {} calibration cases)\n", suite,
                        sv.n + sv.refused, sc.n);
    size_t wc = 4, wm = 6;  // column widths: the longest case and metric of the suite
    for (const ValidationRow& r : *rows) {
      wc = std::max(wc, r.case_id.size());
      wm = std::max(wm, r.metric.size());
    }
    text += fmt::format("{:<{}} {:<{}} {:>12} {:>12} {:>8}\n", "case", wc, "metric", wm, "measured",
                        "predicted", "error");
    Json jrows = Json::array();
    for (const ValidationRow& r : *rows) {
      Json jr;
      jr["case"] = r.case_id;
      jr["metric"] = r.metric;
      jr["unit"] = r.unit;
      jr["measured"] = r.measured;
      if (r.refused.empty()) {
        text += fmt::format("{:<{}} {:<{}} {:>12.4g} {:>12.4g} {:>+7.1f}%{}\n", r.case_id, wc,
                            r.metric, wm, r.measured, r.predicted, 100 * r.error(),
                            r.calibration ? "  (calibration)" : "");
        jr["predicted"] = r.predicted;
        jr["error"] = r.error();
      } else {
        text += fmt::format("{:<{}} {:<{}} {:>12.4g} {:>12} {:>8}  refused: {}\n", r.case_id, wc,
                            r.metric, wm, r.measured, "-", "-", r.refused);
        jr["predicted"] = nullptr;
        jr["error"] = nullptr;
        jr["refused"] = r.refused;
      }
      jr["calibration"] = r.calibration;
      jr["source"] = r.source;
      jrows.push_back(jr);
    }
    if (sv.n > 0) {
      text += fmt::format("validation: mean |error| {:.1f}%, median {:.1f}%, max {:.1f}% ({})\n",
                          100 * sv.mean, 100 * sv.median, 100 * sv.max, sv.worst);
    }
    // With several sources in a suite, each source's own summary: one bad family of cases
    // should not hide (or be hidden by) the others.
    std::vector<std::string> sources;
    for (const ValidationRow& r : val) {
      if (std::find(sources.begin(), sources.end(), r.source) == sources.end()) {
        sources.push_back(r.source);
      }
    }
    for (size_t i = 0; sources.size() > 1 && i < sources.size(); ++i) {
      std::vector<ValidationRow> part;
      for (const ValidationRow& r : val) {
        if (r.source == sources[i]) part.push_back(r);
      }
      const Summary ss = Summarize(part);
      if (ss.n < 2) continue;  // a one-case source is its own row above
      text += fmt::format("  {}: {} cases, mean |error| {:.1f}%, max {:.1f}%\n", sources[i], ss.n,
                          100 * ss.mean, 100 * ss.max);
    }
    if (sv.refused > 0) {
      text += fmt::format("refused: {} case(s) that ran for real, which the model would not run\n",
                          sv.refused);
    }
    if (sc.n > 0) {
      text +=
          fmt::format("calibration fit: mean |error| {:.1f}%, median {:.1f}%, max {:.1f}% ({})\n",
                      100 * sc.mean, 100 * sc.median, 100 * sc.max, sc.worst);
    }
    text += "\n";
    Json js;
    js["suite"] = suite;
    js["validation"] = SummaryJson(sv);
    js["calibration"] = SummaryJson(sc);
    js["rows"] = jrows;
    jsuites.push_back(js);
  }
  out["suites"] = jsuites;
  if (opts.write_intervals) {
    const Intervals iv = ComputeIntervals(residuals, refused);
    const std::string path = ctx.data_dir + "/calibration/intervals.yaml";
    NDT_RETURN_IF_ERROR(WriteFileAtomic(path, IntervalsYaml(iv), "--write-intervals"));
    diag->Note("ndtwin: wrote " + path);
    text += "intervals (measured/predicted p10-p90, written to data/calibration/intervals.yaml):\n";
    Json jiv = Json::array();
    for (const IntervalClass& c : iv.classes) {
      text += fmt::format("  {:<24} {:>3} {:<6} p10 {:.3f}  p90 {:.3f}  {}\n", c.name, c.cases,
                          c.cases == 1 ? "case" : "cases", c.p10, c.p90, c.basis);
      jiv.push_back(Json{{"class", c.name},
                         {"cases", c.cases},
                         {"p10", c.p10},
                         {"p90", c.p90},
                         {"basis", c.basis}});
    }
    out["intervals"] = jiv;
  }
  return CommandOutput{out, text};
}

}  // namespace

Command ValidateCommand() {
  return MakeCommand<ValidateOptions>(
      "validate", "Reproduce published measurements and print the error table", RunValidate);
}

}  // namespace ndt
