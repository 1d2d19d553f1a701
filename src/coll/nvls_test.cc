// NVLS (NVLink SHARP) all_reduce in the NCCL model: where NCCL offers it, the multimem bound,
// NCCL's NVLS graph and chunk rules, the kernel's pipeline, and an NVL72 rack.
#include <gtest/gtest.h>

#include <vector>

#include "coll/coll_testing.h"
#include "coll/collective.h"
#include "coll/nccl_model.h"
#include "coll/testing.h"

namespace ndt {
namespace {

TEST(Coll, NvlsOnlyWhereNvSwitchMulticastExists) {
  Env e;
  Cluster a100 = e.Build("Standard_ND96amsr_A100_v4", 1);
  Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 1);
  CollOptions o;
  o.algo = Algo::kNvls;
  StatusOr<CollResult> bad =
      testing::TimeCollectiveCal(a100, CollOp::kAllReduce, 1 << 30, All(a100), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("NVLS needs NVSwitch multicast"), std::string::npos);
  EXPECT_TRUE(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1 << 30, All(h100), o).ok());
}

TEST(Coll, NvlsAllReduceMovesEachSliceOutAndBack) {
  // 8x H100 (NCCL's 18 x 20.6 = 370.8 GB/s per rank). NCCL's NVLS graph (search.cc) has one
  // channel per head, 8 heads, each taking its speed twice on its own NVLink and once on the 7
  // others': the first Hopper intra speed with 9 x s <= 370.8 is 40. NCCL's tuner prices it at
  // 8 x 40 x 0.85 x 7/8 x 2 = 476 GB/s bus bandwidth, algbw 476 x 8/14 = 272.0. The multimem
  // bound (each head sends S + S/8 and receives S/8 + S) is 370.8 x 0.85 x 8/9 = 280.2, above
  // it, so NCCL's model stands: 272.0 at NCCL's efficiency.
  Env e;
  Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 1);
  StatusOr<NcclTopo> t = AnalyzeGroup(h100, All(h100), testing::BuiltinNcclCalibration().tuning);
  ASSERT_TRUE(t.ok());
  EXPECT_NEAR(t->total_intra_GBps, 370.8, 0.5);
  EXPECT_EQ(t->nvls_heads, 8);
  EXPECT_DOUBLE_EQ(t->nvls_graph_GBps, 40);
  const AlgoEstimate est =
      EstimateNccl(*t, CollOp::kAllReduce, Algo::kNvls, Proto::kSimple, 8.0 * (1 << 30), false);
  ASSERT_TRUE(est.ok);
  EXPECT_NEAR(est.algbw_GBps, 272.0, 1e-9);
  EXPECT_NEAR(AchievedAlgbwGBps(*t, CollOp::kAllReduce, Algo::kNvls, est), 272.0, 1e-9);
  // Hopper's fitted NVLS efficiency (0.982, data/calibration/nccl.yaml) in place of NCCL's 0.85:
  // 272.0 x 0.982 / 0.85 = 314.24.
  EXPECT_NEAR(AchievedAlgbwGBps(*t, CollOp::kAllReduce, Algo::kNvls, est,
                                testing::BuiltinNcclCalibration().hopper_nvls_efficiency),
              314.24, 1e-9);
  StatusOr<CollResult> r =
      testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 8.0 * (1 << 30), All(h100));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->algo, Algo::kNvls);
  // The kernel's pipeline prices the device time (NvlsPipelineUs): 8 GiB in 128 KiB chunks is
  // 512 loops of 16 MiB, each paying Hopper's fitted 6.3 us step, and the fill and drain of two
  // stage-times 2 x (16 MiB / 314.24 GB/s + 6.3) = 119.38 us. Time = 3 gap + 8 GiB / 314.24
  // GB/s (27,335.8) + 3,225.6 + 119.4 = 30,683.8 us: bus bandwidth 8 GiB / 30,683.8 us x 14/8 =
  // 489.9 (the sweep: 478.9).
  EXPECT_NEAR(r->busbw_Bps / 1e9, 489.9, 0.05);
  // 5 ranks: 5 heads, 6 x 60 <= 370.8: 5 x 60 x 0.85 x 4/5 x 2 = 408 bus, algbw 408 x 5/8 =
  // 255.0, under the bound 370.8 x 0.85 x 5/6 = 262.65 (a user's 5-GPU run reports ~258 algbw,
  // NVIDIA/nccl #1455).
  std::vector<int> five = {0, 1, 2, 3, 4};
  StatusOr<NcclTopo> t5 = AnalyzeGroup(h100, five, testing::BuiltinNcclCalibration().tuning);
  ASSERT_TRUE(t5.ok());
  EXPECT_NEAR(AchievedAlgbwGBps(*t5, CollOp::kAllReduce, Algo::kNvls,
                                EstimateNccl(*t5, CollOp::kAllReduce, Algo::kNvls, Proto::kSimple,
                                             8.0 * (1 << 30), false)),
              255.0, 1e-9);
  // Three ranks: NCCL's model (3 x 60 x 0.85 x 2/3 x 2 x 3/4 = 153) and the bound (370.8 x 0.85
  // x 3/4 = 236.4) are below the ring's (12 channels of 30 GB/s: 360 x 3/4 = 270), which stands:
  // forced-NVLS runs on 2-4 H100s report the ring's 365-370 GB/s bus bandwidth (#1455).
  std::vector<int> three = {0, 1, 2};
  StatusOr<NcclTopo> t3 = AnalyzeGroup(h100, three, testing::BuiltinNcclCalibration().tuning);
  ASSERT_TRUE(t3.ok());
  const AlgoEstimate ring3 =
      EstimateNccl(*t3, CollOp::kAllReduce, Algo::kRing, Proto::kSimple, 1 << 30, false);
  EXPECT_DOUBLE_EQ(AchievedAlgbwGBps(*t3, CollOp::kAllReduce, Algo::kNvls,
                                     EstimateNccl(*t3, CollOp::kAllReduce, Algo::kNvls,
                                                  Proto::kSimple, 1 << 30, false)),
                   ring3.algbw_GBps);
  EXPECT_NEAR(ring3.algbw_GBps, 270, 0.5);
  // Two ranks: NCCL turns NVLS off for a node of <= 2 GPUs (ncclNvlsInit), so it is not offered.
  std::vector<int> two = {0, 1};
  StatusOr<NcclTopo> t2 = AnalyzeGroup(h100, two, testing::BuiltinNcclCalibration().tuning);
  ASSERT_TRUE(t2.ok());
  EXPECT_FALSE(t2->nvls);
  EXPECT_FALSE(
      EstimateNccl(*t2, CollOp::kAllReduce, Algo::kNvls, Proto::kSimple, 1 << 30, false).ok);
  // Other operations and algorithms keep the tuner's bandwidth.
  const AlgoEstimate ring =
      EstimateNccl(*t, CollOp::kAllReduce, Algo::kRing, Proto::kSimple, 8.0 * (1 << 30), false);
  EXPECT_DOUBLE_EQ(AchievedAlgbwGBps(*t, CollOp::kAllReduce, Algo::kRing, ring), ring.algbw_GBps);
}

