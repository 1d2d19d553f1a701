#include "core/units.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <string>

namespace ndt {
namespace {

struct UnitDef {
  std::string_view name;
  Dim dim;
  double scale;  // SI value of 1 unit
};

// Case matters: b is a bit, B a byte; k/K = 1e3, Ki = 2^10.
constexpr double kKi = 1024.0;
constexpr std::array kUnits = {
    UnitDef{"B", Dim::kBytes, 1},
    UnitDef{"kB", Dim::kBytes, 1e3},
    UnitDef{"KB", Dim::kBytes, 1e3},
    UnitDef{"MB", Dim::kBytes, 1e6},
    UnitDef{"GB", Dim::kBytes, 1e9},
    UnitDef{"TB", Dim::kBytes, 1e12},
    UnitDef{"PB", Dim::kBytes, 1e15},
    UnitDef{"KiB", Dim::kBytes, kKi},
    UnitDef{"MiB", Dim::kBytes, kKi* kKi},
    UnitDef{"GiB", Dim::kBytes, kKi* kKi* kKi},
    UnitDef{"TiB", Dim::kBytes, kKi* kKi* kKi* kKi},
    UnitDef{"b", Dim::kBytes, 1.0 / 8},
    UnitDef{"kb", Dim::kBytes, 1e3 / 8},
    UnitDef{"Kb", Dim::kBytes, 1e3 / 8},
    UnitDef{"Mb", Dim::kBytes, 1e6 / 8},
    UnitDef{"Gb", Dim::kBytes, 1e9 / 8},
    UnitDef{"Tb", Dim::kBytes, 1e12 / 8},
    // Bandwidth: every size unit above followed by "/s" (handled in code), plus these.
    UnitDef{"bps", Dim::kBandwidth, 1.0 / 8},
    UnitDef{"Kbps", Dim::kBandwidth, 1e3 / 8},
    UnitDef{"Mbps", Dim::kBandwidth, 1e6 / 8},
    UnitDef{"Gbps", Dim::kBandwidth, 1e9 / 8},
    UnitDef{"Tbps", Dim::kBandwidth, 1e12 / 8},
    UnitDef{"MBps", Dim::kBandwidth, 1e6},
    UnitDef{"GBps", Dim::kBandwidth, 1e9},
    UnitDef{"s", Dim::kTime, 1},
    UnitDef{"ms", Dim::kTime, 1e-3},
    UnitDef{"us", Dim::kTime, 1e-6},
    UnitDef{"µs", Dim::kTime, 1e-6},
    UnitDef{"ns", Dim::kTime, 1e-9},
    UnitDef{"min", Dim::kTime, 60},
    UnitDef{"h", Dim::kTime, 3600},
    UnitDef{"d", Dim::kTime, 86400},
    UnitDef{"days", Dim::kTime, 86400},
    UnitDef{"FLOP/s", Dim::kFlops, 1},
    UnitDef{"GFLOP/s", Dim::kFlops, 1e9},
    UnitDef{"TFLOP/s", Dim::kFlops, 1e12},
    UnitDef{"PFLOP/s", Dim::kFlops, 1e15},
    UnitDef{"EFLOP/s", Dim::kFlops, 1e18},
    UnitDef{"GFLOPS", Dim::kFlops, 1e9},
    UnitDef{"TFLOPS", Dim::kFlops, 1e12},
    UnitDef{"PFLOPS", Dim::kFlops, 1e15},
    UnitDef{"TOP/s", Dim::kFlops, 1e12},
    UnitDef{"TOPS", Dim::kFlops, 1e12},
    UnitDef{"W", Dim::kPower, 1},
    UnitDef{"kW", Dim::kPower, 1e3},
    UnitDef{"MW", Dim::kPower, 1e6},
    UnitDef{"Hz", Dim::kFrequency, 1},
    UnitDef{"kHz", Dim::kFrequency, 1e3},
    UnitDef{"MHz", Dim::kFrequency, 1e6},
    UnitDef{"GHz", Dim::kFrequency, 1e9},
    UnitDef{"USD/h", Dim::kUsdPerHour, 1},
    UnitDef{"%", Dim::kFraction, 0.01},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Finds the unit; returns false if unknown.
bool LookupUnit(std::string_view unit, Dim* dim, double* scale) {
  for (const UnitDef& u : kUnits) {
    if (u.name == unit) {
      *dim = u.dim;
      *scale = u.scale;
      return true;
    }
  }
  // "<size unit>/s" is a bandwidth.
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
    Dim d;
    double s;
    if (LookupUnit(unit.substr(0, unit.size() - 2), &d, &s) && d == Dim::kBytes) {
      *dim = Dim::kBandwidth;
      *scale = s;
      return true;
    }
  }
  return false;
}

// Splits "12.5 GB/s" into a number and the rest. Returns false if no number leads.
bool SplitNumber(std::string_view text, double* value, std::string_view* rest) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, *value);
  if (ec != std::errc() || !std::isfinite(*value)) return false;
  *rest = Trim(std::string_view(ptr, end - ptr));
  return true;
}

}  // namespace

