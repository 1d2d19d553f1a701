// File: web/pages.cc
// The web app's HTML pages (web/server.h): the index, one page per area, one per command, each
// with its forms; the API and the server are server.cc.
#include <string>
#include <vector>

#include "report/html.h"
#include "web/server.h"

namespace ndt {
namespace {

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}a{color:#0b5cad}table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f5f5f5}
input[type=text]{width:260px}.help{color:#666;font-size:12px}
.error{color:#b00;white-space:pre-wrap}.result{width:100%;height:1600px;border:1px solid #ddd}
nav{font-size:14px;margin-bottom:12px}section.cmd{margin-bottom:32px}
button{font-size:14px;padding:4px 16px;margin:8px 0}
)css";

// The pages' areas: each groups the commands of one question, with their forms on one page.
// Commands in no area (fleet, validate, sweep, ...) have their own page, listed on the index.
struct Area {
  const char* slug;
  const char* title;
  const char* blurb;
  std::vector<std::string> commands;
};

const std::vector<Area>& Areas() {
  static const std::vector<Area> kAreas = {
      {"catalog",
       "Catalog",
       "The VM sizes, their GPUs and prices, and the model presets.",
       {"sku list", "sku show", "model list", "model show"}},
      {"cluster",
       "Cluster",
       "A cluster's graph: NVLink domains, NICs, the fat tree's tiers.",
       {"topo"}},
      {"collectives",
       "Collectives",
       "NCCL collectives on a cluster: bus bandwidth and latency against message size, with the "
       "algorithm NCCL would pick.",
       {"collective"}},
      {"training",
       "Training",
       "One training iteration: step time, MFU, memory per GPU, where the time goes and the "
       "pipeline's timeline.",
       {"train"}},
      {"inference",
       "Inference",
       "An inference service under load: throughput, TTFT and TPOT distributions, batch size and "
       "KV-cache use over time.",
       {"infer"}},
      {"planners",
       "Planners",
       "Search sizes, counts and strategies: every configuration scored, and the Pareto "
       "frontier of time and cost.",
       {"plan train", "plan infer"}},
      {"hpc",
       "HPC",
       "HPC benchmarks on the GPUs: HPL and HPL-MxP, HPCG, STREAM (HBM and host DRAM), OSU MPI "
       "latency, bandwidth and allreduce over message size, and a stencil's weak and strong "
       "scaling.",
       {"hpc"}},
  };
  return kAreas;
}

std::string PageHead(const std::string& title) {
  std::string h = "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
                  HtmlEscape(title) + "</title><style>" + std::string(kStyle) +
                  "</style></head><body><nav><a href=\"/\">ndtwin</a>";
  for (const Area& a : Areas()) {
    h += " &middot; <a href=\"/area/" + std::string(a.slug) + "\">" + a.title + "</a>";
  }
  return h + "</nav>\n";
}

// One command's form, its result frame and download links; element ids start with `prefix`.
std::string FormBlock(const Command& cmd, const std::string& prefix) {
  std::unique_ptr<CommandRequest> req = cmd.new_request();
  OptionList options;
  req->Declare(&options);
  const Json defaults = OptionValues(options);
  const std::string slug = WebSlug(cmd.name);
  std::string h = "<section class=\"cmd\" id=\"" + prefix + "section\"><h2>" +
                  HtmlEscape(cmd.name) + "</h2><p>" + HtmlEscape(cmd.help) +
                  " <span class=\"help\">(API: <code>POST /api/" + slug +
                  "</code>)</span></p><form class=\"ndt-form\" id=\"" + prefix +
                  "form\" data-slug=\"" + slug + "\" data-prefix=\"" + prefix +
                  "\"><table><tr><th>option</th><th>value</th><th>help</th></tr>";
  for (const Option& o : options.options()) {
    if (o.local_file) continue;  // the server reads no file a request names
    const std::string type = o.type_name();
    const std::string id = prefix + "f-" + o.name;
    const Json& d = defaults.contains(o.name) ? defaults[o.name] : Json();
    h += "<tr><td><label for=\"" + id + "\">" + HtmlEscape(o.name) + (o.required ? " *" : "") +
         "</label></td><td>";
    if (type == std::string("flag")) {
      h += "<input type=\"checkbox\" id=\"" + id + "\" name=\"" + o.name + "\" data-type=\"flag\"" +
           ((d.is_boolean() && d.get<bool>()) || o.for_report ? " checked" : "") + ">";
    } else {
      std::string placeholder;
      if (d.is_string()) {
        placeholder = d.get<std::string>();
      } else if (d.is_array()) {
        for (const Json& e : d) placeholder += (placeholder.empty() ? "" : ",") + e.dump();
      } else if (!d.is_null()) {
        placeholder = d.dump();
      }
      h += "<input type=\"text\" id=\"" + id + "\" name=\"" + o.name + "\" data-type=\"" + type +
           "\" placeholder=\"" + HtmlEscape(placeholder) + "\">";
    }
    h += "</td><td class=\"help\">" + HtmlEscape(o.help) + "</td></tr>";
  }
  h += "</table><button type=\"submit\" id=\"" + prefix + "run\">Run " + HtmlEscape(cmd.name) +
       "</button></form><p><a id=\"" + prefix + "dl-json\" download=\"" + slug +
       ".json\" style=\"display:none\">download the JSON</a> <a id=\"" + prefix +
       "dl-report\" download=\"" + slug +
       ".html\" style=\"display:none\">download the report</a></p><div class=\"error\" id=\"" +
       prefix + "error\"></div><iframe class=\"result\" id=\"" + prefix +
       "result\" title=\"result of " + HtmlEscape(cmd.name) +
       "\" style=\"display:none\"></iframe></section>\n";
  return h;
}

// Binds every form on the page: the API's JSON, then the report page into the frame.
constexpr const char* kFormScript = R"js(<script>
function ndtOptions(form) {
  const out = {};
  form.querySelectorAll('input').forEach(function (el) {
    const t = el.dataset.type;
    if (t === 'flag') { if (el.checked) out[el.name] = true; return; }
    const v = el.value.trim();
    if (v === '') return;
    if (t === 'int' || t === 'float') out[el.name] = Number(v);
    else if (t === 'list') out[el.name] = v.split(',').map(function (s) { return s.trim(); });
    else out[el.name] = v;
  });
  return out;
}
async function ndtPost(kind, slug, body) {
  const r = await fetch('/' + kind + '/' + slug, {method: 'POST', body: body,
                                               headers: {'Content-Type': 'application/json'}});
  return {ok: r.ok, text: await r.text()};
}
document.querySelectorAll('form.ndt-form').forEach(function (form) {
  // getAttribute: a form's properties include its inputs by name (infer has one named dataset).
  const slug = form.getAttribute('data-slug'), p = form.getAttribute('data-prefix');
  const $ = function (id) { return document.getElementById(p + id); };
  const done = function (state) {
    $('section').setAttribute('data-done', state);
    document.body.setAttribute('data-done', state);
  };
  form.addEventListener('submit', async function (ev) {
    ev.preventDefault();
    const body = JSON.stringify(ndtOptions(form));
    const err = $('error');
    err.textContent = 'running...';
    $('section').removeAttribute('data-done');
    document.body.removeAttribute('data-done');
    const api = await ndtPost('api', slug, body);
    if (!api.ok) {
      let msg = api.text;
      try { msg = JSON.parse(api.text).error; } catch (e) {}
      err.textContent = msg;
      $('result').style.display = 'none';
      done('error');
      return;
    }
    const rep = await ndtPost('report', slug, body);
    err.textContent = '';
    const j = $('dl-json');
    j.href = URL.createObjectURL(new Blob([api.text], {type: 'application/json'}));
    j.style.display = '';
    const h = $('dl-report');
    h.href = URL.createObjectURL(new Blob([rep.text], {type: 'text/html'}));
    h.style.display = '';
    const frame = $('result');
    frame.style.display = '';
    frame.onload = function () { done('ok'); };
    frame.srcdoc = rep.text;
  });
});
</script></body></html>
)js";

}  // namespace

std::string IndexPage() {
  std::string h = PageHead("ndtwin") +
                  "<h1>ndtwin</h1><p>A digital twin of Azure GPU clusters: predictions of a model, "
                  "not measurements. Pick an area; the API is <code>POST "
                  "/api/&lt;command&gt;</code> with a JSON object of options.</p><table><tr><th>"
                  "area</th><th>what it answers</th><th>commands</th></tr>";
  for (const Area& a : Areas()) {
    h += "<tr><td><a href=\"/area/" + std::string(a.slug) + "\">" + a.title + "</a></td><td>" +
         HtmlEscape(a.blurb) + "</td><td>";
    for (size_t i = 0; i < a.commands.size(); ++i) {
      h += (i ? ", " : "") + std::string("<a href=\"/cmd/") + WebSlug(a.commands[i]) + "\">" +
           HtmlEscape(a.commands[i]) + "</a>";
    }
    h += "</td></tr>";
  }
  h += "</table><h2>Every command</h2><table><tr><th>command</th><th>what it does</th><th>API"
       "</th></tr>";
  for (const Command& c : Registry()) {
    h += "<tr><td><a href=\"/cmd/" + WebSlug(c.name) + "\">" + HtmlEscape(c.name) +
         "</a></td><td>" + HtmlEscape(c.help) + "</td><td><code>POST /api/" + WebSlug(c.name) +
         "</code></td></tr>";
  }
  return h + "</table></body></html>\n";
}

std::string AreaPage(const std::string& slug) {
  for (const Area& a : Areas()) {
    if (slug != a.slug) continue;
    std::string h = PageHead(std::string("ndtwin: ") + a.title) + "<h1>" + a.title + "</h1><p>" +
                    HtmlEscape(a.blurb) + "</p>";
    for (const std::string& name : a.commands) {
      if (const Command* c = FindCommand(name)) h += FormBlock(*c, WebSlug(name) + "-");
    }
    return h + kFormScript;
  }
  return "";
}

std::string CommandPage(const Command& cmd) {
  return PageHead("ndtwin " + cmd.name) + "<h1>" + HtmlEscape(cmd.name) + "</h1>" +
         FormBlock(cmd, "") + kFormScript;
}

}  // namespace ndt