TEST(Coll, NvlsChunkFollowsNcclAndPipelineAddsStepsAndFill) {
  // NCCL's NVLS chunk rules (src/enqueue.cc) on 8 H100s: 16 channels x 8 heads = 128 concurrent
  // ops. 128 KiB from 64 x 128 x 128 KiB = 1 GiB up; 64 KiB from 8 x 128 x 64 KiB = 64 MiB;
  // 32 KiB from 2 x 128 x 32 KiB = 8 MiB; 16 KiB below.
  Env e;
  Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 1);
  const NcclTopo t = *AnalyzeGroup(h100, All(h100), testing::BuiltinNcclCalibration().tuning);
  ASSERT_EQ(t.nvls_channels, 16);
  const double MiB = 1 << 20;
  EXPECT_EQ(NvlsLoops(t, 1024 * MiB).chunk_bytes, 131072);
  EXPECT_EQ(NvlsLoops(t, 1024 * MiB - 1).chunk_bytes, 65536);
  EXPECT_EQ(NvlsLoops(t, 64 * MiB).chunk_bytes, 65536);
  EXPECT_EQ(NvlsLoops(t, 64 * MiB - 1).chunk_bytes, 32768);
  EXPECT_EQ(NvlsLoops(t, 8 * MiB).chunk_bytes, 32768);
  EXPECT_EQ(NvlsLoops(t, 8 * MiB - 1).chunk_bytes, 16384);
  // 128 MiB: loops of 128 x 64 KiB = 8 MiB, 16 of them.
  EXPECT_EQ(NvlsLoops(t, 128 * MiB).loop_bytes, 8 * MiB);
  EXPECT_EQ(NvlsLoops(t, 128 * MiB).loops, 16);
  EXPECT_EQ(NvlsLoops(t, 0).loops, 0);
  // Pipeline at 128 MiB and 314.24 GB/s algbw: 128 MiB / 314.24 GB/s = 427.12 us, 16 loops of
  // a 6.3 us step (100.8), fill and drain 2 x (8 MiB / 314.24 GB/s + 6.3) = 2 x (26.695 + 6.3)
  // = 65.99: 593.91 us. With step 0, NCCL's own NVLink Simple step (3.4 us): 427.12 + 54.4 +
  // 2 x (26.695 + 3.4) = 541.71 us.
  const double A = 314.24;
  EXPECT_NEAR(NvlsPipelineUs(t, CollOp::kAllReduce, Algo::kNvls, 128 * MiB, A, 6.3e-6), 593.91,
              0.01);
  EXPECT_NEAR(NvlsPipelineUs(t, CollOp::kAllReduce, Algo::kNvls, 128 * MiB, A, 0), 541.71, 0.01);
  // One partial loop (1 MiB of a 2 MiB loop): 1 MiB / A (3.337) + 6.3 + 2 x (3.337 + 6.3) =
  // 28.91 us, three stage-times.
  EXPECT_NEAR(NvlsPipelineUs(t, CollOp::kAllReduce, Algo::kNvls, MiB, A, 6.3e-6), 28.91, 0.01);
  // Nothing for other algorithms, ops, across NVLink domains, or 0 bytes.
  EXPECT_FALSE(NvlsPipelined(t, CollOp::kAllReduce, Algo::kRing));
  EXPECT_EQ(NvlsPipelineUs(t, CollOp::kAllReduce, Algo::kRing, 128 * MiB, A, 0), 0.0);
  EXPECT_EQ(NvlsPipelineUs(t, CollOp::kAllGather, Algo::kNvls, 128 * MiB, A, 0), 0.0);
  EXPECT_EQ(NvlsPipelineUs(t, CollOp::kAllReduce, Algo::kNvls, 0, A, 0), 0.0);
  NcclTopo two = t;
  two.nodes = 2;
  EXPECT_FALSE(NvlsPipelined(two, CollOp::kAllReduce, Algo::kNvls));
  // Smaller chunks pay more steps per byte: the bus bandwidth at 512 MiB (64 KiB chunks) is
  // below that at 1 GiB (128 KiB chunks) by more than latency alone would make it.
  const double bw512 =
      testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 512 * MiB, All(h100))->busbw_Bps;
  const double bw1g =
      testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1024 * MiB, All(h100))->busbw_Bps;
  EXPECT_GT(bw1g / bw512, 1.05);
}

