// File: sweep/sweep_test.cc
// The spec, the enumeration, the params and the Pareto frontier, without the registry (the
// runs, the store and `ndtwin sweep`: sweep_run_test.cc).
#include "sweep/sweep.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace ndt {
namespace {

// A command with options a, b, c, fidelity (no registry needed for the spec tests).
StatusOr<std::vector<std::string>> FakeOptions(const std::string& command) {
  if (command == "fake") return std::vector<std::string>{"a", "b", "c", "fidelity", "tp-overlap"};
  if (command == "nofid") return std::vector<std::string>{"a"};
  return Status::NotFound("unknown command '" + command + "'");
}

StatusOr<SweepSpec> Parse(const std::string& y) { return ParseSweepSpec(y, FakeOptions); }

std::string ErrorOf(const std::string& y) {
  StatusOr<SweepSpec> s = Parse(y);
  EXPECT_FALSE(s.ok()) << y;
  if (s.ok()) return "";
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.status().message().find('\n'), std::string::npos);
  return s.status().message();
}

TEST(SweepSpecTest, ParsesAndCounts) {
  StatusOr<SweepSpec> s = Parse(
      "command: fake\nfixed: {a: 1}\ngrid: {b: [x, y, z], tp_overlap: [true, false]}\n"
      "zip: {c: [1, 2.5]}\nfidelity: estimate\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  // 3 (b) x 2 (tp-overlap) x 2 (zip) = 12.
  EXPECT_EQ(s->points, 12u);
  EXPECT_EQ(s->fixed.dump(), R"({"a":1,"fidelity":"estimate"})");
  ASSERT_EQ(s->grid.size(), 2u);
  EXPECT_EQ(s->grid[1].key, "tp-overlap");  // underscores become dashes
}

TEST(SweepSpecTest, EnumerationOrder) {
  StatusOr<SweepSpec> s =
      Parse("command: fake\ngrid: {a: [1, 2], b: [x, y, z]}\nzip: {c: [10, 20]}\n");
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->points, 12u);
  // Digits, most significant first: a (2), b (3), zip (2). id 0 = a1 b x c10; id 1 = c20;
  // id 2 = b y; id 6 = a 2; id 11 = a2 b z c20.
  EXPECT_EQ(SweepPoint(*s, 0).dump(), R"({"a":1,"b":"x","c":10})");
  EXPECT_EQ(SweepPoint(*s, 1).dump(), R"({"a":1,"b":"x","c":20})");
  EXPECT_EQ(SweepPoint(*s, 2).dump(), R"({"a":1,"b":"y","c":10})");
  EXPECT_EQ(SweepPoint(*s, 6).dump(), R"({"a":2,"b":"x","c":10})");
  EXPECT_EQ(SweepPoint(*s, 11).dump(), R"({"a":2,"b":"z","c":20})");
  EXPECT_EQ(CanonicalJson(Json{{"b", 1}, {"a", "x"}}), R"({"a":"x","b":1})");
}

TEST(SweepSpecTest, ParamsEqualCanonicalJsonOfEveryPoint) {
  // Keys out of order, every kind of value, a zip and a fixed null.
  StatusOr<SweepSpec> s = Parse(
      "command: fake\nfixed: {fidelity: estimate, c: null}\n"
      "grid: {tp_overlap: [true, false], b: [x, 'y z', null, 2.5, 300e9, [p, q], {k: 1}]}\n"
      "zip: {a: [1, \"8\", -3]}\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->points, 42u);
  const SweepParams params(*s);
  for (uint64_t id = 0; id < s->points; ++id) {
    EXPECT_EQ(params.Of(id), CanonicalJson(SweepPoint(*s, id))) << id;
  }
  StatusOr<SweepSpec> none = Parse("command: fake\n");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(SweepParams(*none).Of(0), "{}");
}

TEST(SweepSpecTest, ScalarsKeepTheirType) {
  StatusOr<SweepSpec> s = Parse("command: fake\nfixed: {a: '8', b: 300e9, c: 1.5}\n");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->fixed["a"].is_string());  // quoted stays text
  EXPECT_EQ(s->fixed["b"].get<double>(), 300e9);
  EXPECT_EQ(s->points, 1u);  // no grid: the one point
}

TEST(SweepSpecTest, EveryErrorNamesItsKey) {
  EXPECT_NE(ErrorOf("command: fake\ngrids: {a: [1]}\n").find("grids: unknown key"),
            std::string::npos);
  EXPECT_NE(ErrorOf("fixed: {a: 1}\n").find("command: required"), std::string::npos);
  EXPECT_NE(ErrorOf("command: nope\n").find("command: unknown command 'nope'"), std::string::npos);
  EXPECT_NE(ErrorOf("command: fake\ngrid: {tpp: [1]}\n").find("grid.tpp: not an option of fake"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: fake\nfixed: {zz: 1}\n").find("fixed.zz: not an option"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: fake\ngrid: {a: []}\n").find("grid.a: empty list"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: fake\ngrid: {a: 3}\n").find("grid.a: must be a list"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: fake\nfixed: {a: 1}\ngrid: {a: [1]}\n").find("grid.a: given twice"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: fake\nzip: {a: [1, 2], b: [1]}\n").find("zip.b: has 1 values"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: nofid\nfidelity: flow\n").find("fidelity: nofid has no --fidelity"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: fake\ngrid: [1, 2]\n").find("grid: must be a mapping"),
            std::string::npos);
  EXPECT_NE(ErrorOf("command: [\n").find("not YAML"), std::string::npos);
  // 1000^3 = 10^9 is allowed; x 2 more is not, and the error names the key that crossed it.
  std::string big = "command: fake\ngrid:\n";
  for (const char* k : {"a", "b", "c"}) {
    big += std::string("  ") + k + ": [";
    for (int i = 0; i < 1000; ++i) big += (i ? "," : "") + std::to_string(i);
    big += "]\n";
  }
  StatusOr<SweepSpec> ok = Parse(big);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->points, 1000000000u);
  EXPECT_NE(ErrorOf(big + "zip: {fidelity: [x, y]}\n").find("zip: the space"), std::string::npos);
}

TEST(SweepParetoTest, MatchesBruteForce) {
  std::mt19937_64 rng(7);
  for (int dims : {2, 3}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<SweepPick> pts;
      // Few distinct values: ties and duplicates happen.
      for (uint64_t i = 0; i < 200; ++i) {
        SweepPick p;
        p.id = i;
        for (int k = 0; k < dims; ++k) p.values.push_back(static_cast<double>(rng() % 12));
        pts.push_back(p);
      }
      std::vector<bool> maximize = {false, true, false};
      maximize.resize(dims);
      // Brute force: p is on the frontier when no q is as good everywhere and better somewhere.
      std::vector<uint64_t> want;
      for (const SweepPick& p : pts) {
        bool dominated = false;
        for (const SweepPick& q : pts) {
          bool ge = true, gt = false;
          for (int k = 0; k < dims; ++k) {
            const double a = maximize[k] ? -q.values[k] : q.values[k];
            const double b = maximize[k] ? -p.values[k] : p.values[k];
            ge &= a <= b;
            gt |= a < b;
          }
          dominated |= ge && gt;
        }
        if (!dominated) want.push_back(p.id);
      }
      std::vector<uint64_t> got;
      for (const SweepPick& p : ParetoFrontier(pts, maximize)) got.push_back(p.id);
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want);
    }
  }
}

}  // namespace
}  // namespace ndt
