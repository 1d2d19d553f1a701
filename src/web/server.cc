// File: web/server.cc
// The web app's JSON API (HandleApi) and the `serve` command (the HTTP server, its bounded
// queue); the HTML pages are pages.cc.
#include "web/server.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <deque>
#include <mutex>
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

// BindJson's message ("train: option 'min-bytes' takes ...", "topo: unknown option 'x'; valid:
// ...") in the web's words: "'min_bytes' takes ...", the key as `args` spelled it; the
// command's prefix dropped (the URL names it), "option" becomes "field".
std::string WebSpelling(std::string msg, const Json& args, const std::string& command) {
  if (msg.rfind(command + ": ", 0) == 0) msg = msg.substr(command.size() + 2);
  const auto replace = [&msg](const std::string& from, const std::string& to) {
    if (const size_t at = msg.find(from); at != std::string::npos) msg.replace(at, from.size(), to);
  };
  replace("unknown option '", "unknown field '");
  for (const auto& [key, value] : args.items())
    replace("option '" + Dashed(key) + "'", "'" + key + "'");
  replace("option '", "'");
  return msg;
}

WebResponse Error(int status, const std::string& msg) {
  return {status, "application/json", Json{{"error", msg}}.dump() + "\n"};
}

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
    // presets only, so any path-like value is refused. Only where a file may be named: other
    // values hold slashes of their own ("storage_bw": "2 TB/s" was refused as a path).
    if (value.is_string() && o != nullptr && o->preset_or_file) {
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
    // --gpus sizes a cluster as --vms does (plan train --gpus 131072 is 16,384 VMs of 8 GPUs,
    // 131,072 of 1): without its own limit it went around the VMs' budget.
    for (const auto& [name, limit] : {std::pair<std::string, int64_t>{"vms", budget.max_vms},
                                      {"gpus", budget.max_gpus},
                                      {"requests", budget.max_requests}}) {
      if (Dashed(key) == name && value.is_number() && value.get<double>() > double(limit)) {
        return Error(400, "'" + key + "' = " + value.dump() +
                              " is beyond this server's per-request budget (at most " +
                              std::to_string(limit) + "); run the CLI for larger");
      }
    }
  }
  // --gpus on a size of few GPUs per VM is many VMs: `plan train --gpus 64 --sku NG8` is 64
  // VMs of 1 GPU, within a budget of 64 GPUs but not of 8 VMs. The VMs implied are the GPUs over
  // the GPUs per VM of each size the request names (--sku, or each of a --skus list), rounded
  // up; an unknown size is left to the command's own error.
  for (const auto& [gkey, gvalue] : args.items()) {
    if (Dashed(gkey) != "gpus" || !gvalue.is_number() || gvalue.get<double>() <= 0) continue;
    const double gpus = gvalue.get<double>();
    for (const auto& [skey, svalue] : args.items()) {
      if ((Dashed(skey) != "sku" && Dashed(skey) != "skus") || !svalue.is_string()) continue;
      std::string list = svalue.get<std::string>();
      for (size_t start = 0; start <= list.size();) {
        size_t end = list.find(',', start);
        if (end == std::string::npos) end = list.size();
        std::string name = list.substr(start, end - start);
        start = end + 1;
        name.erase(0, name.find_first_not_of(' '));
        name.erase(name.find_last_not_of(' ') + 1);
        StatusOr<const SkuSpec*> sku = ctx.catalog.FindSku(name);
        if (name.empty() || !sku.ok() || (*sku)->gpus <= 0) continue;
        const double vms = std::ceil(gpus / (*sku)->gpus);
        if (vms > double(budget.max_vms)) {
          return Error(400, "'" + gkey + "' = " + gvalue.dump() + " on " + name + " (" +
                                std::to_string((*sku)->gpus) +
                                ((*sku)->gpus == 1 ? " GPU" : " GPUs") + " per VM) is " +
                                std::to_string(int64_t(vms)) +
                                " VMs, beyond this server's per-request budget (at most " +
                                std::to_string(budget.max_vms) + " VMs); run the CLI for larger");
        }
      }
    }
  }
  {
    // Binding errors in the web's spelling: the key as the request sent it ("min_bytes"), not
    // the option's dashed name.
    std::unique_ptr<CommandRequest> probe = cmd->new_request();
    OptionList probe_options;
    probe->Declare(&probe_options);
    if (Status st = BindJson(args, &probe_options, cmd->name); !st.ok()) {
      return Error(400, WebSpelling(st.message(), args, cmd->name));
    }
  }
  Diagnostics diag;
  StatusOr<CommandOutput> out = RunJson(*cmd, ctx, args, &diag, [&args](const std::string& o) {
    // The option as the request spelled its key ("min_bytes"), else its dashed name.
    for (const auto& [key, value] : args.items()) {
      if (Dashed(key) == o) return "'" + key + "'";
    }
    return "'" + o + "'";
  });
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
    return {200, "text/html; charset=utf-8",
            ReportHtml(cmd->name, inputs, out->json, diag.warnings)};
  }
  return {200, "application/json", out->json.dump(2) + "\n"};
}

