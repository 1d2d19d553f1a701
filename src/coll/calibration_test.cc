// The fitted constants in data/calibration/nccl.yaml equal the compiled-in NcclCalibration, and
// the validation suite reads the calibration sweep.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "coll/nccl_model.h"
#include "coll/validate.h"
#include "core/units.h"
#include "hw/catalog.h"

namespace ndt {
namespace {

TEST(Calibration, YamlMatchesDefaults) {
  std::ifstream in(std::string(NDT_DATA_DIR) + "/calibration/nccl.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  NcclCalibration cal;
  EXPECT_DOUBLE_EQ(cal.bw_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(cal.call_overhead_s, 30e-6);
  EXPECT_DOUBLE_EQ(cal.simple_step_sync_s, 8e-6);
  EXPECT_DOUBLE_EQ(cal.ll128_bw_ratio, 0.72);
  EXPECT_NE(text.find("bw_efficiency:\n  value: 1.0\n"), std::string::npos);
  EXPECT_NE(text.find("call_overhead:\n  value: 30 us"), std::string::npos);
  EXPECT_NE(text.find("simple_step_sync:\n  value: 8 us"), std::string::npos);
  EXPECT_NE(text.find("ll128_bw_ratio:\n  value: 0.72\n"), std::string::npos);
}

TEST(Validate, LabelsArePowersOfTwo) {
  EXPECT_DOUBLE_EQ(*LabelBytes("33M"), 33554432.0);
  EXPECT_DOUBLE_EQ(*LabelBytes("65K"), 65536.0);
  EXPECT_DOUBLE_EQ(*LabelBytes("8G"), 8589934592.0);
  EXPECT_EQ(*SkuForSystem("ND A100 v4 (A100-SXM4-80GB; i.e. NDm A100 v4 hardware)"),
            "Standard_ND96amsr_A100_v4");
  EXPECT_EQ(*SkuForSystem("ND H200 v5"), "Standard_ND96isr_H200_v5");
  EXPECT_FALSE(SkuForSystem("TPU v5").ok());
}

TEST(Validate, CalibrationSweepRowsAreMarkedAndLargeSizesWithinFivePercent) {
  Catalog cat = *Catalog::Load(NDT_DATA_DIR);
  StatusOr<std::vector<ValidationRow>> rows = ValidateCollectives(cat, NDT_SHARED_DIR);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  int calib = 0;
  for (const ValidationRow& r : *rows) {
    if (!r.calibration) continue;
    ++calib;
    // Sizes >= 256 MiB are bandwidth-bound: the efficiency fit must hold there.
    std::string label = r.case_id.substr(r.case_id.rfind(' ') + 1);
    if (*LabelBytes(label) >= 256.0 * (1 << 20)) {
      EXPECT_LT(std::abs(r.error()), 0.05) << r.case_id;
    }
  }
  EXPECT_EQ(calib, 24);
}

}  // namespace
}  // namespace ndt
