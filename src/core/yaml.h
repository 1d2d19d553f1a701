// File: core/yaml.h
// Strict YAML reading: every error is one line "file:line: key: what is wrong; how to fix".
// An unknown key, a missing required key, a wrong type, a unit-less quantity, a duplicate key
// or a number that is not finite (.nan, .inf) is an error. yaml-cpp's exceptions are caught here
// and never leave this module. Usage:
//   NDT_ASSIGN_OR_RETURN(YamlMap m, LoadYamlMapFile(path));
//   NDT_ASSIGN_OR_RETURN(std::string name, m.String("name"));
//   NDT_ASSIGN_OR_RETURN(Sourced bw, m.Quantity("memory_bw", Dim::kBandwidth));
//   NDT_RETURN_IF_ERROR(m.Finish());   // rejects keys nobody asked for
#ifndef NDTWIN_CORE_YAML_H_
#define NDTWIN_CORE_YAML_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/units.h"

namespace ndt {

// A number in SI units with the source it came from ("" if the file gave none).
struct Sourced {
  double value = 0;
  std::string source;
};

// A view of one YAML mapping that records which keys were read, so Finish() can reject the
// rest. Copies share the record of read keys. Not thread-safe.
class YamlMap {
 public:
  // REQUIRES: node is a map (use FromNode to check).
  static StatusOr<YamlMap> FromNode(const YAML::Node& node, std::string file,
                                    std::string context = "");

  bool Has(std::string_view key) const;
  // Keys in file order.
  std::vector<std::string> Keys() const;

  StatusOr<std::string> String(std::string_view key) const;
  StatusOr<std::optional<std::string>> OptionalString(std::string_view key) const;
  StatusOr<int64_t> Int(std::string_view key) const;
  StatusOr<std::optional<int64_t>> OptionalInt(std::string_view key) const;
  StatusOr<double> Number(std::string_view key) const;  // a plain number (no unit): counts, ratios
  // Bounded reads, the YAML side of a flag's Range (cmd/options.h): a value outside lo..hi
  // (inclusive) is "file:line: key: must be in lo..hi (got v)".
  StatusOr<int64_t> IntIn(std::string_view key, int64_t lo, int64_t hi) const;
  StatusOr<std::optional<int64_t>> OptionalIntIn(std::string_view key, int64_t lo,
                                                 int64_t hi) const;
  StatusOr<double> NumberIn(std::string_view key, double lo, double hi) const;
  // Every key of `keys` the map lacks, in the order given (for one error naming them all).
  std::vector<std::string> Missing(const std::vector<std::string>& keys) const;
  StatusOr<bool> Bool(std::string_view key) const;
  StatusOr<std::optional<bool>> OptionalBool(std::string_view key) const;
  StatusOr<std::vector<std::string>> StringList(std::string_view key) const;  // missing -> empty
  StatusOr<std::vector<int64_t>> IntList(std::string_view key) const;
  // A required, non-empty list of plain numbers, and a list of such lists (a table).
  StatusOr<std::vector<double>> NumberList(std::string_view key) const;
  StatusOr<std::vector<std::vector<double>>> NumberTable(std::string_view key) const;

  // A quantity with a unit: either "450 GB/s" or {value: "450 GB/s", source: "...", note: ...}.
  StatusOr<Sourced> Quantity(std::string_view key, Dim dim) const;
  StatusOr<std::optional<Sourced>> OptionalQuantity(std::string_view key, Dim dim) const;
  // A count with a source: either 8 or {value: 8, source: "..."}.
  StatusOr<Sourced> Count(std::string_view key) const;
  StatusOr<std::optional<Sourced>> OptionalCount(std::string_view key) const;

  StatusOr<YamlMap> Map(std::string_view key) const;
  StatusOr<std::optional<YamlMap>> OptionalMap(std::string_view key) const;
  StatusOr<std::vector<YamlMap>> MapList(std::string_view key) const;  // missing -> empty

  // Fails on the first key in file order that no getter asked for.
  Status Finish() const;

  // "file:line: [context.]key: msg" as an InvalidInput Status.
  Status Error(std::string_view key, std::string_view msg) const;
  const std::string& file() const { return file_; }
  int line() const;  // 1-based line of the map itself

 private:
  YamlMap(YAML::Node node, std::string file, std::string context);
  YAML::Node Get(std::string_view key) const;  // marks as read; Null node if missing
  Status ErrorAt(const YAML::Node& at, std::string_view key, std::string_view msg) const;
  StatusOr<Sourced> ParseSourced(std::string_view key, const YAML::Node& n, bool with_unit,
                                 Dim dim) const;

  YAML::Node node_;
  std::string file_;
  std::string context_;
  std::shared_ptr<std::set<std::string, std::less<>>> read_;
};

// Loads a file whose top level is a map. Parse errors carry file:line:column.
StatusOr<YamlMap> LoadYamlMapFile(const std::string& path);
// Same from a string (for tests); `name` stands in for the file name in errors.
StatusOr<YamlMap> LoadYamlMapString(const std::string& text, const std::string& name);

}  // namespace ndt

#endif  // NDTWIN_CORE_YAML_H_