TEST(Coll, Nvl72RackRunsNvlsOnThirtyTwoHeadsAtNcclsGraphSpeed) {
  // 18 ND GB200 v6 VMs = one NVL72 rack, one NVLink domain (NCCL's MNNVL: one node of 72 ranks).
  // NCCL's NVLS graph has at most NCCL_MAX_NVLS_ARITY = 32 heads (search.cc maxChannels =
  // min(32, GPUs)); a head's path takes its speed twice on its own NVLink and once on each other
  // GPU's, so the speed is the first Blackwell intra speed s with 33 s <= 18 x 40.1 = 721.8: 20.
  Env e;
  const Cluster rack = e.Build("Standard_ND128isr_NDR_GB200_v6", 18);
  const NcclTopo t = *AnalyzeGroup(rack, All(rack), testing::BuiltinNcclCalibration().tuning);
  EXPECT_EQ(t.n, 72);
  EXPECT_EQ(t.nodes, 1);
  EXPECT_EQ(t.nvls_heads, 32);
  EXPECT_EQ(t.nvls_channels, 24);
  EXPECT_DOUBLE_EQ(t.nvls_graph_GBps, 20);
  // NCCL's tuner: 32 x 20 x 0.74 x 31/32 x 2 = 917.6 GB/s bus, algbw 917.6 x 72/142 = 465.26.
  const double G = 1 << 30;
  const AlgoEstimate est =
      EstimateNccl(t, CollOp::kAllReduce, Algo::kNvls, Proto::kSimple, 8 * G, false);
  ASSERT_TRUE(est.ok);
  EXPECT_NEAR(est.algbw_GBps, 917.6 * 72 / 142, 1e-9);
  // The multimem bound with 32 heads, 721.8 x 0.74 x 32/33 = 517.95, is above it; the ring
  // (16 x 45 x 72/142 = 365.1) below: NCCL's model stands.
  EXPECT_NEAR(AchievedAlgbwGBps(t, CollOp::kAllReduce, Algo::kNvls, est), 917.6 * 72 / 142, 1e-9);
  // The kernel's loop is 24 channels x 32 heads x 128 KiB = 96 MiB (8 GiB >= 64 x 768 x 128 KiB
  // = 6 GiB keeps 128 KiB chunks): 86 loops.
  const NvlsLoop l = NvlsLoops(t, 8 * G);
  EXPECT_EQ(l.chunk_bytes, 131072);
  EXPECT_EQ(l.loop_bytes, 96.0 * (1 << 20));
  EXPECT_EQ(l.loops, 86);
  // 8 GiB: 3 gap + 8 GiB / 465.26 GB/s (18,462.7) + 86 x 3.4 (NCCL's NVLink step: no Blackwell
  // NVLS data to fit, 292.4) + fill and drain 2 x (96 MiB / 465.26 GB/s + 3.4) (439.5) =
  // 19,197.6 us: bus bandwidth 8 GiB / 19,197.6 us x 142/72 = 882.5 GB/s (the old model, 72
  // heads and 24 CTAs x 721.8/24: 1,002.6). Blackwell's ring efficiency (0.915) does not apply
  // to NVLS.
  const CollResult r = *testing::TimeCollectiveCal(rack, CollOp::kAllReduce, 8 * G, All(rack));
  EXPECT_EQ(r.algo, Algo::kNvls);
  EXPECT_NEAR(r.busbw_Bps / 1e9, 882.5, 0.1);
}

