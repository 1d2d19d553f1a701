#include "cli/cli.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cli/commands.h"

namespace ndt {
namespace {

// The table of subcommands (ninja's kTools). Add new commands here and in cli/commands.h.
const CommandDef kCommands[] = {
    {"sku", "List and show Azure GPU VM sizes (the hardware catalog)", SetupSku},
    {"topo", "Build the cluster graph of N VMs of a size and summarize it", SetupTopo},
    {"collective", "Time a collective over a message-size sweep, like nccl-tests", SetupCollective},
    {"model", "List and show transformer model presets", SetupModel},
    {"train", "Simulate one training iteration: time, memory, MFU, trace", SetupTrain},
    {"infer", "Simulate an LLM inference service: throughput, TTFT, TPOT", SetupInfer},
    {"plan", "Search VM sizes, counts and strategies for the best training plan", SetupPlan},
    {"validate", "Reproduce published measurements and print the error table", SetupValidate},
};

// Every floating-point flag must be a finite number: "inf", "nan" or 1e999 would run the model
// on a value no hardware or workload has (and some loops never end on them).
void RequireFinite(CLI::App* app) {
  CLI::Validator finite(
      [](std::string& v) {
        double x = std::strtod(v.c_str(), nullptr);
        return std::isfinite(x) ? std::string() : "'" + v + "' is not a finite number";
      },
      "");
  for (CLI::Option* o : app->get_options()) {
    if (o->get_type_name() == "FLOAT") o->check(finite);
  }
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) RequireFinite(sub);
}

}  // namespace

void Warn(const std::string& msg) { std::fprintf(stderr, "ndtwin: warning: %s\n", msg.c_str()); }

int RunCli(int argc, char** argv) {
  CLI::App app{"ndtwin: a digital twin of Azure ND/NG GPU supercomputers"};
  app.require_subcommand(1);
  GlobalOptions global;
  app.add_flag("--json", global.json, "Print results as JSON");
  app.add_option("--hw-data", global.data_dir,
                 "Hardware data directory (default: the built-in data/)");
  app.set_version_flag("--version", std::string("ndtwin ") + NDT_VERSION);
  std::vector<std::pair<CLI::App*, CommandRun>> runs;
  for (const CommandDef& def : kCommands) {
    CLI::App* sub = app.add_subcommand(def.name, def.help);
    sub->fallthrough();
    runs.emplace_back(sub, def.setup(sub));
  }
  RequireFinite(&app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the subcommand's own help when one was named; name the commands when none was.
    std::string cmd, names;
    for (const CommandDef& def : kCommands) {
      names += (names.empty() ? "" : ", ") + std::string(def.name);
      for (int i = 1; i < argc && cmd.empty(); ++i) {
        if (argv[i] == std::string(def.name)) cmd = def.name;
      }
    }
    std::string what = e.what();
    if (cmd.empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      std::string first;
      for (int i = 1; i < argc && first.empty(); ++i) {
        const bool value_of_global = i > 1 && argv[i - 1] == std::string("--hw-data");
        if (argv[i][0] != '-' && !value_of_global) first = argv[i];
      }
      what = first.empty() ? "give a command: " + names
                           : "unknown command '" + first + "'; use one of: " + names;
    }
    std::fprintf(stderr, "ndtwin: error: %s (see: ndtwin %s--help)\n", what.c_str(),
                 cmd.empty() ? "" : (cmd + " ").c_str());
    return 2;
  }
  for (auto& [sub, run] : runs) {
    if (!sub->parsed()) continue;
    Status s = run(global);
    if (!s.ok()) {
      std::fprintf(stderr, "ndtwin: error: %s\n", s.message().c_str());
      return s.exit_code();
    }
    return 0;
  }
  return 2;
}

}  // namespace ndt
