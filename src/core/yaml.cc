#include "core/yaml.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "core/files.h"

namespace ndt {
namespace {

std::string TypeName(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "undefined";
  }
}

}  // namespace

YamlMap::YamlMap(YAML::Node node, std::string file, std::string context)
    : node_(std::move(node)),
      file_(std::move(file)),
      context_(std::move(context)),
      read_(std::make_shared<std::set<std::string, std::less<>>>()) {}

StatusOr<YamlMap> YamlMap::FromNode(const YAML::Node& node, std::string file, std::string context) {
  YamlMap m(node, std::move(file), std::move(context));
  if (!node.IsMap()) {
    return m.ErrorAt(node, "",
                     fmt::format("expected a map of key: value, found {}", TypeName(node)));
  }
  std::set<std::string, std::less<>> seen;
  for (const auto& kv : node) {
    std::string key = kv.first.Scalar();
    if (!seen.insert(key).second) {
      return m.ErrorAt(kv.first, key, "duplicate key; keep only one");
    }
  }
  return m;
}

int YamlMap::line() const { return node_.Mark().line + 1; }

bool YamlMap::Has(std::string_view key) const {
  for (const auto& kv : node_) {
    if (kv.first.Scalar() == key) return true;
  }
  return false;
}

std::vector<std::string> YamlMap::Keys() const {
  std::vector<std::string> keys;
  for (const auto& kv : node_) keys.push_back(kv.first.Scalar());
  return keys;
}

YAML::Node YamlMap::Get(std::string_view key) const {
  read_->insert(std::string(key));
  for (const auto& kv : node_) {
    if (kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node();
}

Status YamlMap::ErrorAt(const YAML::Node& at, std::string_view key, std::string_view msg) const {
  int line = at.Mark().line >= 0 ? at.Mark().line + 1 : node_.Mark().line + 1;
  std::string where = context_;
  if (!key.empty()) where += where.empty() ? std::string(key) : "." + std::string(key);
  if (where.empty()) return Status::InvalidInput(fmt::format("{}:{}: {}", file_, line, msg));
  return Status::InvalidInput(fmt::format("{}:{}: {}: {}", file_, line, where, msg));
}

Status YamlMap::Error(std::string_view key, std::string_view msg) const {
  for (const auto& kv : node_) {
    if (kv.first.Scalar() == key) return ErrorAt(kv.first, key, msg);
  }
  return ErrorAt(node_, key, msg);
}

StatusOr<std::string> YamlMap::String(std::string_view key) const {
  NDT_ASSIGN_OR_RETURN(std::optional<std::string> s, OptionalString(key));
  if (!s) return Error(key, "missing required key");
  return *s;
}

StatusOr<std::optional<std::string>> YamlMap::OptionalString(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<std::string>();
  if (!n.IsScalar()) return ErrorAt(n, key, fmt::format("expected text, found {}", TypeName(n)));
  return std::optional<std::string>(n.Scalar());
}

StatusOr<std::optional<int64_t>> YamlMap::OptionalInt(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<int64_t>();
  if (!n.IsScalar()) {
    return ErrorAt(n, key, fmt::format("expected an integer, found {}", TypeName(n)));
  }
  int64_t v;
  if (!YAML::convert<int64_t>::decode(n, v)) {
    return ErrorAt(n, key, fmt::format("expected an integer, found \"{}\"", n.Scalar()));
  }
  return std::optional<int64_t>(v);
}

StatusOr<int64_t> YamlMap::Int(std::string_view key) const {
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(key));
  if (!v) return Error(key, "missing required key");
  return *v;
}

StatusOr<double> YamlMap::Number(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return Error(key, "missing required key");
  double v;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v) || !std::isfinite(v)) {
    return ErrorAt(n, key, "expected a plain (finite) number");
  }
  return v;
}

namespace {

std::string Plain(double x) {
  if (x == std::floor(x) && std::fabs(x) < 9007199254740992.0) return fmt::format("{:.0f}", x);
  return fmt::format("{}", x);
}

}  // namespace

StatusOr<std::optional<int64_t>> YamlMap::OptionalIntIn(std::string_view key, int64_t lo,
                                                        int64_t hi) const {
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalInt(key));
  if (v && (*v < lo || *v > hi)) {
    return Error(key, fmt::format("must be in {}..{} (got {})", lo, hi, *v));
  }
  return v;
}

