#include "cmd/command.h"

#include "cmd/registry.h"

namespace ndt {

const std::vector<Command>& Registry() {
  // The order of `ndtwin --help` (ninja's kTools): catalog, cluster, network, models, workloads.
  static const std::vector<Command> kRegistry = {
      SkuListCommand(),   SkuShowCommand(),   TopoCommand(),  CollectiveCommand(),
      ModelListCommand(), ModelShowCommand(), TrainCommand(), InferCommand(),
      PlanTrainCommand(), PlanInferCommand(), FleetCommand(), ValidateCommand(),
      SweepCommand(),     HpcCommand(),
  };
  return kRegistry;
}

const Command* FindCommand(const std::string& name) {
  for (const Command& c : Registry()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string Respell(const std::string& text, const OptionList& options,
                    const OptionSpelling& spell) {
  auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (text.compare(i, 2, "--") == 0 && (i == 0 || !word(text[i - 1]))) {
      size_t j = i + 2;
      while (j < text.size() && word(text[j])) ++j;
      const std::string name = text.substr(i + 2, j - i - 2);
      if (options.Find(name) != nullptr) {
        out += spell(name);
        i = j;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

StatusOr<CommandOutput> RunJson(const Command& cmd, const Context& ctx, const Json& args,
                                Diagnostics* diag, const OptionSpelling& spell) {
  std::unique_ptr<CommandRequest> req = cmd.new_request();
  OptionList options;
  req->Declare(&options);
  NDT_RETURN_IF_ERROR(BindJson(args, &options, cmd.name));
  if (Status s = CheckRanges(options); !s.ok()) {
    return spell ? s.WithMessage(Respell(s.message(), options, spell)) : s;
  }
  if (!spell) return cmd.run(ctx, *req, diag);
  // Warnings and the error in the door's spelling.
  class Respelling : public Diagnostics {
   public:
    Respelling(Diagnostics* to, const OptionList& o, const OptionSpelling& s)
        : to_(to), o_(o), s_(s) {}
    void Warn(const std::string& msg) override { to_->Warn(Respell(msg, o_, s_)); }
    void Note(const std::string& line) override { to_->Note(line); }
    void Progress(const std::string& line) override { to_->Progress(line); }

   private:
    Diagnostics* to_;
    const OptionList& o_;
    const OptionSpelling& s_;
  } respelling(diag, options, spell);
  StatusOr<CommandOutput> out = cmd.run(ctx, *req, &respelling);
  if (!out.ok()) return out.status().WithMessage(Respell(out.status().message(), options, spell));
  return out;
}

}  // namespace ndt
