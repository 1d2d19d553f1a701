#include "serve/validate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "model/transformer.h"
#include "serve/testing.h"

namespace ndt {
namespace {

TransformerSpec Llama3_70b() {
  StatusOr<TransformerSpec> m = LoadModel("llama3-70b", ModelsDir(NDT_DATA_DIR));
  NDT_CHECK(m.ok(), m.status().message());
  return *m;
}

TEST(TrtllmBenchKnobs, MatchTheMaxThroughputHeuristic) {
  // Llama 3 70B (80 layers, 8 KV heads of 128, 70,553,706,496 parameters) on a B200 (178.35
  // GiB), FP4 weights, FP8 KV, TP1, 1000/1000: KV per token 2 x 80 x 8 x 128 x 1 B = 163,840 B
  // = 1.5259e-4 GiB; weights 70,553,706,496 x 0.5 B = 32.854 GiB; requests = (178.35 - 32.854)
  // x 0.95 / (1.5259e-4 x 2000) = 452.9 -> batch (256..1024: up to 128) 512; tokens 452.9 x 2 =
  // 906 -> below 4096, up to 256 but at least 2048: 2048. (fit_serving.trtllm_bench_knobs says
  // (512, 2048).)
  const TransformerSpec m = Llama3_70b();
  ASSERT_DOUBLE_EQ(CountParams(m).total, 70553706496.0);
  const double b200 = 178.35 * 1024 * 1024 * 1024;
  EXPECT_EQ(TrtllmBenchKnobs(m, b200, Dtype::kFp4, Dtype::kFp8, 1, 1, 1000, 1000),
            std::make_pair(512, 2048));
  // GB200 (184.31 GiB) x TP4, FP8 weights (65.708 GiB), 128/128: requests = (737.24 - 65.708) x
  // 0.95 / (1.5259e-4 x 256) = 16,332 -> capped at 4096 -> batch 4096 (a multiple of 256); tokens
  // 4096 x 2 = 8192, not below 8192 -> up to 1024: 8192.
  const double gb200 = 184.31 * 1024 * 1024 * 1024;
  EXPECT_EQ(TrtllmBenchKnobs(m, gb200, Dtype::kFp8, Dtype::kFp8, 4, 1, 128, 128),
            std::make_pair(4096, 8192));
  // B200, FP4, 2048/2048: requests = 145.496 x 0.95 / (1.5259e-4 x 4096) = 221.2 -> batch (below
  // 256: up to 32) 224; tokens 221.2 x 2 = 442 -> 2048; but without chunked prefill at least the
  // longest prompt + max batch = 2048 + 224 = 2272.
  EXPECT_EQ(TrtllmBenchKnobs(m, b200, Dtype::kFp4, Dtype::kFp8, 1, 1, 2048, 2048),
            std::make_pair(224, 2272));
}

TEST(ServingStandIns, AddADgxB200OnNdH100V5sLayout) {
  const Catalog& cat = *testing::BuiltinServeData().catalog;
  StatusOr<Catalog> with = WithServingStandIns(cat);
  ASSERT_TRUE(with.ok()) << with.status().message();
  StatusOr<const SkuSpec*> b = with->FindSku("Calibration_DGX_B200");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ((*b)->gpu, "B200");
  EXPECT_EQ((*b)->gpus, 8);
  EXPECT_DOUBLE_EQ((*b)->gpu_memory_bytes, 180e9);
  EXPECT_FALSE(cat.FindSku("Calibration_DGX_B200").ok());  // data/'s catalog is untouched
  // Twice is an error, not a second size.
  EXPECT_FALSE(WithServingStandIns(*with).ok());
}

// A shared dir holding serving.csv with `rows` (after the header); returns its path.
std::filesystem::path SharedWith(const std::string& rows) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "ndt_serving_calibration_test";
  std::filesystem::create_directories(dir / "validation" / "calibration");
  std::ofstream(dir / "validation" / "calibration" / "serving.csv")
      << "system,metric,value,unit,conditions,source,note\n" + rows;
  return dir;
}

StatusOr<std::vector<ValidationRow>> RunOn(const std::string& rows) {
  const std::filesystem::path dir = SharedWith(rows);
  StatusOr<Catalog> cat = WithServingStandIns(*testing::BuiltinServeData().catalog);
  NDT_CHECK(cat.ok(), cat.status().message());
  ServeData data = testing::BuiltinServeData();
  data.catalog = &*cat;
  StatusOr<std::vector<ValidationRow>> out = ValidateServingCalibration(data, dir.string());
  std::filesystem::remove_all(dir);
  return out;
}

// The Azure GB200 8B throughput (run: 46,703 tok/s on 1 GPU), a v0.20 B200 row (run on the
// stand-in, 9,580.46 per TP1 group = per GPU), the v0.14 H100 TP1 row (memory-bound, not fitted:
// left out) and a DeepSeek-R1 row (not expressible: left out).
const char* kRows =
    "Azure ND GB200 v6 (1 VM),TRT-LLM Llama-3.1-8B FP8 TP1 throughput ISL/OSL "
    "128/1024,46703,tok/s (1 GPU),c,azure,n\n"
    "B200 x1,TRT-LLM v0.20 Llama-3.3-70B FP4 TP1 total output tok/s ISL/OSL "
    "128/2048,9580.46,tok/s per TP group,c,trt,n\n"
    "H100 80GB x1,TRT-LLM v0.14 LLaMA-v3-70B FP8 TP1 total tok/s ISL/OSL "
    "1000/1000,464.5243,tok/s per TP group,c,trt,n\n"
    "8x H200,DeepSeek-R1 FP8 max-throughput total output tok/s,11489.2671,tok/s,c,trt,n\n";

TEST(ValidateServingCalibration, RunsTheRowsFitServingFits) {
  StatusOr<std::vector<ValidationRow>> rows = RunOn(kRows);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  const ValidationRow& a = (*rows)[0];
  EXPECT_EQ(a.case_id, "calibration Azure GB200 8B FP8 TP1 128/1024");
  EXPECT_EQ(a.sku, "Standard_ND128isr_NDR_GB200_v6");
  EXPECT_DOUBLE_EQ(a.measured, 46703);
  EXPECT_TRUE(a.calibration);
  EXPECT_EQ(a.metric, "output_tokens_per_s");
  EXPECT_TRUE(a.refused.empty()) << a.refused;
  EXPECT_GT(a.predicted, 0);
  const ValidationRow& b = (*rows)[1];
  EXPECT_EQ(b.case_id, "calibration TRT-LLM v0.20 B200 70B FP4 TP1 128/2048");
  EXPECT_EQ(b.sku, "Calibration_DGX_B200");
  EXPECT_DOUBLE_EQ(b.measured, 9580.46);
  EXPECT_TRUE(b.refused.empty()) << b.refused;
  EXPECT_GT(b.predicted, 0);
}

TEST(ValidateServingCalibration, ATpotRowWithoutItsRunsRateIsAnError) {
  // The v4.1 H100 Server TPOT runs at the measured rate of its tokens/s row; without that row
  // the case cannot be run, and the error names the TPOT row's line (6: header + 4 + 1).
  StatusOr<std::vector<ValidationRow>> rows =
      RunOn(std::string(kRows) +
            "DGX H100 8x H100,MLPerf v4.1 Llama2-70B Server mean TPOT,154.96,ms,c,mlperf,n\n");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(
      rows.status().message().find("serving.csv:6: no Server tokens/s or mean TPOT for this run"),
      std::string::npos)
      << rows.status().message();
}

TEST(ValidateServingCalibration, NoTableNoRows) {
  StatusOr<Catalog> cat = WithServingStandIns(*testing::BuiltinServeData().catalog);
  ASSERT_TRUE(cat.ok());
  ServeData data = testing::BuiltinServeData();
  data.catalog = &*cat;
  StatusOr<std::vector<ValidationRow>> rows =
      ValidateServingCalibration(data, "/nonexistent-ndtwin-shared");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_TRUE(rows->empty());
}

}  // namespace
}  // namespace ndt
