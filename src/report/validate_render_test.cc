#include "report/validate_render.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ndt {
namespace {

ValidationRow Row(const std::string& id, double measured, double predicted,
                  const std::string& refused = "", bool calibration = false) {
  ValidationRow r;
  r.case_id = id;
  r.metric = "tflops_per_gpu";
  r.unit = "TFLOP/s";
  r.measured = measured;
  r.predicted = predicted;
  r.refused = refused;
  r.calibration = calibration;
  r.source = "paper";
  return r;
}

// Three validation cases with errors +10%, -5%, +2%, one refused case and one calibration case
// (+1%).
ValidateView View() {
  ValidateView v;
  v.data = "../shared";
  v.suites.push_back({"training",
                      {Row("a", 100, 110), Row("b", 100, 95), Row("c", 200, 204),
                       Row("r", 50, 0, "does not fit"), Row("k", 100, 101, "", true)}});
  return v;
}

TEST(ValidateRender, SummaryLeavesOutRefusedCases) {
  std::vector<ValidationRow> rows = View().suites[0].rows;
  rows.pop_back();  // the calibration case
  const ValidationSummary s = SummarizeErrors(rows);
  // |errors| 0.10, 0.05, 0.02: mean 0.17 / 3, median 0.05, max 0.10 at "a"; "r" refused.
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.refused, 1);
  EXPECT_NEAR(s.mean, 0.17 / 3, 1e-12);
  EXPECT_NEAR(s.median, 0.05, 1e-12);
  EXPECT_NEAR(s.max, 0.10, 1e-12);
  EXPECT_EQ(s.worst, "a");
}

TEST(ValidateRender, TextSummarizesValidationAndCalibrationApart) {
  const std::string text = ValidateText(View());
  // 3 predicted + 1 refused validation cases, 1 calibration case.
  EXPECT_EQ(text.find("== training (4 validation cases, 1 calibration cases)\n"), 0u) << text;
  // Column widths: "case" (4) and "tflops_per_gpu" (14); errors as %+7.1f.
  EXPECT_NE(text.find("\na    tflops_per_gpu          100          110   +10.0%\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nr    tflops_per_gpu           50            -        -  refused: does "
                      "not fit\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nk    tflops_per_gpu          100          101    +1.0%  (calibration)\n"),
            std::string::npos)
      << text;
  // mean 5.67% -> "5.7%".
  EXPECT_NE(text.find("\nvalidation: mean |error| 5.7%, median 5.0%, max 10.0% (a)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\nrefused: 1 case(s) that ran for real"), std::string::npos) << text;
  EXPECT_NE(text.find("\ncalibration fit: mean |error| 1.0%, median 1.0%, max 1.0% (k)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("intervals"), std::string::npos);  // none written
}

TEST(ValidateRender, JsonMarksRefusedRowsAndListsWrittenIntervals) {
  ValidateView v = View();
  Intervals iv;
  IntervalClass c;
  c.name = "Hopper training";
  c.cases = 3;
  c.sources = 3;
  c.p10 = 0.9;
  c.p90 = 1.05;
  iv.classes.push_back(c);
  v.written = &iv;
  const Json j = ValidateJson(v);
  EXPECT_EQ(j["schema"], "ndtwin.validate/1");
  const Json& suite = j["suites"][0];
  EXPECT_EQ(suite["validation"]["cases"], 3);
  EXPECT_EQ(suite["validation"]["refused"], 1);
  EXPECT_EQ(suite["calibration"]["cases"], 1);
  const Json& refused = suite["rows"][3];
  EXPECT_EQ(refused["case"], "r");
  EXPECT_TRUE(refused["predicted"].is_null());
  EXPECT_EQ(refused["refused"], "does not fit");
  EXPECT_NEAR(suite["rows"][0]["error"].get<double>(), 0.10, 1e-12);
  ASSERT_EQ(j["intervals"].size(), 1u);
  EXPECT_EQ(j["intervals"][0]["class"], "Hopper training");
  EXPECT_EQ(j["intervals"][0]["sources"], 3);
  EXPECT_EQ(j["data"], "../shared");  // the view's name for it, never rewritten
  EXPECT_TRUE(ValidateText(v).find("  Hopper training            3 cases  p10 0.900  p90 1.050") !=
              std::string::npos)
      << ValidateText(v);
}

TEST(ValidateRender, DataFolderIsNamedAsGivenOrRelativeToTheRepo) {
  // --data as typed, absolute or not: the user chose what to show.
  EXPECT_EQ(ShownDataDir("../shared", "/srv/app/shared", "/srv/app/ndtwin"), "../shared");
  EXPECT_EQ(ShownDataDir("/mnt/m", "/mnt/m", "/srv/app/ndtwin"), "/mnt/m");
  // Default: ../shared beside the repo (CMake's "<repo>/../shared"), or the repo's own copy.
  EXPECT_EQ(ShownDataDir("", "/srv/app/ndtwin/../shared", "/srv/app/ndtwin"), "../shared");
  EXPECT_EQ(ShownDataDir("", "/srv/app/ndtwin", "/srv/app/ndtwin"), ".");
  EXPECT_EQ(ShownDataDir("", "/srv/app/ndtwin/", "/srv/app/ndtwin"), ".");
  // An installed binary's PREFIX/share/ndtwin, far from the build's repo: its last two names.
  EXPECT_EQ(ShownDataDir("", "/opt/x/share/ndtwin", "/home/ci/src/ndtwin"), "share/ndtwin");
  EXPECT_EQ(ShownDataDir("", "/opt/x/share/ndtwin/", "/home/ci/src/ndtwin"), "share/ndtwin");
  // Nothing shown starts at the root.
  for (const char* dir : {"/srv/app/ndtwin/../shared", "/opt/x/share/ndtwin", "/ndtwin"}) {
    EXPECT_NE(ShownDataDir("", dir, "/home/ci/src/ndtwin").front(), '/') << dir;
  }
}

}  // namespace
}  // namespace ndt
