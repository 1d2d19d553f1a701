#include "web/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "report/html.h"

namespace ndt {
namespace {

std::string Dashed(std::string s) {
  for (char& c : s) {
    if (c == '_') c = '-';
  }
  return s;
}

WebResponse Error(int status, const std::string& msg) {
  return {status, "application/json", Json{{"error", msg}}.dump() + "\n"};
}

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:22px}a{color:#0b5cad}table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f5f5f5}
input[type=text]{width:260px}.help{color:#666;font-size:12px}
#error{color:#b00;white-space:pre-wrap}#result{width:100%;height:1600px;border:1px solid #ddd}
button{font-size:14px;padding:4px 16px;margin:8px 0}
)css";

}  // namespace

std::string WebSlug(const std::string& command_name) {
  std::string s = command_name;
  for (char& c : s) {
    if (c == ' ') c = '-';
  }
  return s;
}

const Command* WebCommand(const std::string& slug) {
  for (const Command& c : Registry()) {
    if (WebSlug(c.name) == slug) return &c;
  }
  return nullptr;
}

WebResponse HandleApi(const Context& ctx, const std::string& slug, const std::string& body,
                      const WebBudget& budget, bool as_report) {
  const Command* cmd = WebCommand(slug);
  if (cmd == nullptr) return Error(404, "unknown command '" + slug + "' (see GET /)");
  if (body.size() > budget.max_body_bytes) {
    return Error(400, "request body of " + std::to_string(body.size()) +
                          " bytes is beyond this server's budget of " +
                          std::to_string(budget.max_body_bytes));
  }
  Json args = body.empty() ? Json::object() : Json::parse(body, nullptr, false);
  if (args.is_discarded() || !args.is_object()) {
    return Error(400, "the body must be a JSON object of options, e.g. {\"vms\": 2}");
  }
  std::unique_ptr<CommandRequest> req = cmd->new_request();
  OptionList options;
  req->Declare(&options);
  for (const auto& [key, value] : args.items()) {
    const Option* o = options.Find(Dashed(key));
    if (o != nullptr && o->local_file) {
      return Error(400, "'" + key +
                            "' names a local file; the web API reads and writes no files "
                            "(use a preset, or the CLI)");
    }
    // A model given by name may also be a YAML path ("--model m.yaml"): the web door takes
    // presets only, so any path-like value is refused.
    if (value.is_string()) {
      const std::string v = value.get<std::string>();
      const auto ends = [&v](const std::string& suf) {
        return v.size() >= suf.size() && v.compare(v.size() - suf.size(), suf.size(), suf) == 0;
      };
      if (v.find('/') != std::string::npos || v.find('\\') != std::string::npos || ends(".yaml") ||
          ends(".yml") || ends(".json")) {
        return Error(400, "'" + key +
                              "' looks like a file path; the web API reads no files "
                              "(use a preset name)");
      }
    }
    for (const auto& [name, limit] : {std::pair<std::string, int64_t>{"vms", budget.max_vms},
                                      {"requests", budget.max_requests}}) {
      if (Dashed(key) == name && value.is_number() && value.get<double>() > double(limit)) {
        return Error(400, "'" + key + "' = " + value.dump() +
                              " is beyond this server's per-request budget (at most " +
                              std::to_string(limit) + "); run the CLI for larger");
      }
    }
  }
  Diagnostics diag;
  StatusOr<CommandOutput> out =
      RunJson(*cmd, ctx, args, &diag, [](const std::string& o) { return "'" + o + "'"; });
  if (!out.ok()) return Error(out.status().exit_code() == 2 ? 400 : 500, out.status().message());
  if (as_report) {
    Json inputs = OptionValues(options);
    {
      // The values the request gave, over the defaults.
      std::unique_ptr<CommandRequest> bound = cmd->new_request();
      OptionList bound_options;
      bound->Declare(&bound_options);
      if (BindJson(args, &bound_options, cmd->name).ok()) inputs = OptionValues(bound_options);
    }
    return {200, "text/html; charset=utf-8", ReportHtml(cmd->name, inputs, out->json)};
  }
  return {200, "application/json", out->json.dump(2) + "\n"};
}

std::string IndexPage() {
  std::string h =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ndtwin"
      "</title><style>" +
      std::string(kStyle) +
      "</style></head><body><h1>ndtwin</h1><p>A digital twin of Azure GPU "
      "clusters. Pick a command; the API is <code>POST /api/&lt;command&gt;</code> "
      "with a JSON object of options.</p><table><tr><th>command</th><th>what it "
      "does</th><th>API</th></tr>";
  for (const Command& c : Registry()) {
    h += "<tr><td><a href=\"/cmd/" + WebSlug(c.name) + "\">" + HtmlEscape(c.name) +
         "</a></td><td>" + HtmlEscape(c.help) + "</td><td><code>POST /api/" + WebSlug(c.name) +
         "</code></td></tr>";
  }
  return h + "</table></body></html>\n";
}

std::string CommandPage(const Command& cmd) {
  std::unique_ptr<CommandRequest> req = cmd.new_request();
  OptionList options;
  req->Declare(&options);
  const Json defaults = OptionValues(options);
  const std::string slug = WebSlug(cmd.name);
  std::string h =
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>ndtwin " +
      HtmlEscape(cmd.name) + "</title><style>" + std::string(kStyle) +
      "</style></head><body><p><a href=\"/\">ndtwin</a></p><h1>" + HtmlEscape(cmd.name) +
      "</h1><p>" + HtmlEscape(cmd.help) +
      "</p><form id=\"form\"><table><tr><th>option</th><th>value</th><th>help</th></tr>";
  for (const Option& o : options.options()) {
    if (o.local_file) continue;  // the server reads no file a request names
    const std::string type = o.type_name();
    const Json& d = defaults.contains(o.name) ? defaults[o.name] : Json();
    h += "<tr><td><label for=\"f-" + o.name + "\">" + HtmlEscape(o.name) +
         (o.required ? " *" : "") + "</label></td><td>";
    if (type == "flag") {
      h += "<input type=\"checkbox\" id=\"f-" + o.name + "\" name=\"" + o.name +
           "\" data-type=\"flag\"" + (d.is_boolean() && d.get<bool>() ? " checked" : "") + ">";
    } else {
      std::string placeholder;
      if (d.is_string()) {
        placeholder = d.get<std::string>();
      } else if (d.is_array()) {
        for (const Json& e : d) placeholder += (placeholder.empty() ? "" : ",") + e.dump();
      } else if (!d.is_null()) {
        placeholder = d.dump();
      }
      h += "<input type=\"text\" id=\"f-" + o.name + "\" name=\"" + o.name + "\" data-type=\"" +
           type + "\" placeholder=\"" + HtmlEscape(placeholder) + "\">";
    }
    h += "</td><td class=\"help\">" + HtmlEscape(o.help) + "</td></tr>";
  }
  h += "</table><button type=\"submit\" id=\"run\">Run</button></form>"
       "<p><a id=\"dl-json\" download=\"" +
       slug +
       ".json\" style=\"display:none\">download the "
       "JSON</a> <a id=\"dl-report\" download=\"" +
       slug +
       ".html\" style=\"display:none\">"
       "download the report</a></p><div id=\"error\"></div>"
       "<iframe id=\"result\" title=\"result\" style=\"display:none\"></iframe>\n";
  h += "<script>const SLUG = " + Json(slug).dump() + ";\n";
  h += R"js(
function options() {
  const out = {};
  document.querySelectorAll('#form input').forEach(function (el) {
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
async function post(kind, body) {
  const r = await fetch('/' + kind + '/' + SLUG, {method: 'POST', body: body,
                                               headers: {'Content-Type': 'application/json'}});
  return {ok: r.ok, text: await r.text()};
}
document.getElementById('form').addEventListener('submit', async function (ev) {
  ev.preventDefault();
  const body = JSON.stringify(options());
  const err = document.getElementById('error');
  err.textContent = 'running...';
  document.body.removeAttribute('data-done');
  const api = await post('api', body);
  if (!api.ok) {
    err.textContent = JSON.parse(api.text).error;
    document.getElementById('result').style.display = 'none';
    document.body.setAttribute('data-done', 'error');
    return;
  }
  const rep = await post('report', body);
  err.textContent = '';
  const j = document.getElementById('dl-json');
  j.href = URL.createObjectURL(new Blob([api.text], {type: 'application/json'}));
  j.style.display = '';
  const h = document.getElementById('dl-report');
  h.href = URL.createObjectURL(new Blob([rep.text], {type: 'text/html'}));
  h.style.display = '';
  const frame = document.getElementById('result');
  frame.style.display = '';
  frame.onload = function () { document.body.setAttribute('data-done', 'ok'); };
  frame.srcdoc = rep.text;
});
</script></body></html>
)js";
  return h;
}

namespace {

struct ServeRequest : CommandRequest {
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 4;
  int64_t max_vms = WebBudget().max_vms;
  int64_t max_requests = WebBudget().max_requests;
  void Declare(OptionList* o) override {
    o->Add("host", &host, "Address to listen on (default 127.0.0.1: this machine only)");
    o->Add("port", &port, "TCP port (default 8080)");
    o->Add("threads", &threads, "Requests served at once (default 4)");
    o->Add("max-vms", &max_vms, "Per-request budget: the most VMs a request may ask for");
    o->Add("max-requests", &max_requests,
           "Per-request budget: the most inference requests a request may simulate");
  }
};

std::atomic<bool> g_stop{false};
extern "C" void OnSignal(int) { g_stop = true; }

StatusOr<CommandOutput> RunServe(const Context& ctx, const ServeRequest& r, Diagnostics* diag) {
  if (r.port < 0 || r.port > 65535) {
    return Status::InvalidInput("--port must be 0..65535 (got " + std::to_string(r.port) + ")");
  }
  if (r.threads < 1 || r.threads > 64) {
    return Status::InvalidInput("--threads must be 1..64 (got " + std::to_string(r.threads) + ")");
  }
  WebBudget budget;
  budget.max_vms = r.max_vms;
  budget.max_requests = r.max_requests;
  httplib::Server svr;
  const int threads = r.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Bodies a little over the budget reach HandleApi for its message; far over, httplib's 413.
  svr.set_payload_max_length(4 * budget.max_body_bytes);
  svr.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      res.set_content(Json{{"error", "HTTP " + std::to_string(res.status)}}.dump() + "\n",
                      "application/json");
    }
  });
  svr.set_read_timeout(10, 0);
  svr.set_write_timeout(10, 0);
  auto send = [](httplib::Response& res, const WebResponse& w) {
    res.status = w.status;
    res.set_content(w.body, w.content_type.c_str());
  };
  svr.Get("/", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(IndexPage(), "text/html; charset=utf-8");
  });
  svr.Get(R"(/cmd/([a-z0-9-]+))", [&](const httplib::Request& req, httplib::Response& res) {
    const Command* c = WebCommand(req.matches[1]);
    if (c == nullptr) return send(res, Error(404, "unknown command"));
    res.set_content(CommandPage(*c), "text/html; charset=utf-8");
  });
  svr.Post(R"(/api/([a-z0-9-]+))", [&](const httplib::Request& req, httplib::Response& res) {
    send(res, HandleApi(ctx, req.matches[1], req.body, budget));
  });
  svr.Post(R"(/report/([a-z0-9-]+))", [&](const httplib::Request& req, httplib::Response& res) {
    send(res, HandleApi(ctx, req.matches[1], req.body, budget, /*as_report=*/true));
  });
  svr.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(Json{{"error", "internal error"}}.dump() + "\n", "application/json");
      });
  const int port = r.port == 0 ? svr.bind_to_any_port(r.host) : r.port;
  if (r.port != 0 && !svr.bind_to_port(r.host, r.port)) {
    return Status::InvalidInput("cannot listen on " + r.host + ":" + std::to_string(r.port));
  }
  if (port < 0) return Status::InvalidInput("cannot listen on " + r.host);
  g_stop = false;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
  std::thread watcher([&svr] {
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    svr.stop();
  });
  diag->Note("ndtwin serve: listening on http://" + r.host + ":" + std::to_string(port) +
             "/ (Ctrl-C stops)");
  const bool ok = svr.listen_after_bind();
  g_stop = true;
  watcher.join();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (!ok) return Status::InvalidInput("the server stopped on an error");
  CommandOutput out;
  out.json = Json{{"schema", "ndtwin.serve/1"}, {"stopped", true}};
  out.text = "ndtwin serve: stopped\n";
  return out;
}

}  // namespace

const Command& ServeCommand() {
  static const Command c = MakeCommand<ServeRequest>(
      "serve", "Local web app and JSON API over every command (POST /api/<command>)", RunServe);
  return c;
}

}  // namespace ndt