std::string_view DimName(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return "a size";
    case Dim::kBandwidth:
      return "a bandwidth";
    case Dim::kTime:
      return "a time";
    case Dim::kFlops:
      return "a compute rate";
    case Dim::kPower:
      return "a power";
    case Dim::kFrequency:
      return "a frequency";
    case Dim::kUsdPerHour:
      return "a price per hour";
    case Dim::kFraction:
      return "a percentage";
  }
  return "a quantity";
}

std::string_view DimExample(Dim d) {
  switch (d) {
    case Dim::kBytes:
      return "\"80 GiB\" or \"40 MB\"";
    case Dim::kBandwidth:
      return "\"400 Gb/s\" or \"50 GB/s\"";
    case Dim::kTime:
      return "\"1.5 us\" or \"2 ms\"";
    case Dim::kFlops:
      return "\"312 TFLOP/s\"";
    case Dim::kPower:
      return "\"400 W\"";
    case Dim::kFrequency:
      return "\"1410 MHz\"";
    case Dim::kUsdPerHour:
      return "\"32.77 USD/h\"";
    case Dim::kFraction:
      return "\"92 %\"";
  }
  return "";
}

StatusOr<double> ParseQuantity(std::string_view text, Dim want) {
  std::string_view t = Trim(text);
  double value = 0;
  std::string_view unit;
  if (!SplitNumber(t, &value, &unit)) {
    return Status::InvalidInput(fmt::format("\"{}\": not a number with a unit; write {} ({})", text,
                                            DimName(want), DimExample(want)));
  }
  if (unit.empty()) {
    return Status::InvalidInput(
        fmt::format("\"{}\": a number needs a unit; write e.g. {}", text, DimExample(want)));
  }
  Dim dim;
  double scale;
  if (!LookupUnit(unit, &dim, &scale)) {
    return Status::InvalidInput(
        fmt::format("\"{}\": unknown unit '{}'; write e.g. {}", text, unit, DimExample(want)));
  }
  if (dim != want) {
    return Status::InvalidInput(fmt::format("\"{}\" is {}, expected {} (e.g. {})", text,
                                            DimName(dim), DimName(want), DimExample(want)));
  }
  if (value < 0) {
    return Status::InvalidInput(fmt::format("\"{}\": must not be negative", text));
  }
  return value * scale;
}

StatusOr<double> ParseSizeBytes(std::string_view text) {
  std::string_view t = Trim(text);
  double value = 0;
  std::string_view unit;
  if (!SplitNumber(t, &value, &unit) || value < 0) {
    return Status::InvalidInput(
        fmt::format("\"{}\": not a message size; write bytes or e.g. \"8\", \"1M\", \"8G\"", text));
  }
  double scale = 1;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KiB" || unit == "k") {
    scale = kKiB;
  } else if (unit == "M" || unit == "MB" || unit == "MiB") {
    scale = kMiB;
  } else if (unit == "G" || unit == "GB" || unit == "GiB") {
    scale = kGiB;
  } else if (unit == "T" || unit == "TB" || unit == "TiB") {
    scale = kTiB;
  } else {
    return Status::InvalidInput(fmt::format(
        "\"{}\": unknown size unit '{}'; write e.g. \"8\", \"1M\", \"8G\" (powers of 1024)", text,
        unit));
  }
  return value * scale;
}

std::string FormatSizeLabel(double bytes) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int i = 0;
  double v = bytes;
  while (i < 4 && v >= 1024 && std::fmod(v, 1024) == 0) {
    v /= 1024;
    ++i;
  }
  return fmt::format("{}{}", static_cast<long long>(v), units[i]);
}

}  // namespace ndt