namespace {

struct ServeRequest : CommandRequest {
  std::string host = "127.0.0.1";
  int port = 8080;
  int threads = 4;
  int queue = 16;
  int64_t max_vms = WebBudget().max_vms;
  int64_t max_gpus = WebBudget().max_gpus;
  int64_t max_requests = WebBudget().max_requests;
  void Declare(OptionList* o) override {
    o->Add("host", &host, "Address to listen on (default 127.0.0.1: this machine only)");
    o->Add("port", &port, "TCP port (default 8080)");
    o->Add("threads", &threads, "Requests served at once (default 4)");
    o->Add("queue", &queue,
           "Connections that may wait for a thread (default 16); beyond, HTTP 503 at once");
    o->Add("max-vms", &max_vms,
           "Per-request budget: the most VMs a request may ask for (default " +
               std::to_string(max_vms) + ")");
    o->Add("max-gpus", &max_gpus,
           "Per-request budget: the most GPUs a request may ask for with --gpus (default " +
               std::to_string(max_gpus) + ")");
    o->Add("max-requests", &max_requests,
           "Per-request budget: the most inference requests a request may simulate (default " +
               std::to_string(max_requests) + ")");
  }
};

// The request queue. Connections run on `threads` workers; at most `max_queued` wait for one.
// Beyond that a connection goes to the refusal lane: one thread on which every request is
// answered 503 without running anything (httplib 0.11's TaskQueue::enqueue cannot refuse: the
// task owns the socket, so it must run somewhere to close it).
thread_local bool t_refusing = false;

class BoundedQueue : public httplib::TaskQueue {
 public:
  BoundedQueue(int threads, size_t max_queued) : max_queued_(max_queued) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { Work(&jobs_); });
    workers_.emplace_back([this] {
      t_refusing = true;
      Work(&refused_);
    });
  }
  ~BoundedQueue() override = default;
  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (jobs_.size() < max_queued_ + idle_) {
        jobs_.push_back(std::move(fn));
      } else {
        refused_.push_back(std::move(fn));
      }
    }
    cv_.notify_all();
  }
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

 private:
  void Work(std::deque<std::function<void()>>* q) {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mu_);
        const bool worker = q == &jobs_;
        if (worker) ++idle_;
        cv_.wait(lock, [&] { return !q->empty() || shutdown_; });
        if (worker) --idle_;
        if (q->empty()) return;  // shut down with nothing left
        fn = std::move(q->front());
        q->pop_front();
      }
      fn();
    }
  }

  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_, refused_;
  size_t idle_ = 0;
  bool shutdown_ = false;
  std::vector<std::thread> workers_;
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
  if (r.queue < 0 || r.queue > 4096) {
    return Status::InvalidInput("--queue must be 0..4096 (got " + std::to_string(r.queue) + ")");
  }
  WebBudget budget;
  budget.max_vms = r.max_vms;
  budget.max_gpus = r.max_gpus;
  budget.max_requests = r.max_requests;
  httplib::Server svr;
  const int threads = r.threads;
  const int queue = r.queue;
  svr.new_task_queue = [threads, queue] {
    return new BoundedQueue(threads, static_cast<size_t>(queue));
  };
  svr.set_pre_routing_handler([threads, queue](const httplib::Request&, httplib::Response& res) {
    if (!t_refusing) return httplib::Server::HandlerResponse::Unhandled;
    res.status = 503;
    res.set_header("Retry-After", "1");
    res.set_content(
        Json{{"error", "server busy: " + std::to_string(threads) + " requests running and " +
                           std::to_string(queue) + " waiting (--threads, --queue); try again"}}
                .dump() +
            "\n",
        "application/json");
    return httplib::Server::HandlerResponse::Handled;
  });
  // Bodies a little over the budget reach HandleApi for its message; far over, httplib's 413.
  svr.set_payload_max_length(4 * budget.max_body_bytes);
  // What httplib answers on its own (no route, a method it has no handler for) says where to go:
  // it was {"error": "HTTP 404"}.
  svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.body.empty()) {
      res.set_content(
          Json{{"error", "HTTP " + std::to_string(res.status) + ": no " + req.method + " " +
                             req.path + " (see GET /; the API is POST /api/<command>)"}}
                  .dump() +
              "\n",
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
  svr.Get(R"(/area/([a-z0-9-]+))", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string page = AreaPage(req.matches[1]);
    if (page.empty()) return send(res, Error(404, "unknown area (see GET /)"));
    res.set_content(page, "text/html; charset=utf-8");
  });
  // An API URL opened in a browser (GET): say how to call it, with 405 and Allow as HTTP asks.
  svr.Get(R"(/(api|report)/([a-z0-9-]+))", [&](const httplib::Request& req,
                                               httplib::Response& res) {
    const std::string slug = req.matches[2];
    if (WebCommand(slug) == nullptr) {
      return send(res, Error(404, "unknown command '" + slug + "' (see GET /)"));
    }
    res.set_header("Allow", "POST");
    send(res, Error(405, "use POST " + req.path +
                             " with a JSON object of options as the body, e.g. {\"vms\": 2} (the "
                             "form is GET /cmd/" +
                             slug + ")"));
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
