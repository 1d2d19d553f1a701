#include "serve/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

namespace ndt {
namespace {

// The radix path (1,024 values or more, none negative) must give std::sort's sequence: values
// spread over many binary exponents, repeats, zeros and an infinity.
TEST(SortLatencies, MatchesStdSortOnLargeNonNegativeSamples) {
  std::mt19937_64 gen(7);
  std::exponential_distribution<double> exp(3.0);
  std::vector<double> v;
  for (int i = 0; i < 5000; ++i) v.push_back(exp(gen) * (i % 7 == 0 ? 1e-6 : 1.0));
  for (int i = 0; i < 50; ++i) v.push_back(v[i]);  // repeats
  v.push_back(0.0);
  v.push_back(0.0);
  v.push_back(std::numeric_limits<double>::infinity());
  std::vector<double> want = v;
  std::sort(want.begin(), want.end());
  SortLatencies(&v);
  EXPECT_EQ(v, want);
}

// Values sharing their high bytes (one binade: [1, 2)) skip those passes and still sort.
TEST(SortLatencies, MatchesStdSortWithinOneBinade) {
  std::vector<double> v;
  for (int i = 0; i < 2048; ++i) v.push_back(1.0 + static_cast<double>((i * 7919) % 2048) / 2048);
  std::vector<double> want = v;
  std::sort(want.begin(), want.end());
  SortLatencies(&v);
  EXPECT_EQ(v, want);
}

// A negative value (or -0) sends the sample to std::sort.
TEST(SortLatencies, NegativeValuesSortToo) {
  std::vector<double> v;
  for (int i = 0; i < 1500; ++i) v.push_back(static_cast<double>((i * 37) % 1500) - 700.0);
  std::vector<double> want = v;
  std::sort(want.begin(), want.end());
  SortLatencies(&v);
  EXPECT_EQ(v, want);
}

// 0.0, 0.1, ..., 0.9 shuffled: p50 at position 4.5 -> 0.45; p90 at 8.1 -> 0.81; mean 0.45.
TEST(Summarize, PercentilesInterpolateBetweenOrderStatistics) {
  std::vector<double> v = {0.3, 0.9, 0.0, 0.5, 0.1, 0.8, 0.2, 0.7, 0.4, 0.6};
  LatencyStats s = Summarize(v);
  EXPECT_NEAR(s.p50, 0.45, 1e-12);
  EXPECT_NEAR(s.p90, 0.81, 1e-12);
  EXPECT_NEAR(s.mean, 0.45, 1e-12);
  EXPECT_DOUBLE_EQ(s.max, 0.9);
}

}  // namespace
}  // namespace ndt