TEST(Coll, BlackwellNvlsRunsThirtyTwoCtasOnOneDomainBeforeNccl227) {
  // src/transport/nvls.cc ncclNvlsInit: v2.25.1 .. v2.26.6 run NVLS_NCHANNELS_SM100 = 32 CTAs on
  // any Blackwell communicator; v2.27.3 and later 24 (NVLS_NCHANNELS_SM100_NVL) on one NVLink
  // domain, 32 across domains. Hopper keeps 16 in every release.
  Env e;
  const NcclTuning& k = testing::BuiltinNcclCalibration().tuning;
  const Cluster rack = e.Build("Standard_ND128isr_NDR_GB200_v6", 18);
  const NcclTopo t = *AnalyzeGroup(rack, All(rack), k);
  ASSERT_EQ(t.nvls_channels, 24);
  EXPECT_EQ(NvlsChannelsFor(t, 22501), 32);
  EXPECT_EQ(NvlsChannelsFor(t, 22606), 32);
  EXPECT_EQ(NvlsChannelsFor(t, 22703), 24);
  EXPECT_EQ(NvlsChannelsFor(t, kPinnedNcclVersion), 24);
  const Cluster two_racks = e.Build("Standard_ND128isr_GB300_v6", 36);
  const NcclTopo t2 = *AnalyzeGroup(two_racks, All(two_racks), k);
  EXPECT_EQ(NvlsChannelsFor(t2, 22501), 32);
  EXPECT_EQ(NvlsChannelsFor(t2, kPinnedNcclVersion), 32);
  const Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 1);
  EXPECT_EQ(NvlsChannelsFor(*AnalyzeGroup(h100, All(h100), k), 22501), 16);
  // One rack, NVLS forced, 512 MiB at NCCL's algbw 465.26 GB/s (the test above). 24 CTAs: 768
  // ops, 512 MiB < 64 x 768 x 128 KiB keeps 64 KiB chunks (not below 8 x 768 x 64 KiB = 384
  // MiB): loops of 48 MiB, 11 of them; 3 + 1,153.92 + 11 x 3.4 + 2 x (108.18 + 3.4) =
  // 1,417.48 us. 32 CTAs (2.25.1): 1,024 ops, 64 KiB chunks (512 MiB is not below 8 x 1,024 x
  // 64 KiB): loops of 64 MiB, 8 of them; 3 + 1,153.92 + 8 x 3.4 + 2 x (144.24 + 3.4) =
  // 1,479.40 us. Fewer, larger loops: fewer steps (-10.2 us), a longer fill and drain
  // (+72.12 us).
  const double MiB = 1 << 20;
  CollOptions o;
  o.algo = Algo::kNvls;
  const CollResult now =
      *testing::TimeCollectiveCal(rack, CollOp::kAllReduce, 512 * MiB, All(rack), o);
  o.nccl_version = 22501;
  const CollResult old =
      *testing::TimeCollectiveCal(rack, CollOp::kAllReduce, 512 * MiB, All(rack), o);
  EXPECT_NEAR(now.time_s * 1e6, 1417.48, 0.05);
  EXPECT_NEAR(old.time_s * 1e6, 1479.40, 0.05);
}

}  // namespace
}  // namespace ndt
