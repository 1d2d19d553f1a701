#include "core/yaml.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

const char kGood[] = R"(name: A100
sms: 108
bw: {value: "2039 GB/s", source: "datasheet"}
mem: "80 GiB"
aliases: [a, b]
)";

TEST(YamlMap, ReadsTypedValuesWithSources) {
  YamlMap m = *LoadYamlMapString(kGood, "gpu.yaml");
  EXPECT_EQ(*m.String("name"), "A100");
  EXPECT_EQ(*m.Int("sms"), 108);
  Sourced bw = *m.Quantity("bw", Dim::kBandwidth);
  EXPECT_DOUBLE_EQ(bw.value, 2039e9);
  EXPECT_EQ(bw.source, "datasheet");
  EXPECT_DOUBLE_EQ(m.Quantity("mem", Dim::kBytes)->value, 80.0 * kGiB);
  EXPECT_EQ(m.StringList("aliases")->size(), 2u);
  EXPECT_TRUE(m.Finish().ok());
}

TEST(YamlMap, UnknownKeyIsAnErrorWithFileAndLine) {
  YamlMap m = *LoadYamlMapString("name: x\nspeed: 3\n", "f.yaml");
  ASSERT_TRUE(m.String("name").ok());
  Status s = m.Finish();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "f.yaml:2: speed: unknown key; remove it or check its spelling");
}

TEST(YamlMap, MissingKeyIsAnError) {
  YamlMap m = *LoadYamlMapString("name: x\n", "f.yaml");
  StatusOr<int64_t> v = m.Int("sms");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "f.yaml:1: sms: missing required key");
}

TEST(YamlMap, WrongTypeIsAnError) {
  YamlMap m = *LoadYamlMapString("sms: many\n", "f.yaml");
  StatusOr<int64_t> v = m.Int("sms");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "f.yaml:1: sms: expected an integer, found \"many\"");
}

TEST(YamlMap, DuplicateKeyIsAnError) {
  StatusOr<YamlMap> m = LoadYamlMapString("a: 1\nb: 2\na: 3\n", "f.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "f.yaml:3: a: duplicate key; keep only one");
}

TEST(YamlMap, UnitlessQuantityIsAnError) {
  YamlMap m = *LoadYamlMapString("bw: {value: 200, source: x}\n", "f.yaml");
  StatusOr<Sourced> q = m.Quantity("bw", Dim::kBandwidth);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("f.yaml:1: bw: \"200\": a number needs a unit"),
            std::string::npos);
}

TEST(YamlMap, MalformedYamlReportsLineAndColumn) {
  StatusOr<YamlMap> m = LoadYamlMapString("a: [1, 2\nb: 3\n", "f.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message().rfind("f.yaml:", 0), 0u);
  EXPECT_NE(m.status().message().find("malformed YAML"), std::string::npos);
}

TEST(YamlMap, NestedErrorsNameTheirPath) {
  YamlMap m = *LoadYamlMapString("ib:\n  ports: 8\n  rate: fast\n", "f.yaml");
  YamlMap ib = *m.Map("ib");
  EXPECT_EQ(*ib.Int("ports"), 8);
  StatusOr<Sourced> q = ib.Quantity("rate", Dim::kBandwidth);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().message().rfind("f.yaml:3: ib.rate: ", 0), 0u);
}

TEST(YamlMap, MissingFileIsNotFound) {
  StatusOr<YamlMap> m = LoadYamlMapFile("/nonexistent/x.yaml");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
}

TEST(YamlMap, BoundedReadsNameTheRangeAndNonFiniteNumbersAreErrors) {
  YamlMap m = *LoadYamlMapString("a: 5\nb: 0\nc: .nan\nd: 2.5\n", "f.yaml");
  EXPECT_EQ(*m.IntIn("a", 1, 8), 5);
  EXPECT_EQ(m.IntIn("b", 1, 8).status().message(), "f.yaml:2: b: must be in 1..8 (got 0)");
  EXPECT_FALSE(m.Number("c").ok());
  EXPECT_EQ(m.NumberIn("d", 0, 1).status().message(), "f.yaml:4: d: must be in 0..1 (got 2.5)");
  EXPECT_FALSE(m.OptionalIntIn("missing", 1, 2)->has_value());
  EXPECT_EQ(m.Missing({"a", "x", "b", "y"}), (std::vector<std::string>{"x", "y"}));
}

}  // namespace
}  // namespace ndt
