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
  bool for_report = false;  // a flag adding the data of a report's charts to the JSON (a
                            // timeline): --report and the web's forms turn it on
  // A preset's name or a file's path (--model, --dataset): the web door takes the names and
  // refuses a value that looks like a path.
  bool preset_or_file = false;
  // Numeric options: the inclusive range every value must lie in, given or default (omitted
  // optionals are not checked). Every door applies it through CheckRanges before the command
  // runs, so no value outside it reaches the library. `range_note` follows the message
  // ("omit it to choose it automatically").
  std::optional<double> min, max;
  std::string range_note;

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
  Option& PresetOrFile() {
    preset_or_file = true;
    return *this;
  }
  Option& ForReport() {
    for_report = true;
    return *this;
  }
  // Declares the inclusive range lo..hi of a numeric option (physically meaningful values).
  Option& Range(double lo, double hi, std::string note = "") {
    min = lo;
    max = hi;
    range_note = std::move(note);
    return *this;
  }
  // "int", "float", "string", "flag", "list": the kind of value the option takes.
  const char* type_name() const;
};

class OptionList {
 public:
  template <typename T>
  Option& Add(std::string name, T* field, std::string help) {
    Option o;
    o.name = std::move(name);
    o.help = std::move(help);
    o.field = OptionField(field);
    options_.push_back(std::move(o));
    return options_.back();
  }
  std::vector<Option>& options() { return options_; }
  const std::vector<Option>& options() const { return options_; }
  const Option* Find(const std::string& name) const;
  Option* Find(const std::string& name);
  // Range() on an option declared elsewhere (a shared group, another line); REQUIRES: declared.
  void Range(const std::string& name, double lo, double hi, std::string note = "");

 private:
  std::vector<Option> options_;
};

// Fills the options from a JSON object whose keys are option names (dashes or underscores):
// numbers for numeric options, strings for text, booleans for flags, arrays of strings for
// lists. An unknown key, a wrong type, a non-integer for an integer option or a missing
// required option is one kInvalidInput line naming the option (spelled by `spell`, e.g.
// "--tp" for the CLI, "tp=" for Python).
Status BindJson(const Json& args, OptionList* options, const std::string& command);

// Checks every numeric option against its Range: the first value outside is one kInvalidInput
// line "--NAME must be in LO..HI (got V)[; NOTE]" (CLI spelling; doors respell). A double that
// is not finite is outside every range. Doors call it after binding, before Run.
Status CheckRanges(const OptionList& options);

// Sets every ForReport() flag (a report asks for the data of its charts).
void EnableReportOptions(OptionList* options);

// The request's options with their current values, as a JSON object (omitted optionals are
// null): what a door shows as the defaults.
Json OptionValues(const OptionList& options);

}  // namespace ndt

#endif  // NDTWIN_CMD_OPTIONS_H_
