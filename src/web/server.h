// File: web/server.h
// `ndtwin serve`: a local web app over the command registry (cpp-httplib). Generic like the CLI:
//   POST /api/<command>   the command's name with spaces as dashes ("plan-train", "sku-show"),
//                         a JSON object of options as the body ({"tp": 8, "sku": "..."}, the
//                         --json keys); answers exactly the CLI's --json output for the same
//                         options, or HTTP 400 {"error": "<one line>"}.
//   POST /report/<command> the same, answered with the --report HTML page.
//   GET  /                the areas and the commands; GET /area/<area>: the forms of the
//                         area's commands; GET /cmd/<command>: one command's form. A form is
//                         generated from the command's options (defaults as placeholders;
//                         the report flags such as --timeline on) and its result is the report
//                         page (the same charts), with links to download both.
// Safety: binds to loopback unless told otherwise; options that name local files are refused
// (the server reads no file a request names) and so is work beyond the per-request budget
// (body size, VMs, requests simulated); requests run on --threads workers with at most --queue
// connections waiting (beyond: HTTP 503 at once); SIGINT/SIGTERM stop it cleanly.
#ifndef NDTWIN_WEB_SERVER_H_
#define NDTWIN_WEB_SERVER_H_

#include <string>

#include "cmd/command.h"

namespace ndt {

struct WebBudget {
  size_t max_body_bytes = 64 * 1024;
  int64_t max_vms = 4096;        // "vms" of any command
  int64_t max_gpus = 32768;      // "gpus" of plan and fleet: 4096 VMs of 8 GPUs
  int64_t max_requests = 20000;  // "requests" simulated by infer / plan infer
};

struct WebResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// The command a URL names ("plan-train" -> "plan train"), or nullptr.
const Command* WebCommand(const std::string& slug);
std::string WebSlug(const std::string& command_name);

// Runs `slug` with the JSON `body`: the API's answer (no sockets; the server and tests call it).
// `as_report`: the report HTML instead of the JSON.
WebResponse HandleApi(const Context& ctx, const std::string& slug, const std::string& body,
                      const WebBudget& budget, bool as_report = false);

// The pages.
std::string IndexPage();
std::string CommandPage(const Command& cmd);
// An area's page (catalog, cluster, collectives, training, inference, planners, hpc): the forms of
// its commands, each with its results and charts; "" for an unknown area.
std::string AreaPage(const std::string& slug);

// `serve` itself, a door-only command (not in Registry(): the API cannot start a server).
const Command& ServeCommand();

}  // namespace ndt

#endif  // NDTWIN_WEB_SERVER_H_
