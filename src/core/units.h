// File: core/units.h
// Parses quantities with units at the boundary ("200 Gb/s", "25 GB/s", "80 GiB", "312 TFLOP/s",
// "1.5 us") into SI doubles: bytes, bytes/s, seconds, FLOP/s, W, Hz, USD/h, fraction.
// Tells bits (b) from bytes (B) and 10^3 (kB, MB, GB) from 2^10 (KiB, MiB, GiB).
// A number without a unit is an error; so is a unit of the wrong dimension.
#ifndef NDTWIN_CORE_UNITS_H_
#define NDTWIN_CORE_UNITS_H_

#include <string>
#include <string_view>

#include "core/status.h"

namespace ndt {

// Named scales for constants in code (mostly tests): 450 * kGB, 400 * kGbit, 2 * kUs.
inline constexpr double kKB = 1e3, kMB = 1e6, kGB = 1e9, kTB = 1e12;
inline constexpr double kKiB = 1024.0, kMiB = 1024.0 * 1024, kGiB = 1024.0 * 1024 * 1024,
                        kTiB = 1024.0 * 1024 * 1024 * 1024;
inline constexpr double kGbit = 1e9 / 8, kMbit = 1e6 / 8;  // bytes per Gb, Mb
inline constexpr double kUs = 1e-6, kMs = 1e-3, kNs = 1e-9;
inline constexpr double kTFLOP = 1e12;

enum class Dim {
  kBytes,       // B
  kBandwidth,   // B/s
  kTime,        // s
  kFlops,       // FLOP/s (also OP/s for integer tensor rates)
  kPower,       // W
  kFrequency,   // Hz
  kUsdPerHour,  // USD/h
  kFraction,    // 0..1, written as "%"
};

// Human name of a dimension ("a bandwidth") and an example ("50 GB/s").
std::string_view DimName(Dim d);
std::string_view DimExample(Dim d);

// Parses "<number> <unit>" (space optional) into the SI value of dimension `want`.
// Errors (kInvalidInput) name the text and give an example of the expected form.
StatusOr<double> ParseQuantity(std::string_view text, Dim want);

// Parses a message size as nccl-tests does: a plain number of bytes, or a number followed by
// K, M, G (or KB, MB, GB, KiB, MiB, GiB): powers of 1024. "8", "1M", "8G".
StatusOr<double> ParseSizeBytes(std::string_view text);

// Formats a size as nccl-tests labels it: 1024 -> "1K", 2^25 -> "32M".
std::string FormatSizeLabel(double bytes);

}  // namespace ndt

#endif  // NDTWIN_CORE_UNITS_H_
