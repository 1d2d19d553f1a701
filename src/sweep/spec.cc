// File: sweep/spec.cc
// The sweep spec (YAML), the enumeration of its points and the headline columns (sweep.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

#include "sweep/sweep.h"

namespace ndt {
namespace {

std::string Dashed(std::string s) {
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

// A YAML scalar as JSON: quoted text stays text; else an integer, a number, true/false, null,
// or text. Sequences and maps (list options, e.g. a comma list given as a YAML list) map over.
Json ScalarJson(const YAML::Node& n) {
  if (n.IsSequence()) {
    Json a = Json::array();
    for (const YAML::Node& e : n) a.push_back(ScalarJson(e));
    return a;
  }
  if (n.IsMap()) {
    Json o = Json::object();
    for (const auto& kv : n) o[kv.first.Scalar()] = ScalarJson(kv.second);
    return o;
  }
  if (n.IsNull()) return nullptr;
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted
  if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0 && *end == '\0') return static_cast<int64_t>(i);
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (errno == 0 && *end == '\0' && std::isfinite(d)) return d;
  }
  if (s == "true" || s == "True") return true;
  if (s == "false" || s == "False") return false;
  return s;
}

Status SpecError(const std::string& key, const std::string& msg) {
  return Status::InvalidInput("sweep spec: " + key + ": " + msg);
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

Json SweepSpec::ToJson() const {
  Json j;
  j["command"] = command;
  j["fixed"] = fixed;
  Json g = Json::array(), z = Json::array();
  for (const SweepAxis& a : grid) g.push_back(Json{{"key", a.key}, {"values", a.values}});
  for (const SweepAxis& a : zip) z.push_back(Json{{"key", a.key}, {"values", a.values}});
  j["grid"] = g;
  j["zip"] = z;
  j["points"] = points;
  return j;
}

StatusOr<SweepSpec> ParseSweepSpec(const std::string& yaml_text, const OptionNamesFn& options_of) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidInput("sweep spec: line " + std::to_string(e.mark.line + 1) +
                                ": not YAML: " + e.msg);
  }
  if (!root.IsMap()) {
    return Status::InvalidInput(
        "sweep spec: must be a mapping with command, fixed, grid, zip and fidelity");
  }
  static const std::vector<std::string> kTop = {"command", "fixed", "grid", "zip", "fidelity"};
  for (const auto& kv : root) {
    const std::string k = kv.first.Scalar();
    if (std::find(kTop.begin(), kTop.end(), k) == kTop.end()) {
      return SpecError(k, "unknown key; valid: " + Join(kTop));
    }
  }
  SweepSpec spec;
  if (!root["command"] || !root["command"].IsScalar() || root["command"].Scalar().empty()) {
    return SpecError("command", "required: the command to run (train, infer, collective, ...)");
  }
  spec.command = root["command"].Scalar();
  if (spec.command == "sweep") return SpecError("command", "a sweep cannot run sweep");
  StatusOr<std::vector<std::string>> names = options_of(spec.command);
  if (!names.ok()) return SpecError("command", names.status().message());
  std::vector<std::string> seen;
  auto check_key = [&](const std::string& section, const std::string& raw,
                       std::string* dashed) -> Status {
    *dashed = Dashed(raw);
    const std::string where = section + "." + raw;
    if (std::find(names->begin(), names->end(), *dashed) == names->end()) {
      return SpecError(where, "not an option of " + spec.command + "; valid: " + Join(*names));
    }
    if (std::find(seen.begin(), seen.end(), *dashed) != seen.end()) {
      return SpecError(where, "given twice (each option is fixed, in grid or in zip, once)");
    }
    seen.push_back(*dashed);
    return Status::Ok();
  };
  auto section = [&](const char* name) -> StatusOr<YAML::Node> {
    YAML::Node n = root[name];
    if (!n || n.IsNull()) return YAML::Node(YAML::NodeType::Map);
    if (!n.IsMap()) return SpecError(name, "must be a mapping of option: value");
    return n;
  };
  NDT_ASSIGN_OR_RETURN(YAML::Node fixed, section("fixed"));
  for (const auto& kv : fixed) {
    std::string key;
    NDT_RETURN_IF_ERROR(check_key("fixed", kv.first.Scalar(), &key));
    spec.fixed[key] = ScalarJson(kv.second);
  }
  if (root["fidelity"]) {
    std::string key;
    if (!root["fidelity"].IsScalar()) return SpecError("fidelity", "must be one word");
    NDT_RETURN_IF_ERROR(
        check_key("fidelity", "fidelity", &key)
            .WithMessage("sweep spec: fidelity: " + spec.command +
                         " has no --fidelity, or fidelity is also given in fixed, grid or zip"));
    spec.fixed[key] = ScalarJson(root["fidelity"]);
  }
  auto lists = [&](const char* name, std::vector<SweepAxis>* out) -> Status {
    NDT_ASSIGN_OR_RETURN(YAML::Node n, section(name));
    for (const auto& kv : n) {
      const std::string raw = kv.first.Scalar();
      SweepAxis a;
      NDT_RETURN_IF_ERROR(check_key(name, raw, &a.key));
      const std::string where = std::string(name) + "." + raw;
      if (!kv.second.IsSequence()) {
        return SpecError(where, "must be a list of values (a single value goes in fixed)");
      }
      for (const YAML::Node& v : kv.second) a.values.push_back(ScalarJson(v));
      if (a.values.empty()) return SpecError(where, "empty list: give at least one value");
      out->push_back(std::move(a));
    }
    return Status::Ok();
  };
  NDT_RETURN_IF_ERROR(lists("grid", &spec.grid));
  NDT_RETURN_IF_ERROR(lists("zip", &spec.zip));
  for (const SweepAxis& a : spec.zip) {
    if (a.values.size() != spec.zip.front().values.size()) {
      return SpecError("zip." + a.key, "has " + std::to_string(a.values.size()) +
                                           " values but zip." + spec.zip.front().key + " has " +
                                           std::to_string(spec.zip.front().values.size()) +
                                           " (zip lists vary together)");
    }
  }
  // The size, refusing before it overflows.
  uint64_t points = 1;
  std::string factors;
  auto times = [&](const std::string& key, uint64_t n) -> Status {
    factors += (factors.empty() ? "" : " x ") + key + " " + std::to_string(n);
    if (points > kMaxSweepPoints / n) {
      return SpecError(key, "the space (" + factors +
                                " ...) is over 10^9 points; split the sweep or fix some keys");
    }
    points *= n;
    return Status::Ok();
  };
  for (const SweepAxis& a : spec.grid) NDT_RETURN_IF_ERROR(times("grid." + a.key, a.values.size()));
  if (!spec.zip.empty()) {
    NDT_RETURN_IF_ERROR(times("zip", spec.zip.front().values.size()));
  }
  spec.points = points;
  return spec;
}

