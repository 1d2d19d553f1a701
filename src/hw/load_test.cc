// Tests of the strict catalog parsers on small bad files (src/hw/testdata/bad, cat_*): every
// error names the file and the line of the offending key. Line numbers below are counted in
// the test files (the GPU file has 16 lines, the VM file 22; see testdata/cat_ok).
#include "hw/load.h"

#include <gtest/gtest.h>

#include <string>

#include "hw/catalog.h"

namespace ndt {
namespace {

const std::string kDir = std::string(NDT_TESTDATA_DIR) + "/";

Status GpuFileError(const std::string& name) {
  StatusOr<YamlMap> m = LoadYamlMapFile(kDir + "bad/" + name);
  if (!m.ok()) return m.status();
  return ParseGpu(*m).status();
}

Status VmFileError(const std::string& name) {
  StatusOr<YamlMap> m = LoadYamlMapFile(kDir + "bad/" + name);
  if (!m.ok()) return m.status();
  return ParseSku(*m).status();
}

// Expects an InvalidInput error whose message starts with "<file>:<line>: " and contains `what`.
void ExpectError(const Status& s, const std::string& file, int line, const std::string& what) {
  ASSERT_FALSE(s.ok()) << file;
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << s.message();
  std::string prefix = kDir + file + ":" + std::to_string(line) + ": ";
  EXPECT_EQ(s.message().rfind(prefix, 0), 0u) << s.message() << "\nwant prefix " << prefix;
  EXPECT_NE(s.message().find(what), std::string::npos) << s.message() << "\nwant " << what;
}

TEST(LoadTest, ValidTestCatalogLoads) {
  StatusOr<Catalog> c = Catalog::Load(kDir + "cat_ok");
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->skus().size(), 1u);
  const SkuSpec& s = c->skus()[0];
  // 8 x 200 Gb/s = 8 x 25e9 B/s; 900 GiB = 900 * 2^30 B; price 10 USD/h from prices.yaml.
  EXPECT_EQ(s.infiniband->ports, 8);
  EXPECT_DOUBLE_EQ(s.infiniband->port_Bps, 25e9);
  EXPECT_DOUBLE_EQ(s.memory_bytes, 900.0 * 1024 * 1024 * 1024);
  ASSERT_TRUE(s.price.has_value());
  EXPECT_DOUBLE_EQ(s.price->usd_per_hour, 10.0);
  EXPECT_EQ(s.field_sources.at("vcpus"), "test");
  EXPECT_EQ(s.field_sources.at("infiniband.port_bw"), "test");
}

TEST(LoadTest, UnknownKeyNamesFileAndLine) {
  ExpectError(GpuFileError("gpu_unknown_key.yaml"), "bad/gpu_unknown_key.yaml", 17,
              "tflops: unknown key");
}

TEST(LoadTest, MissingKeyNamesFileAndMapLine) {
  ExpectError(GpuFileError("gpu_missing_key.yaml"), "bad/gpu_missing_key.yaml", 1,
              "memory_bw: missing required key");
}

TEST(LoadTest, UnitlessQuantityIsAnError) {
  ExpectError(GpuFileError("gpu_unitless.yaml"), "bad/gpu_unitless.yaml", 9, "fp32");
}

TEST(LoadTest, WrongDimensionIsAnError) {
  ExpectError(GpuFileError("gpu_wrong_unit.yaml"), "bad/gpu_wrong_unit.yaml", 9, "fp32");
}

TEST(LoadTest, NumberWithoutSourceIsAnError) {
  ExpectError(GpuFileError("gpu_no_source.yaml"), "bad/gpu_no_source.yaml", 10, "bf16: no source");
}

TEST(LoadTest, WrongTypeIsAnError) {
  ExpectError(GpuFileError("gpu_wrong_type.yaml"), "bad/gpu_wrong_type.yaml", 4, "sm_version");
}

TEST(LoadTest, DuplicateKeyIsAnError) {
  ExpectError(GpuFileError("gpu_duplicate_key.yaml"), "bad/gpu_duplicate_key.yaml", 8,
              "memory_type: duplicate key");
}

TEST(LoadTest, UnknownFabricSuggestsTheClosest) {
  ExpectError(VmFileError("vm_bad_fabric.yaml"), "bad/vm_bad_fabric.yaml", 14,
              "unknown value 'nvswich'; did you mean 'nvswitch'?");
}

TEST(LoadTest, UnknownFeatureSuggestsTheClosest) {
  ExpectError(VmFileError("vm_bad_feature.yaml"), "bad/vm_bad_feature.yaml", 22,
              "features.live_migrations: unknown feature; did you mean 'live_migration'?");
}

TEST(LoadTest, InfinibandMustBeStatedEvenWhenNone) {
  ExpectError(VmFileError("vm_missing_infiniband.yaml"), "bad/vm_missing_infiniband.yaml", 1,
              "infiniband: missing required key");
}

TEST(LoadTest, PcieSwitchesMustCoverTheGpus) {
  // 4 switches x 3 GPUs = 12 != 8 GPUs.
  ExpectError(VmFileError("vm_pcie_mismatch.yaml"), "bad/vm_pcie_mismatch.yaml", 19,
              "must equal gpus (8)");
}

// The exponential rate is stated beside the MMA rate it compares with: one without the other is
// an error naming the missing key (at the map's line, 1).
TEST(LoadTest, ExpRateNeedsTheTensorRate) {
  ExpectError(GpuFileError("gpu_sfu_without_mma.yaml"), "bad/gpu_sfu_without_mma.yaml", 1,
              "tensor_16bit_flops_per_clk_per_sm: tensor_16bit_flops_per_clk_per_sm and "
              "sfu_exp_per_clk_per_sm go together");
}

TEST(LoadTest, CountsMustBeWholeNumbers) {
  ExpectError(VmFileError("vm_fractional_count.yaml"), "bad/vm_fractional_count.yaml", 5,
              "vcpus: expected a whole number");
}

TEST(LoadTest, DuplicateSizeAcrossFilesNamesBothFiles) {
  StatusOr<Catalog> c = Catalog::Load(kDir + "cat_dup_size");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("cat_dup_size/vms/b.yaml: VM size name 'Standard_Test8'"),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("cat_dup_size/vms/a.yaml"), std::string::npos);
}

TEST(LoadTest, UnknownGpuNamesTheFileAndLine) {
  ExpectError(Catalog::Load(kDir + "cat_unknown_gpu").status(), "cat_unknown_gpu/vms/test8.yaml", 8,
              "unknown GPU 'TestGPUX'");
}

TEST(LoadTest, PriceForUnknownSizeIsAnError) {
  ExpectError(Catalog::Load(kDir + "cat_price_unknown").status(), "cat_price_unknown/prices.yaml",
              2, "unknown VM size 'Test9'");
}

TEST(LoadTest, MissingDirectoryIsNotFound) {
  StatusOr<Catalog> c = Catalog::Load(kDir + "no_such_dir");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ndt
