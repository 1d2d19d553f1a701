#include "report/html.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "report/assets.h"
#include "report/charts.h"

namespace ndt {
namespace {

using Json = nlohmann::ordered_json;

// JSON text safe inside a <script> element: '<' only occurs inside strings, where \u003c reads
// back as the same character.
std::string ScriptJson(const Json& j) {
  const std::string s = j.dump();
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

using report_detail::Label;

void Render(const Json& j, std::string* out);

void RenderScalar(const Json& v, std::string* out) {
  if (v.is_string()) {
    *out += HtmlEscape(v.get<std::string>());
  } else if (v.is_null()) {
    *out += "<span class=\"null\">-</span>";
  } else if (v.is_number_float()) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.6g", v.get<double>());
    *out += "<span class=\"num\" title=\"" + v.dump() + "\" data-json=\"" + v.dump() + "\">" + buf +
            "</span>";
  } else {
    *out += "<span class=\"num\" data-json=\"" + HtmlEscape(v.dump()) + "\">" +
            HtmlEscape(v.dump()) + "</span>";
  }
}

bool TableOfObjects(const Json& a) {
  if (!a.is_array() || a.empty()) return false;
  for (const Json& e : a) {
    if (!e.is_object()) return false;
  }
  return true;
}

// A compact table ({"columns": [...], "rows": [[...], ...]}, report/timeline_json.h).
bool CompactTable(const Json& j) {
  return j.is_object() && j.contains("columns") && j["columns"].is_array() && j.contains("rows") &&
         j["rows"].is_array();
}

void Render(const Json& j, std::string* out) {
  if (CompactTable(j)) {
    // Thousands of rows: their other keys as a table, the rows counted (the charts draw them,
    // the JSON below holds them).
    Json head = Json::object();
    for (const auto& [k, v] : j.items()) {
      if (k != "rows") head[k] = v;
    }
    head["rows"] =
        std::to_string(j["rows"].size()) + " rows (drawn in the charts; all in the JSON)";
    Render(head, out);
    return;
  }
  if (j.is_object()) {
    *out += "<table class=\"kv\">";
    for (const auto& [k, v] : j.items()) {
      *out += "<tr><th>" + HtmlEscape(Label(k)) + "</th><td data-key=\"" + HtmlEscape(k) + "\">";
      Render(v, out);
      *out += "</td></tr>";
    }
    *out += "</table>";
  } else if (TableOfObjects(j)) {
    std::vector<std::string> cols;
    for (const Json& e : j) {
      for (const auto& [k, v] : e.items()) {
        if (std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
      }
    }
    *out += "<table class=\"rows\"><tr>";
    for (const std::string& c : cols) *out += "<th>" + HtmlEscape(Label(c)) + "</th>";
    *out += "</tr>";
    for (const Json& e : j) {
      *out += "<tr>";
      for (const std::string& c : cols) {
        *out += "<td>";
        if (e.contains(c)) Render(e[c], out);
        *out += "</td>";
      }
      *out += "</tr>";
    }
    *out += "</table>";
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      if (i > 0) *out += ", ";
      Render(j[i], out);
    }
  } else {
    RenderScalar(j, out);
  }
}

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:28px}
.sub{color:#666;font-size:13px}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5;font-weight:600}
table.kv>tbody>tr>th,table.kv>tr>th{white-space:nowrap}
.num{font-variant-numeric:tabular-nums}.null{color:#999}
.chart{margin:12px 0 24px 0}.chart h3{font-size:15px;margin:0 0 4px 0}
.chart p{color:#555;font-size:13px;margin:0 0 6px 0}
.warn{background:#fff3cd;border:1px solid #e0c36b;padding:8px}
pre{background:#f7f7f7;padding:8px;overflow:auto;font-size:12px;max-height:480px}
)css";

}  // namespace

std::string JsonToHtml(const Json& doc) {
  std::string out;
  Render(doc, &out);
  return out;
}

std::string ReportHtml(const std::string& command, const Json& inputs, const Json& doc,
                       const std::vector<std::string>& warnings) {
  const std::vector<ChartSpec> charts = ChartSpecs(doc);
  std::string h;
  h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  h += "<title>ndtwin " + HtmlEscape(command) + "</title>\n<style>" + std::string(kStyle) +
       "</style>\n</head><body>\n";
  h += "<h1>ndtwin " + HtmlEscape(command) + "</h1>\n";
  h += "<div class=\"sub\">ndtwin " NDT_VERSION;
  if (doc.is_object() && doc.contains("schema")) {
    h += " &middot; " +
         HtmlEscape(doc["schema"].is_string() ? doc["schema"].get<std::string>() : "");
  }
  h += " &middot; a prediction of the model, not a measurement</div>\n";
  if (!warnings.empty()) {
    h += "<h2>Warnings</h2>\n<div id=\"warnings\">";
    for (const std::string& w : warnings) h += "<p class=\"warn\">" + HtmlEscape(w) + "</p>";
    h += "</div>\n";
  }
  h += "<h2>Inputs</h2>\n<div id=\"inputs\">";
  Json shown = Json::object();
  for (const auto& [k, v] : inputs.items()) {
    const bool unset = v.is_null() || (v.is_boolean() && !v.get<bool>()) ||
                       (v.is_string() && v.get<std::string>().empty()) ||
                       (v.is_array() && v.empty());
    if (!unset) shown[k] = v;
  }
  h += shown.empty() ? std::string("<p>(defaults)</p>") : JsonToHtml(shown);
  h += "</div>\n";
  if (!charts.empty()) {
    h += "<h2>Charts</h2>\n";
    if (!HaveChartAssets()) {
      h += "<p class=\"warn\">This ndtwin was built without the charting libraries "
           "(web/node_modules: run <code>make deps</code> and rebuild); the chart specs are "
           "embedded below.</p>\n";
    }
    h += "<p class=\"sub\">Hover for values; drag to pan and scroll to zoom where the axes are "
         "numeric; double-click to reset.</p>\n";
    for (size_t i = 0; i < charts.size(); ++i) {
      h += "<div class=\"chart\"><h3>" + HtmlEscape(charts[i].title) + "</h3><p>" +
           HtmlEscape(charts[i].spec.value("description", std::string())) + "</p><div id=\"chart-" +
           std::to_string(i) + "\" class=\"vl\"></div></div>\n";
    }
  }
  h += "<h2>Results</h2>\n<div id=\"results\">" + JsonToHtml(doc) + "</div>\n";
  h += "<h2>JSON</h2>\n<details><summary>the command's --json document</summary><pre>" +
       HtmlEscape(doc.dump(2)) + "</pre></details>\n";
  h += "<script type=\"application/json\" id=\"ndt-doc\">" + ScriptJson(doc) + "</script>\n";
  h += "<script type=\"application/json\" id=\"ndt-inputs\">" + ScriptJson(inputs) + "</script>\n";
  Json specs = Json::array();
  for (const ChartSpec& c : charts) specs.push_back(c.spec);
  h += "<script type=\"application/json\" id=\"ndt-specs\">" + ScriptJson(specs) + "</script>\n";
  if (!charts.empty() && HaveChartAssets()) {
    h += "<script>" + VegaJs() + "\n</script>\n<script>" + VegaLiteJs() + "\n</script>\n<script>" +
         VegaEmbedJs() + "\n</script>\n";
    h += R"js(<script>
(function () {
  var specs = JSON.parse(document.getElementById('ndt-specs').textContent);
  var done = 0;
  specs.forEach(function (spec, i) {
    var el = document.getElementById('chart-' + i);
    vegaEmbed(el, spec, {actions: false, renderer: 'svg'}).then(function () {
      el.setAttribute('data-rendered', 'true');
    }).catch(function (e) {
      el.setAttribute('data-error', String(e));
      el.textContent = 'chart failed: ' + e;
    }).finally(function () {
      if (++done === specs.length) document.body.setAttribute('data-charts-done', 'true');
    });
  });
})();
</script>
)js";
  }
  h += "</body></html>\n";
  return h;
}

Status WriteReport(const std::string& path, const std::string& html) {
  if (path.empty())
    return Status::InvalidInput("--report needs a file name (e.g. --report r.html)");
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return Status::InvalidInput("cannot write report '" + path + "': " + std::strerror(errno));
    }
    out << html;
    out.close();
    if (!out) {
      const int err = errno;
      std::remove(tmp.c_str());
      return Status::InvalidInput("cannot write report '" + path + "': " + std::strerror(err));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return Status::InvalidInput("cannot write report '" + path + "': " + std::strerror(err));
  }
  return Status::Ok();
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace ndt
