// Tests of the fleet model: the data reproduce the counts they were fitted on, the Monte Carlo
// agrees with the closed form, MTBI scales as 1/N, the simulated optimum interval agrees with
// Daly's, and a seed gives the same result on any thread count.
#include "fleet/fleet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>

#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/fabric_params.h"

namespace ndt {
namespace {

class Fleet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    StatusOr<Catalog> c = Catalog::Load(NDT_DATA_DIR);
    ASSERT_TRUE(c.ok()) << c.status().message();
    catalog_ = new Catalog(std::move(c).value());
    StatusOr<FleetData> d = LoadFleetData(NDT_DATA_DIR);
    ASSERT_TRUE(d.ok()) << d.status().message();
    data_ = new FleetData(std::move(d).value());
    StatusOr<FabricParams> f = LoadFabricParams(NDT_DATA_DIR);
    ASSERT_TRUE(f.ok()) << f.status().message();
    fabric_ = new FabricParams(*f);
  }
  static Cluster Build(const char* sku, int vms) {
    StatusOr<const SkuSpec*> s = catalog_->FindSku(sku);
    EXPECT_TRUE(s.ok()) << s.status().message();
    ClusterSpec spec;
    spec.sku = *s;
    spec.gpu = &catalog_->GpuOf(**s);
    spec.vms = vms;
    spec.fabric.tiers = ChooseTiers(spec);
    StatusOr<Cluster> c = BuildCluster(spec, *fabric_);
    EXPECT_TRUE(c.ok()) << c.status().message();
    return std::move(c).value();
  }
  // Llama 3 405B's state spread over the GPUs: 405.85B parameters x (2 B bf16 weights + 12 B
  // fp32 master weights and Adam moments) / GPUs.
  static double LlamaBytesPerGpu(int gpus) { return 405.85e9 * 14 / gpus; }

  static Catalog* catalog_;
  static FleetData* data_;
  static FabricParams* fabric_;
};
Catalog* Fleet::catalog_ = nullptr;
FleetData* Fleet::data_ = nullptr;
FabricParams* Fleet::fabric_ = nullptr;

TEST_F(Fleet, DataHoldLlama3Counts) {
  // reliability.csv: 419 unexpected and 47 planned interruptions in 54 days.
  double unexpected = 0, planned = 0;
  for (const FailureClass& c : data_->reliability.classes)
    (c.planned ? planned : unexpected) += c.count;
  EXPECT_EQ(unexpected, 419);
  EXPECT_EQ(planned, 47);
}

TEST_F(Fleet, LoaderRejectsARateThatIsNotCountOverExposure) {
  std::ifstream in(std::string(NDT_DATA_DIR) + "/reliability.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string rel = ss.str();
  const size_t at = rel.find("rate_per_unit_hour: 9.23063e-6");
  ASSERT_NE(at, std::string::npos);
  rel.replace(at, 30, "rate_per_unit_hour: 9.9e-6");
  auto read = [](const char* f) {
    std::ifstream i(std::string(NDT_DATA_DIR) + "/" + f);
    std::stringstream s;
    s << i.rdbuf();
    return s.str();
  };
  StatusOr<FleetData> d = ParseFleetData(rel, read("storage.yaml"), read("placement.yaml"));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("rate_per_unit_hour"), std::string::npos);
}

// The Llama 3 job as Meta ran it: 16,384 H100 on 2,048 VMs for 54 days, checkpoints to storage
// as fast as Tectonic's 2 TB/s sustained (reliability_checkpointing.csv), async, hot spares.
TEST_F(Fleet, Llama3CalibrationConsistency) {
  const Cluster cl = Build("Standard_ND96isr_H100_v5", 2048);
  const FleetCluster fc = DescribeCluster(cl);
  EXPECT_EQ(fc.gpus, 16384);
  EXPECT_EQ(fc.nics, 16384);
  EXPECT_EQ(fc.switches, 1280);  // the exposure reliability.yaml assumes
  const double bytes = LlamaBytesPerGpu(fc.gpus);
  StatusOr<CheckpointPlan> ck =
      PlanCheckpoint(*data_, fc, CheckpointTarget::kLustre, true, bytes, bytes * fc.gpus, 2e12);
  ASSERT_TRUE(ck.ok()) << ck.status().message();
  const FleetModel m = BuildFleetModel(data_->reliability, fc, *ck, 1.0, 16, false, 5.25);
  RunLength len;
  len.wall_s = 54 * 86400.0;
  const double tau = OptimizeInterval(m, len, std::max(5.25, ck->write_s), 100, 1, 1);
  const MonteCarloResult mc = RunMonteCarlo(m, tau, len, 1000, 7, 1);
  // Expected counts are rate x units x 1,296 h: 419 and 47 by construction of the fit. The mean
  // of 1000 Poisson(419) draws has a standard error of 0.65.
  EXPECT_NEAR(mc.unexpected_mean, 419, 419 * 0.01);
  EXPECT_NEAR(mc.planned_mean, 47, 47 * 0.03);
  EXPECT_NEAR(EvaluateClosedForm(m, tau).mtbi_s / 3600, 1296.0 / 419, 0.01);
  // Llama 3 paper: "more than 90% effective training time".
  EXPECT_GT(mc.goodput.mean, 0.90);
  EXPECT_LT(mc.goodput.mean, 1.0);
}