Json SweepPoint(const SweepSpec& spec, uint64_t id) {
  Json p = spec.fixed;
  // Digits, least significant first: the zip index, then the grid keys from the last.
  uint64_t rest = id;
  size_t zip_index = 0;
  if (!spec.zip.empty()) {
    const uint64_t n = spec.zip.front().values.size();
    zip_index = rest % n;
    rest /= n;
  }
  std::vector<size_t> digit(spec.grid.size());
  for (size_t k = spec.grid.size(); k-- > 0;) {
    const uint64_t n = spec.grid[k].values.size();
    digit[k] = rest % n;
    rest /= n;
  }
  for (size_t k = 0; k < spec.grid.size(); ++k) p[spec.grid[k].key] = spec.grid[k].values[digit[k]];
  for (const SweepAxis& a : spec.zip) p[a.key] = a.values[zip_index];
  return p;
}

std::string CanonicalJson(const Json& j) {
  // nlohmann::json (not ordered) keeps object keys sorted.
  return nlohmann::json::parse(j.dump()).dump();
}

std::vector<HeadlineColumn> HeadlineColumns(const std::string& command) {
  if (command == "train") {
    return {{"step_time_s", "/step_time_s", false},
            {"tokens_per_s", "/tokens_per_s", true},
            {"mfu", "/mfu", true},
            {"memory_bytes", "/memory/peak_bytes_per_gpu", false},
            {"time_to_train_s", "/time_to_train_s", false},
            {"cost_usd", "/cost_usd", false}};
  }
  if (command == "infer") {
    return {{"output_tokens_per_s", "/output_tokens_per_s", true},
            {"per_gpu_output_tokens_per_s", "/per_gpu_output_tokens_per_s", true},
            {"requests_per_s", "/requests_per_s", true},
            {"ttft_p99_s", "/ttft_s/p99", false},
            {"tpot_p99_s", "/tpot_s/p99", false},
            {"usd_per_million_tokens", "/usd_per_million_tokens", false}};
  }
  if (command == "fleet") {
    // The Monte Carlo's mean goodput and its median time to train and cost (tokens mode).
    return {{"goodput", "/goodput", true},
            {"step_time_s", "/step_time_s", false},
            {"time_to_train_days", "/time_to_train_days/p50", false},
            {"cost_usd", "/cost_usd/p50", false},
            {"lost_gpu_hours", "/lost_gpu_hours", false}};
  }
  if (command == "plan train") {
    // The best configuration's (rank 1, after --with-failures' re-ranking where asked).
    return {{"step_time_s", "/results/0/step_time_s", false},
            {"tokens_per_s", "/results/0/tokens_per_s", true},
            {"mfu", "/results/0/mfu", true},
            {"memory_bytes", "/results/0/memory_bytes_per_gpu", false},
            {"time_to_train_s", "/results/0/time_to_train_s", false},
            {"cost_usd", "/results/0/cost_usd", false}};
  }
  if (command == "plan infer") {
    // The best (size, precision) pair's.
    return {{"output_tokens_per_s", "/results/0/output_tokens_per_s", true},
            {"per_gpu_output_tokens_per_s", "/results/0/per_gpu_output_tokens_per_s", true},
            {"ttft_p99_s", "/results/0/ttft_p99_s", false},
            {"tpot_p99_s", "/results/0/tpot_p99_s", false},
            {"usd_per_million_tokens", "/results/0/usd_per_million_tokens", false}};
  }
  if (command == "collective") {
    // The last row: the largest message of the command's size range.
    return {{"time_us", "/rows/-/time_us", false}, {"busbw_gbps", "/rows/-/busbw_GBps", true}};
  }
  return {};
}