StatusOr<int64_t> YamlMap::IntIn(std::string_view key, int64_t lo, int64_t hi) const {
  NDT_ASSIGN_OR_RETURN(std::optional<int64_t> v, OptionalIntIn(key, lo, hi));
  if (!v) return Error(key, "missing required key");
  return *v;
}

StatusOr<double> YamlMap::NumberIn(std::string_view key, double lo, double hi) const {
  NDT_ASSIGN_OR_RETURN(double v, Number(key));
  if (!(v >= lo && v <= hi)) {
    return Error(key, fmt::format("must be in {}..{} (got {})", Plain(lo), Plain(hi), Plain(v)));
  }
  return v;
}

std::vector<std::string> YamlMap::Missing(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  for (const std::string& k : keys) {
    bool present = false;
    for (const auto& kv : node_) {
      if (kv.first.Scalar() == k && !kv.second.IsNull()) present = true;
    }
    if (!present) out.push_back(k);
  }
  return out;
}

StatusOr<std::optional<bool>> YamlMap::OptionalBool(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<bool>();
  bool v;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
    return ErrorAt(n, key, "expected true or false");
  }
  return std::optional<bool>(v);
}

StatusOr<bool> YamlMap::Bool(std::string_view key) const {
  NDT_ASSIGN_OR_RETURN(std::optional<bool> v, OptionalBool(key));
  if (!v) return Error(key, "missing required key");
  return *v;
}

StatusOr<std::vector<std::string>> YamlMap::StringList(std::string_view key) const {
  YAML::Node n = Get(key);
  std::vector<std::string> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence())
    return ErrorAt(n, key, fmt::format("expected a list, found {}", TypeName(n)));
  for (const auto& e : n) {
    if (!e.IsScalar()) return ErrorAt(e, key, "expected a list of text items");
    out.push_back(e.Scalar());
  }
  return out;
}

StatusOr<std::vector<int64_t>> YamlMap::IntList(std::string_view key) const {
  YAML::Node n = Get(key);
  std::vector<int64_t> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence())
    return ErrorAt(n, key, fmt::format("expected a list, found {}", TypeName(n)));
  for (const auto& e : n) {
    int64_t v;
    if (!e.IsScalar() || !YAML::convert<int64_t>::decode(e, v)) {
      return ErrorAt(e, key, "expected a list of integers");
    }
    out.push_back(v);
  }
  return out;
}

namespace {

// The numbers of a sequence node, or the reason it is not one.
bool DecodeNumbers(const YAML::Node& n, std::vector<double>* out) {
  if (!n.IsSequence() || n.size() == 0) return false;
  for (const auto& e : n) {
    double v;
    if (!e.IsScalar() || !YAML::convert<double>::decode(e, v) || !std::isfinite(v)) return false;
    out->push_back(v);
  }
  return true;
}

}  // namespace

StatusOr<std::vector<double>> YamlMap::NumberList(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return Error(key, "missing required key");
  std::vector<double> out;
  if (!DecodeNumbers(n, &out)) return ErrorAt(n, key, "expected a non-empty list of numbers");
  return out;
}

StatusOr<std::vector<std::vector<double>>> YamlMap::NumberTable(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return Error(key, "missing required key");
  if (!n.IsSequence() || n.size() == 0)
    return ErrorAt(n, key, "expected a table: a list of lists of numbers");
  std::vector<std::vector<double>> out;
  for (const auto& row : n) {
    out.emplace_back();
    if (!DecodeNumbers(row, &out.back()))
      return ErrorAt(row, key, "expected a table: a list of lists of numbers");
  }
  return out;
}