// A synthetic cluster of n 8-GPU VMs: every unit count proportional to n.
FleetCluster Synthetic(const SkuSpec* sku, int vms) {
  FleetCluster c;
  c.sku = sku;
  c.vms = vms;
  c.gpus_per_vm = 8;
  c.gpus = c.nics = 8 * vms;
  c.switches = vms / 2;
  c.host_link_Bps = 64e9;
  c.nic_Bps = 50e9;
  return c;
}

TEST_F(Fleet, MtbiFallsAsOneOverN) {
  StatusOr<const SkuSpec*> sku = catalog_->FindSku("Standard_ND96isr_H100_v5");
  ASSERT_TRUE(sku.ok());
  CheckpointPlan ck;
  const double m1 =
      EvaluateClosedForm(
          BuildFleetModel(data_->reliability, Synthetic(*sku, 128), ck, 1, 0, false, 1), 600)
          .mtbi_s;
  const double m2 =
      EvaluateClosedForm(
          BuildFleetModel(data_->reliability, Synthetic(*sku, 1024), ck, 1, 0, false, 1), 600)
          .mtbi_s;
  EXPECT_NEAR(m1 / m2, 8.0, 1e-9);
  // On the clusters topo builds (switch counts are not exactly proportional): within 10%.
  const double r1 =
      EvaluateClosedForm(BuildFleetModel(data_->reliability,
                                         DescribeCluster(Build("Standard_ND96isr_H100_v5", 256)),
                                         ck, 1, 0, false, 1),
                         600)
          .mtbi_s;
  const double r2 =
      EvaluateClosedForm(BuildFleetModel(data_->reliability,
                                         DescribeCluster(Build("Standard_ND96isr_H100_v5", 1024)),
                                         ck, 1, 0, false, 1),
                         600)
          .mtbi_s;
  EXPECT_NEAR(r1 / r2, 4.0, 0.4);
}

// A model with only unexpected failures and a fixed restart: Daly's assumptions.
FleetModel DalyModel(double block_s, double mtbi_s, double restart_s) {
  FleetModel m;
  m.classes.push_back({"gpu", false, false, 1 / mtbi_s});
  m.unexpected_per_s = 1 / mtbi_s;
  m.gpus = 8192;
  m.vms = 1024;
  m.detection_s = restart_s;
  m.write_s = m.block_s = block_s;
  m.step_s = 1;
  return m;
}

TEST_F(Fleet, MonteCarloMeanMatchesClosedForm) {
  // Sync checkpoints of 60 s every 20 min, MTBI 3 h, 15 min restarts, 54 days.
  const FleetModel m = DalyModel(60, 3 * 3600, 900);
  RunLength len;
  len.wall_s = 54 * 86400.0;
  const MonteCarloResult mc = RunMonteCarlo(m, 1200, len, 2000, 3, 1);
  const double cf = EvaluateClosedForm(m, 1200).goodput;
  EXPECT_NEAR(mc.goodput.mean / cf, 1.0, 0.02);
  // And with the Llama 3 cluster's classes (spares, planned maintenance), sync to Lustre.
  const FleetCluster fc = DescribeCluster(Build("Standard_ND96isr_H100_v5", 2048));
  const double bytes = LlamaBytesPerGpu(fc.gpus);
  StatusOr<CheckpointPlan> ck = PlanCheckpoint(*data_, fc, CheckpointTarget::kLustre, false, bytes,
                                               bytes * fc.gpus, std::nullopt);
  ASSERT_TRUE(ck.ok()) << ck.status().message();
  const FleetModel lm = BuildFleetModel(data_->reliability, fc, *ck, 1.0, 32, false, 5.25);
  const double tau = 1800;
  const MonteCarloResult lmc = RunMonteCarlo(lm, tau, len, 1000, 5, 1);
  EXPECT_NEAR(lmc.goodput.mean / EvaluateClosedForm(lm, tau).goodput, 1.0, 0.02);
}

