#include "cmd/options.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>

#include "core/check.h"

namespace ndt {
namespace {

template <class>
inline constexpr bool kAlwaysFalse = false;

std::string Dashed(std::string s) {
  for (char& c : s) {
    if (c == '_') c = '-';
  }
  return s;
}

// Reads an integer of type T from a JSON number (an integral double such as 8.0 is accepted:
// JSON has one number type).
template <typename T>
Status ReadInt(const Json& v, const std::string& name, T* out) {
  if (v.is_number_integer()) {
    const auto x = v.get<int64_t>();
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
      return Status::InvalidInput("option '" + name + "': " + v.dump() + " is out of range");
    }
    *out = static_cast<T>(x);
    return Status::Ok();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) &&
        d >= static_cast<double>(std::numeric_limits<T>::min()) &&
        d <= static_cast<double>(std::numeric_limits<T>::max())) {
      *out = static_cast<T>(d);
      return Status::Ok();
    }
  }
  return Status::InvalidInput("option '" + name + "' takes an integer (got " + v.dump() + ")");
}

Status ReadDouble(const Json& v, const std::string& name, double* out) {
  if (v.is_number() && std::isfinite(v.get<double>())) {
    *out = v.get<double>();
    return Status::Ok();
  }
  return Status::InvalidInput("option '" + name + "' takes a finite number (got " + v.dump() + ")");
}

// Text options also take numbers ("min-bytes": 1024 means "1024").
Status ReadString(const Json& v, const std::string& name, std::string* out) {
  if (v.is_string()) {
    *out = v.get<std::string>();
    return Status::Ok();
  }
  if (v.is_number_integer()) {
    *out = std::to_string(v.get<int64_t>());
    return Status::Ok();
  }
  if (v.is_number_float()) {
    *out = v.dump();
    return Status::Ok();
  }
  return Status::InvalidInput("option '" + name + "' takes a string (got " + v.dump() + ")");
}

Status Bind(const Json& v, const std::string& name, const OptionField& field) {
  return std::visit(
      [&](auto* p) -> Status {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t>) {
          return ReadInt(v, name, p);
        } else if constexpr (std::is_same_v<T, uint64_t>) {
          if (!v.is_number_unsigned()) {
            return Status::InvalidInput("option '" + name + "' takes a non-negative integer (got " +
                                        v.dump() + ")");
          }
          *p = v.get<uint64_t>();
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, double>) {
          return ReadDouble(v, name, p);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return ReadString(v, name, p);
        } else if constexpr (std::is_same_v<T, bool>) {
          if (!v.is_boolean()) {
            return Status::InvalidInput("option '" + name + "' takes true or false (got " +
                                        v.dump() + ")");
          }
          *p = v.get<bool>();
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          p->clear();
          if (v.is_string()) {
            p->push_back(v.get<std::string>());
            return Status::Ok();
          }
          if (!v.is_array()) {
            return Status::InvalidInput("option '" + name + "' takes a list of strings (got " +
                                        v.dump() + ")");
          }
          for (const Json& e : v) {
            std::string s;
            NDT_RETURN_IF_ERROR(ReadString(e, name, &s));
            p->push_back(s);
          }
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, std::optional<int>> ||
                             std::is_same_v<T, std::optional<int64_t>>) {
          typename T::value_type x{};
          NDT_RETURN_IF_ERROR(ReadInt(v, name, &x));
          *p = x;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          double x = 0;
          NDT_RETURN_IF_ERROR(ReadDouble(v, name, &x));
          *p = x;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
          std::string x;
          NDT_RETURN_IF_ERROR(ReadString(v, name, &x));
          *p = x;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, std::optional<bool>>) {
          if (!v.is_boolean()) {
            return Status::InvalidInput("option '" + name + "' takes true or false (got " +
                                        v.dump() + ")");
          }
          *p = v.get<bool>();
          return Status::Ok();
        } else {
          static_assert(kAlwaysFalse<T>, "an option type without a JSON reader");
        }
      },
      field);
}

}  // namespace

const char* Option::type_name() const {
  return std::visit(
      [](auto* p) -> const char* {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, uint64_t> || std::is_same_v<T, std::optional<int>> ||
                      std::is_same_v<T, std::optional<int64_t>>) {
          return "int";
        } else if constexpr (std::is_same_v<T, double> ||
                             std::is_same_v<T, std::optional<double>>) {
          return "float";
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::optional<bool>>) {
          return "flag";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return "list";
        } else {
          return "string";
        }
      },
      field);
}

const Option* OptionList::Find(const std::string& name) const {
  const std::string dashed = Dashed(name);
  for (const Option& o : options_) {
    if (o.name == dashed) return &o;
  }
  return nullptr;
}

