// Tests of the precision and enum helpers of hw/spec.h.
#include "hw/spec.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

TEST(SpecTest, BytesPerPrecision) {
  EXPECT_EQ(BytesPer(Precision::kFp64), 8);
  EXPECT_EQ(BytesPer(Precision::kBf16), 2);
  EXPECT_EQ(BytesPer(Precision::kFp8), 1);
  EXPECT_EQ(BytesPer(Precision::kFp4), 0.5);
}

TEST(SpecTest, PrecisionNamesRoundTripCaseInsensitive) {
  for (Precision p : {Precision::kFp64, Precision::kFp32, Precision::kTf32, Precision::kFp16,
                      Precision::kBf16, Precision::kFp8, Precision::kFp4, Precision::kInt8}) {
    Precision q = Precision::kFp64;
    std::string upper = PrecisionName(p);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ASSERT_TRUE(ParsePrecision(upper, &q)) << upper;
    EXPECT_EQ(q, p);
  }
  Precision q;
  EXPECT_FALSE(ParsePrecision("fp12", &q));
}

TEST(SpecTest, PeakFlopsPicksThePrecisionAndZeroWhenAbsent) {
  GpuSpec g;
  g.fp64_flops = 9.7e12;
  g.fp64_tensor_flops = 19.5e12;
  g.bf16_flops = 312e12;
  EXPECT_EQ(g.PeakFlops(Precision::kBf16), 312e12);
  EXPECT_EQ(g.PeakFlops(Precision::kFp64), 19.5e12);  // tensor fp64 is the faster path
  EXPECT_EQ(g.PeakFlops(Precision::kFp8), 0);
}

TEST(SpecTest, EnumNamesMatchTheYamlSpelling) {
  EXPECT_STREQ(IntraVmFabricName(IntraVmFabric::kNvlinkCubeMesh), "nvlink_cube_mesh");
  EXPECT_STREQ(IntraVmFabricName(IntraVmFabric::kNvl72), "nvl72");
  EXPECT_STREQ(NicAffinityName(NicAffinity::kPerGpuC2c), "per_gpu_c2c");
  EXPECT_STREQ(NicAffinityName(NicAffinity::kNone), "none");
}

}  // namespace
}  // namespace ndt