TEST_F(Fleet, SimulatedOptimumAgreesWithDaly) {
  // Daly's regime: blocking time well below the MTBI (60 s vs 3 h): his interval is
  // sqrt(2 x 60 x 10800) (1 + sqrt(x)/3 + x/9) - 60 with x = 60 / 21600: 1138.4 x 1.01788 - 60
  // = 1,098.8 s. The goodput curve is flat near the optimum,
  // so agreement within 25%.
  const FleetModel m = DalyModel(60, 3 * 3600, 600);
  RunLength len;
  len.wall_s = 200 * 86400.0;
  const double daly = EvaluateClosedForm(m, 1000).daly_interval_s;
  EXPECT_NEAR(daly, 1098.8, 0.1);
  const double best = OptimizeInterval(m, len, 60, 200, 11, 1);
  EXPECT_NEAR(best / daly, 1.0, 0.25);
}

TEST_F(Fleet, SameSeedSameResultOnAnyThreadCount) {
  const FleetModel m = DalyModel(30, 2 * 3600, 600);
  RunLength len;
  len.work_s = 20 * 86400.0;
  const MonteCarloResult a = RunMonteCarlo(m, 900, len, 300, 42, 1);
  const MonteCarloResult b = RunMonteCarlo(m, 900, len, 300, 42, 4);
  const MonteCarloResult c = RunMonteCarlo(m, 900, len, 300, 43, 1);
  EXPECT_EQ(a.wall_s.p10, b.wall_s.p10);
  EXPECT_EQ(a.wall_s.p50, b.wall_s.p50);
  EXPECT_EQ(a.wall_s.mean, b.wall_s.mean);
  EXPECT_EQ(a.lost_gpu_hours_mean, b.lost_gpu_hours_mean);
  EXPECT_NE(a.wall_s.mean, c.wall_s.mean);
  // Every run does exactly the work asked.
  EXPECT_DOUBLE_EQ(a.work_s.p10, len.work_s);
  EXPECT_DOUBLE_EQ(a.work_s.p90, len.work_s);
}

TEST_F(Fleet, NoFailuresMeansOnlyCheckpointOverhead) {
  // failure-free: wall = work + (checkpoints - 1) x block: 10 h of work, a 10 s block every
  // 1000 s: 36 checkpoints between 36 intervals... ceil(36000/1000) = 36 intervals, 35 blocks.
  FleetModel m = DalyModel(10, 3600, 600);
  m.classes[0].per_s = m.unexpected_per_s = 0;
  RunLength len;
  len.work_s = 36000;
  const RunOutcome o = SimulateRun(m, 1000, len, 1);
  EXPECT_DOUBLE_EQ(o.wall_s, 36000 + 35 * 10);
  EXPECT_DOUBLE_EQ(o.lost_s.back(), 350);
}

TEST_F(Fleet, NoFailuresMeansNoCheckpointAtTheOptimum) {
  // With no interruptions every checkpoint is lost time, so the best interval takes none: an
  // interval of the whole run. Run length 30 days = 2,592,000 s (wall) or 36,000 s of work; a
  // 10 s block, 1 s steps, shortest interval 10 s. Before, the search stopped at 64 x the
  // shortest interval (640 s, then refined to ~800 s), so --failure-scale 0 paid a block every
  // ~800 s (goodput 98.8%) and did worse than --failure-scale 0.01 (99.6%).
  FleetModel m = DalyModel(10, 3600, 600);
  m.classes[0].per_s = m.unexpected_per_s = 0;
  RunLength days;
  days.wall_s = 30 * 86400.0;
  const double tau_days = OptimizeInterval(m, days, 10, 20, 1, 1);
  EXPECT_GE(tau_days, days.wall_s);
  EXPECT_DOUBLE_EQ(RunMonteCarlo(m, tau_days, days, 20, 1, 1).goodput.mean, 1.0);
  RunLength work;
  work.work_s = 36000;
  const double tau_work = OptimizeInterval(m, work, 10, 20, 1, 1);
  EXPECT_GE(tau_work, work.work_s);
  // ceil(36000 / tau) = 1 interval, so no block: wall = work.
  EXPECT_DOUBLE_EQ(SimulateRun(m, tau_work, work, 1).wall_s, 36000);
}

