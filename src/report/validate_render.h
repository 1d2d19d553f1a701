// File: report/validate_render.h
// `ndtwin validate`'s renderings: per suite, predicted against measured and the signed error per
// case, the summary of the validation rows (and of each source when a suite has several), the
// refused cases and the calibration fit apart; with --write-intervals, the intervals written.
// Text and the ndtwin.validate/1 JSON document.
#ifndef NDTWIN_REPORT_VALIDATE_RENDER_H_
#define NDTWIN_REPORT_VALIDATE_RENDER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/validation.h"
#include "report/intervals.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// The errors of a set of rows: cases with a prediction, refused cases, mean, median and max of
// |error| and the case with the largest.
struct ValidationSummary {
  int n = 0;
  int refused = 0;  // cases the model would not run (listed, not in the errors)
  double mean = 0, median = 0, max = 0;
  std::string worst;
};
ValidationSummary SummarizeErrors(const std::vector<ValidationRow>& rows);

struct ValidateSuite {
  std::string name;  // "collectives", "training", "inference"
  std::vector<ValidationRow> rows;
};

// How `validate` names the folder holding validation/ (stderr note and JSON "data" alike):
// `given` (the --data value) as typed; else `dir` relative to the repository `repo` ("../shared"
// beside it, "." for its own copy); a folder elsewhere (an installed binary's PREFIX/share/ndtwin)
// by its last two names ("share/ndtwin"). Never the machine's absolute path, which a server
// running ndtwin would show its users.
std::string ShownDataDir(const std::string& given, const std::string& dir, const std::string& repo);

struct ValidateView {
  std::string data;  // the folder holding validation/, as ShownDataDir names it
  std::vector<ValidateSuite> suites;
  const Intervals* written = nullptr;  // the intervals written (--write-intervals), else null
};

Json ValidateJson(const ValidateView& v);
std::string ValidateText(const ValidateView& v);

}  // namespace ndt

#endif  // NDTWIN_REPORT_VALIDATE_RENDER_H_
