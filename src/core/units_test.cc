#include "core/units.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

TEST(ParseQuantity, TellsBitsFromBytes) {
  // HDR InfiniBand: 200 Gb/s = 200e9 bits/s / 8 = 25e9 B/s.
  EXPECT_DOUBLE_EQ(*ParseQuantity("200 Gb/s", Dim::kBandwidth), 25e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("25 GB/s", Dim::kBandwidth), 25e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("24000 Mbps", Dim::kBandwidth), 3e9);
}

TEST(ParseQuantity, TellsPowersOfTenFromPowersOfTwo) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("80 GiB", Dim::kBytes), 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*ParseQuantity("80 GB", Dim::kBytes), 80e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("40 MB", Dim::kBytes), 40e6);
}

TEST(ParseQuantity, ParsesRatesTimesAndMore) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("312 TFLOP/s", Dim::kFlops), 312e12);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1.5 us", Dim::kTime), 1.5e-6);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1.5us", Dim::kTime), 1.5e-6);
  EXPECT_DOUBLE_EQ(*ParseQuantity("400 W", Dim::kPower), 400);
  EXPECT_DOUBLE_EQ(*ParseQuantity("92 %", Dim::kFraction), 0.92);
  EXPECT_DOUBLE_EQ(*ParseQuantity("32.77 USD/h", Dim::kUsdPerHour), 32.77);
}

TEST(ParseQuantity, RejectsNumberWithoutUnit) {
  StatusOr<double> q = ParseQuantity("200", Dim::kBandwidth);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(q.status().message().find("needs a unit"), std::string::npos);
}

TEST(ParseQuantity, RejectsUnknownUnitWithExample) {
  StatusOr<double> q = ParseQuantity("200 GBs", Dim::kBandwidth);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("unknown unit 'GBs'"), std::string::npos);
  EXPECT_NE(q.status().message().find("50 GB/s"), std::string::npos);
}

TEST(ParseQuantity, RejectsWrongDimension) {
  StatusOr<double> q = ParseQuantity("80 GiB", Dim::kBandwidth);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("is a size, expected a bandwidth"), std::string::npos);
}

TEST(ParseQuantity, RejectsGarbageAndNegatives) {
  EXPECT_FALSE(ParseQuantity("fast", Dim::kBandwidth).ok());
  EXPECT_FALSE(ParseQuantity("", Dim::kTime).ok());
  EXPECT_FALSE(ParseQuantity("-3 us", Dim::kTime).ok());
}

TEST(ParseSizeBytes, UsesPowersOf1024LikeNcclTests) {
  EXPECT_DOUBLE_EQ(*ParseSizeBytes("8"), 8);
  EXPECT_DOUBLE_EQ(*ParseSizeBytes("1M"), 1048576);
  EXPECT_DOUBLE_EQ(*ParseSizeBytes("8G"), 8.0 * 1024 * 1024 * 1024);
  EXPECT_FALSE(ParseSizeBytes("8X").ok());
  EXPECT_FALSE(ParseSizeBytes("lots").ok());
}

TEST(FormatSizeLabel, MatchesNcclTestsLabels) {
  EXPECT_EQ(FormatSizeLabel(1024), "1K");
  EXPECT_EQ(FormatSizeLabel(33554432), "32M");
  EXPECT_EQ(FormatSizeLabel(8), "8");
  EXPECT_EQ(FormatSizeLabel(3000), "3000");
}

}  // namespace
}  // namespace ndt
