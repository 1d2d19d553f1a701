// File: cmd/options.h
// The options of a command, declared once and bound by every door. A request struct (plain
// values with in-class defaults) lists its options in Declare(OptionList*): each option is a
// name ("tp", "min-bytes"), a help line and a pointer to the field it fills. The CLI turns the
// list into flags (--tp), Python into keyword arguments (tp=), the web API and sweeps into JSON
// keys ("tp"); none of them knows a command's fields. std::optional fields mean "omitted: the
// command chooses"; plain fields keep their default when omitted.
//
// Example:
//   struct FooRequest {
//     int tp = 1;
//     std::optional<int64_t> mbs;
//     void Declare(OptionList* o) {
//       o->Add("tp", &tp, "Tensor parallel degree (default 1)");
//       o->Add("mbs", &mbs, "Micro-batch size (default: best feasible)");
//     }
//   };
#ifndef NDTWIN_CMD_OPTIONS_H_
#define NDTWIN_CMD_OPTIONS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"

namespace ndt {

using Json = nlohmann::ordered_json;

// Where an option's value goes.
using OptionField =
    std::variant<int*, int64_t*, uint64_t*, double*, std::string*, bool*, std::vector<std::string>*,
                 std::optional<int>*, std::optional<int64_t>*, std::optional<double>*,
                 std::optional<std::string>*, std::optional<bool>*>;

struct Option {
  std::string name;  // dashed, without "--": "min-bytes"
  std::string help;
  OptionField field;
  bool required = false;
  bool positional = false;  // the CLI takes it without a flag name (sku show NAME)
  bool local_file = false;  // names a file the command reads or writes (refused by the web door)

  Option& Required() {
    required = true;
    return *this;
  }
  Option& Positional() {
    positional = true;
    return *this;
  }
  Option& LocalFile() {
    local_file = true;
    return *this;
  }
  // "int", "float", "string", "flag", "list": the kind of value the option takes.
  const char* type_name() const;
};

class OptionList {
 public:
  template <typename T>
  Option& Add(std::string name, T* field, std::string help) {
    options_.push_back(Option{std::move(name), std::move(help), OptionField(field)});
    return options_.back();
  }
  std::vector<Option>& options() { return options_; }
  const std::vector<Option>& options() const { return options_; }
  const Option* Find(const std::string& name) const;

 private:
  std::vector<Option> options_;
};

// Fills the options from a JSON object whose keys are option names (dashes or underscores):
// numbers for numeric options, strings for text, booleans for flags, arrays of strings for
// lists. An unknown key, a wrong type, a non-integer for an integer option or a missing
// required option is one kInvalidInput line naming the option (spelled by `spell`, e.g.
// "--tp" for the CLI, "tp=" for Python).
Status BindJson(const Json& args, OptionList* options, const std::string& command);

// The request's options with their current values, as a JSON object (omitted optionals are
// null): what a door shows as the defaults.
Json OptionValues(const OptionList& options);

}  // namespace ndt

#endif  // NDTWIN_CMD_OPTIONS_H_