Option* OptionList::Find(const std::string& name) {
  return const_cast<Option*>(static_cast<const OptionList*>(this)->Find(name));
}

void OptionList::Range(const std::string& name, double lo, double hi, std::string note) {
  Option* o = Find(name);
  NDT_CHECK(o != nullptr, "Range() on an undeclared option '" + name + "'");
  o->Range(lo, hi, std::move(note));
}

namespace {

// 1e+06 as "1000000", 0.5 as "0.5": integers up to 2^53 print whole.
std::string RangeNumber(double x) {
  char buf[64];
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 9007199254740992.0) {
    std::snprintf(buf, sizeof buf, "%.0f", x);
  } else {
    std::snprintf(buf, sizeof buf, "%g", x);
  }
  return buf;
}

// The value of a numeric option as a double, and as CheckRanges' message shows it (`shown`
// only when asked: a sweep checks every point's ranges and most are in range).
std::optional<double> RangeValue(const OptionField& field, std::string* shown) {
  std::optional<double> value;
  std::visit(
      [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, uint64_t>) {
          value = static_cast<double>(*p);
          if (shown != nullptr) *shown = std::to_string(*p);
        } else if constexpr (std::is_same_v<T, double>) {
          value = *p;
          if (shown != nullptr) *shown = RangeNumber(*p);
        } else if constexpr (std::is_same_v<T, std::optional<int>> ||
                             std::is_same_v<T, std::optional<int64_t>>) {
          if (p->has_value()) {
            value = static_cast<double>(**p);
            if (shown != nullptr) *shown = std::to_string(**p);
          }
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          if (p->has_value()) {
            value = **p;
            if (shown != nullptr) *shown = RangeNumber(**p);
          }
        }
      },
      field);
  return value;
}

}  // namespace

Status CheckRanges(const OptionList& options) {
  for (const Option& o : options.options()) {
    if (!o.min.has_value() && !o.max.has_value()) continue;
    const std::optional<double> value = RangeValue(o.field, nullptr);
    if (!value.has_value()) continue;
    const double lo = o.min.value_or(-std::numeric_limits<double>::infinity());
    const double hi = o.max.value_or(std::numeric_limits<double>::infinity());
    if (std::isfinite(*value) && *value >= lo && *value <= hi) continue;
    std::string shown;
    RangeValue(o.field, &shown);
    std::string range;
    if (o.min.has_value() && o.max.has_value()) {
      range = "in " + RangeNumber(lo) + ".." + RangeNumber(hi);
    } else if (o.min.has_value()) {
      range = ">= " + RangeNumber(lo);
    } else {
      range = "<= " + RangeNumber(hi);
    }
    return Status::InvalidInput("--" + o.name + " must be " + range + " (got " + shown + ")" +
                                (o.range_note.empty() ? "" : "; " + o.range_note));
  }
  return Status::Ok();
}

Status BindJson(const Json& args, OptionList* options, const std::string& command) {
  if (args.is_null()) return Status::Ok();
  if (!args.is_object()) {
    return Status::InvalidInput(command + ": options must be a JSON object (got " + args.dump() +
                                ")");
  }
  for (const auto& [key, value] : args.items()) {
    const Option* o = options->Find(key);
    if (o == nullptr) {
      std::string valid;
      for (const Option& x : options->options()) valid += (valid.empty() ? "" : ", ") + x.name;
      return Status::InvalidInput(command + ": unknown option '" + key + "'; valid: " + valid);
    }
    if (value.is_null()) continue;  // null: the default
    NDT_RETURN_IF_ERROR(Bind(value, o->name, o->field));
  }
  for (const Option& o : options->options()) {
    if (!o.required) continue;
    bool found = false;
    for (const auto& [key, value] : args.items())
      found |= Dashed(key) == o.name && !value.is_null();
    if (!found) return Status::InvalidInput(command + ": option '" + o.name + "' is required");
  }
  return Status::Ok();
}

void EnableReportOptions(OptionList* options) {
  for (Option& o : options->options()) {
    if (!o.for_report) continue;
    if (bool* const* b = std::get_if<bool*>(&o.field)) **b = true;
  }
}

Json OptionValues(const OptionList& options) {
  Json j = Json::object();
  for (const Option& o : options.options()) {
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, std::optional<int>> ||
                        std::is_same_v<T, std::optional<int64_t>> ||
                        std::is_same_v<T, std::optional<double>> ||
                        std::is_same_v<T, std::optional<std::string>> ||
                        std::is_same_v<T, std::optional<bool>>) {
            j[o.name] = p->has_value() ? Json(**p) : Json(nullptr);
          } else {
            j[o.name] = *p;
          }
        },
        o.field);
  }
  return j;
}

}  // namespace ndt