TEST(CheckpointBytes, FollowZeroStage) {
  // One stage's state per GPU: 10 GB weights, 60 GB optimizer before sharding, 4 replicas.
  Strategy s;
  s.dp = 4;
  MemoryBreakdown m;
  m.weights_bytes = 10e9;
  m.optimizer_bytes = 60e9;
  s.zero = 0;  // the first replica writes all of it
  EXPECT_DOUBLE_EQ(CheckpointBytesPerGpu(m, s), 70e9);
  EXPECT_DOUBLE_EQ(CheckpointTotalBytes(70e9, s, 16), 70e9 * 4);
  s.zero = 1;  // optimizer sharded by the memory model (15 GB); weights deduplicated (2.5 GB)
  m.optimizer_bytes = 15e9;
  EXPECT_DOUBLE_EQ(CheckpointBytesPerGpu(m, s), 17.5e9);
  EXPECT_DOUBLE_EQ(CheckpointTotalBytes(17.5e9, s, 16), 17.5e9 * 16);
  s.zero = 3;  // weights already sharded by the memory model
  m.weights_bytes = 2.5e9;
  EXPECT_DOUBLE_EQ(CheckpointBytesPerGpu(m, s), 17.5e9);
  // MoE, ep 2, ZeRO-1: 8 of the 10 GB of weights are experts, each held by 4 / 2 = 2 ranks, so
  // a GPU writes 2 / 4 + 8 / 2 = 4.5 GB of weights (not 10 / 4 = 2.5): 15 + 4.5 = 19.5 GB.
  s.zero = 1;
  s.ep = 2;
  m.weights_bytes = 10e9;
  m.expert_weights_bytes = 8e9;
  EXPECT_DOUBLE_EQ(CheckpointBytesPerGpu(m, s), 19.5e9);
}

TEST_F(Fleet, CheckpointTimesFollowThePerVmLimits) {
  // ND96amsr_A100_v4: max uncached disk throughput 800 MB/s (seed 000). 1 GB per GPU, 8 GPUs:
  // 8 GB per VM: 10 s, plus the device-to-host copy.
  const FleetCluster fc = DescribeCluster(Build("Standard_ND96amsr_A100_v4", 4));
  StatusOr<CheckpointPlan> md =
      PlanCheckpoint(*data_, fc, CheckpointTarget::kManagedDisk, false, 1e9, 32e9, std::nullopt);
  ASSERT_TRUE(md.ok()) << md.status().message();
  EXPECT_NEAR(md->write_s - md->d2h_s, 10.0, 1e-9);
  EXPECT_DOUBLE_EQ(md->block_s, md->write_s);
  // Blob: 24,000 Mbps front-end per VM = 3 GB/s; 4 VMs x 3 GB/s < 60 Gbps (7.5 GB/s) account:
  // 8 GB / 1.875 GB/s (the account's share per VM) = 4.27 s.
  StatusOr<CheckpointPlan> bl =
      PlanCheckpoint(*data_, fc, CheckpointTarget::kBlob, true, 1e9, 32e9, std::nullopt);
  ASSERT_TRUE(bl.ok());
  EXPECT_NEAR(bl->write_s - bl->d2h_s, 8e9 / (7.5e9 / 4), 1e-6);
  EXPECT_DOUBLE_EQ(bl->block_s, bl->d2h_s);  // async: only the copy blocks
  // The H100 size publishes no uncached disk throughput: managed-disk is refused.
  const FleetCluster h = DescribeCluster(Build("Standard_ND96isr_H100_v5", 2));
  EXPECT_FALSE(
      PlanCheckpoint(*data_, h, CheckpointTarget::kManagedDisk, false, 1e9, 16e9, std::nullopt)
          .ok());
  // 1000 GiB temp disk cannot hold two checkpoints of 8 x 100 GB.
  EXPECT_FALSE(
      PlanCheckpoint(*data_, h, CheckpointTarget::kNvme, false, 100e9, 1.6e12, std::nullopt).ok());
}

TEST_F(Fleet, PlacementFollowsAzureLimits) {
  const SkuSpec& h100 = **catalog_->FindSku("Standard_ND96isr_H100_v5");
  const SkuSpec& gb300 = **catalog_->FindSku("Standard_ND128isr_GB300_v6");
  const PlacementData& d = data_->placement;
  StatusOr<Placement> small = PlanPlacement(d, h100, 64, 4, false);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->scale_sets, 1);
  EXPECT_TRUE(small->warnings.empty());
  StatusOr<Placement> raised = PlanPlacement(d, h100, 250, 0, false);  // > 100: on request
  ASSERT_TRUE(raised.ok());
  EXPECT_EQ(raised->warnings.size(), 1u);
  EXPECT_FALSE(PlanPlacement(d, h100, 290, 20, false).ok());  // spares in another scale set
  StatusOr<Placement> big = PlanPlacement(d, h100, 2048, 16, false);
  ASSERT_TRUE(big.ok());
  EXPECT_TRUE(big->azure_arranged);
  EXPECT_EQ(big->scale_sets, 7);  // ceil(2064 / 300)
  EXPECT_EQ(PlanPlacement(d, h100, 2048, 0, true).status().code(), StatusCode::kInfeasible);
  StatusOr<Placement> racks = PlanPlacement(d, gb300, 64 * 18, 0, false);
  ASSERT_TRUE(racks.ok());
  EXPECT_EQ(racks->racks, 64);
}

}  // namespace
}  // namespace ndt