StatusOr<std::vector<HeadlineColumn>> FindHeadlineColumns(const std::string& command,
                                                          const std::vector<std::string>& names,
                                                          const std::string& flag) {
  const std::vector<HeadlineColumn> all = HeadlineColumns(command);
  std::vector<HeadlineColumn> out;
  for (const std::string& n : names) {
    auto it =
        std::find_if(all.begin(), all.end(), [&](const HeadlineColumn& c) { return c.name == n; });
    if (it == all.end()) {
      std::string valid;
      for (const HeadlineColumn& c : all) valid += (valid.empty() ? "" : ", ") + c.name;
      return Status::InvalidInput(flag + ": '" + n + "' is not a column of a " + command +
                                  " sweep; use one of: " + (valid.empty() ? "(none)" : valid));
    }
    out.push_back(*it);
  }
  return out;
}

SweepParams::SweepParams(const SweepSpec& spec) {
  std::vector<std::pair<std::string, Part>> keyed;
  for (const auto& [k, v] : spec.fixed.items()) {
    keyed.push_back({k, Part{Json(k).dump() + ":" + CanonicalJson(v), -1}});
  }
  auto axis = [&](const SweepAxis& a) {
    keyed.push_back({a.key, Part{Json(a.key).dump() + ":", static_cast<int>(text_.size())}});
    std::vector<std::string> t;
    for (const Json& v : a.values) t.push_back(CanonicalJson(v));
    text_.push_back(std::move(t));
  };
  for (const SweepAxis& a : spec.grid) {
    axis(a);
    radix_.push_back(a.values.size());
  }
  for (const SweepAxis& a : spec.zip) axis(a);
  zip_n_ = spec.zip.empty() ? 0 : spec.zip.front().values.size();
  // nlohmann::json's objects are std::maps: keys in byte order, as CanonicalJson writes them.
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [k, p] : keyed) parts_.push_back(std::move(p));
}

void SweepParams::Digits(uint64_t id, std::vector<size_t>* digits) const {
  digits->assign(text_.size(), 0);
  uint64_t rest = id;
  size_t zip_index = 0;
  if (zip_n_ > 0) {
    zip_index = rest % zip_n_;
    rest /= zip_n_;
  }
  for (size_t k = radix_.size(); k-- > 0;) {
    (*digits)[k] = rest % radix_[k];
    rest /= radix_[k];
  }
  for (size_t k = radix_.size(); k < text_.size(); ++k) (*digits)[k] = zip_index;
}

std::string SweepParams::Of(uint64_t id) const {
  thread_local std::vector<size_t> digits;
  Digits(id, &digits);
  std::string out = "{";
  for (const Part& p : parts_) {
    if (out.size() > 1) out += ',';
    out += p.head;
    if (p.axis >= 0) out += text_[p.axis][digits[p.axis]];
  }
  out += '}';
  return out;
}

}  // namespace ndt
