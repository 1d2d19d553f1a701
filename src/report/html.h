// File: report/html.h
// A self-contained HTML report of one command's run (`--report FILE.html`, and the web app's
// result pages): the inputs (the request's options), the results (the command's --json document
// rendered as tables, and embedded verbatim) and interactive Vega-Lite charts declared from the
// document. Generic over commands: the charts are chosen by the document's "schema"
// ("ndtwin.train/1", ...); a document without a chart spec gets the tables alone. The page
// inlines the charting JavaScript (report/assets.h): nothing is fetched when it opens.
#ifndef NDTWIN_REPORT_HTML_H_
#define NDTWIN_REPORT_HTML_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace ndt {

// One chart: a title and its Vega-Lite spec (data inlined from the document).
struct ChartSpec {
  std::string title;
  nlohmann::ordered_json spec;
};

// The charts for a command's JSON document (by its "schema"); empty when none fits.
std::vector<ChartSpec> ChartSpecs(const nlohmann::ordered_json& doc);

// The document as readable HTML: objects as key/value tables, arrays of objects as tables with
// one column per key, nested values recursively. Deterministic.
std::string JsonToHtml(const nlohmann::ordered_json& doc);

// `s` with &, <, > and " escaped for HTML text and attribute values.
std::string HtmlEscape(const std::string& s);

// The whole page. `command` is the registry name ("plan train"); `inputs` the request's option
// values (OptionValues); `doc` the command's --json document; `warnings` what the command warned
// (the CLI's "ndtwin: warning: ..." lines, e.g. an accuracy caveat), shown under the title.
std::string ReportHtml(const std::string& command, const nlohmann::ordered_json& inputs,
                       const nlohmann::ordered_json& doc,
                       const std::vector<std::string>& warnings = {});

// Writes `html` to `path` atomically (a temporary file beside it, then a rename); an unwritable
// path is kInvalidInput "cannot write report 'p': <reason>".
Status WriteReport(const std::string& path, const std::string& html);

}  // namespace ndt

#endif  // NDTWIN_REPORT_HTML_H_