StatusOr<Sourced> YamlMap::ParseSourced(std::string_view key, const YAML::Node& n, bool with_unit,
                                        Dim dim) const {
  Sourced out;
  YAML::Node value = n;
  if (n.IsMap()) {
    NDT_ASSIGN_OR_RETURN(
        YamlMap sub,
        FromNode(n, file_,
                 context_.empty() ? std::string(key) : context_ + "." + std::string(key)));
    value.reset(sub.Get("value"));  // rebind; operator= would overwrite n
    if (!value.IsDefined() || value.IsNull()) return sub.Error("value", "missing required key");
    NDT_ASSIGN_OR_RETURN(std::optional<std::string> src, sub.OptionalString("source"));
    out.source = src.value_or("");
    NDT_ASSIGN_OR_RETURN(std::optional<std::string> note, sub.OptionalString("note"));
    (void)note;
    NDT_ASSIGN_OR_RETURN(std::optional<std::string> per, sub.OptionalString("per"));
    (void)per;
    NDT_RETURN_IF_ERROR(sub.Finish());
  }
  if (!value.IsScalar()) return ErrorAt(value, key, "expected a value");
  if (with_unit) {
    StatusOr<double> q = ParseQuantity(value.Scalar(), dim);
    if (!q.ok()) return ErrorAt(value, key, q.status().message());
    out.value = *q;
  } else {
    double v;
    if (!YAML::convert<double>::decode(value, v) || !std::isfinite(v)) {
      return ErrorAt(value, key, fmt::format("expected a number, found \"{}\"", value.Scalar()));
    }
    out.value = v;
  }
  return out;
}

StatusOr<std::optional<Sourced>> YamlMap::OptionalQuantity(std::string_view key, Dim dim) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<Sourced>();
  NDT_ASSIGN_OR_RETURN(Sourced s, ParseSourced(key, n, true, dim));
  return std::optional<Sourced>(s);
}

StatusOr<Sourced> YamlMap::Quantity(std::string_view key, Dim dim) const {
  NDT_ASSIGN_OR_RETURN(std::optional<Sourced> s, OptionalQuantity(key, dim));
  if (!s) return Error(key, fmt::format("missing required key (a value like {})", DimExample(dim)));
  return *s;
}

StatusOr<std::optional<Sourced>> YamlMap::OptionalCount(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<Sourced>();
  NDT_ASSIGN_OR_RETURN(Sourced s, ParseSourced(key, n, false, Dim::kBytes));
  return std::optional<Sourced>(s);
}

StatusOr<Sourced> YamlMap::Count(std::string_view key) const {
  NDT_ASSIGN_OR_RETURN(std::optional<Sourced> s, OptionalCount(key));
  if (!s) return Error(key, "missing required key");
  return *s;
}

StatusOr<std::optional<YamlMap>> YamlMap::OptionalMap(std::string_view key) const {
  YAML::Node n = Get(key);
  if (!n.IsDefined() || n.IsNull()) return std::optional<YamlMap>();
  std::string ctx = context_.empty() ? std::string(key) : context_ + "." + std::string(key);
  NDT_ASSIGN_OR_RETURN(YamlMap m, FromNode(n, file_, ctx));
  return std::optional<YamlMap>(m);
}

StatusOr<YamlMap> YamlMap::Map(std::string_view key) const {
  NDT_ASSIGN_OR_RETURN(std::optional<YamlMap> m, OptionalMap(key));
  if (!m) return Error(key, "missing required key");
  return *m;
}

StatusOr<std::vector<YamlMap>> YamlMap::MapList(std::string_view key) const {
  YAML::Node n = Get(key);
  std::vector<YamlMap> out;
  if (!n.IsDefined() || n.IsNull()) return out;
  if (!n.IsSequence())
    return ErrorAt(n, key, fmt::format("expected a list, found {}", TypeName(n)));
  int i = 0;
  for (const auto& e : n) {
    std::string ctx = fmt::format("{}{}{}[{}]", context_, context_.empty() ? "" : ".", key, i++);
    NDT_ASSIGN_OR_RETURN(YamlMap m, FromNode(e, file_, ctx));
    out.push_back(m);
  }
  return out;
}

Status YamlMap::Finish() const {
  for (const auto& kv : node_) {
    const std::string& key = kv.first.Scalar();
    if (read_->find(key) == read_->end()) {
      return ErrorAt(kv.first, key, "unknown key; remove it or check its spelling");
    }
  }
  return Status::Ok();
}

StatusOr<YamlMap> LoadYamlMapString(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root.reset(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput(fmt::format("{}:{}:{}: malformed YAML: {}", name, e.mark.line + 1,
                                            e.mark.column + 1, e.msg));
  }
  return YamlMap::FromNode(root, name);
}

StatusOr<YamlMap> LoadYamlMapFile(const std::string& path) {
  NDT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path, "YAML file"));
  return LoadYamlMapString(text, path);
}

}  // namespace ndt
