// Properties of TimeCollective, the NCCL model and schedules on catalog-built clusters.
#include "coll/collective.h"

#include <gtest/gtest.h>

#include <numeric>

#include "coll/coll_testing.h"
#include "coll/nccl_model.h"
#include "coll/schedule.h"
#include "coll/testing.h"
#include "hw/catalog.h"
#include "topo/builders.h"

namespace ndt {
namespace {

TEST(Coll, BusBwFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAllReduce, 8), 14.0 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kAllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(BusBwFactor(CollOp::kBroadcast, 8), 1.0);
}

TEST(Coll, A100ChannelsAreSixAtFortyDuplicatedToTwelveAtTwenty) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> g = All(c);
  NcclTopo t = *AnalyzeGroup(c, g, testing::BuiltinNcclCalibration().tuning);
  // 12 NVLinks x 20 GB/s = 240; first speed <= 240 is 40 -> 6 channels; 40 >= 25 -> 12 at 20.
  EXPECT_EQ(t.ring_channels, 12);
  EXPECT_DOUBLE_EQ(t.bw_intra_GBps, 20);
  EXPECT_FALSE(t.nvls);
}

TEST(Coll, CubeMeshRingsFitTheLinksOfTheGroup) {
  // NDv2's hybrid cube-mesh (data/fabric.yaml cube_mesh): GPU 0 has 2 NVLinks to GPU 1, 1 to
  // GPUs 2 and 3, 2 to GPU 4 and none to 5, 6, 7; 25 GB/s per link and direction. A ring leaves
  // every rank on a link to another rank, so the whole VM has 6 rings (every GPU has 6 links)
  // and GPUs {0, 1} have 2: their all_reduce moves 2 (n-1)/n x 1 GiB = 1 GiB out of each GPU over
  // its 2 links, at most 50 GB/s of bus bandwidth (before: 6 rings, 114 GB/s, more than twice the
  // links). GPUs {0, 5} share no NVLink: the ring crosses PCIe.
  Env e;
  Cluster c = e.Build("Standard_ND40rs_v2", 1);
  const NcclTuning& k = testing::BuiltinNcclCalibration().tuning;
  const std::vector<int> all = All(c);
  EXPECT_EQ(AnalyzeGroup(c, all, k)->ring_channels, 6);
  const std::vector<int> pair = {0, 1};
  const NcclTopo t = *AnalyzeGroup(c, pair, k);
  EXPECT_EQ(t.ring_channels, 2);
  EXPECT_EQ(t.intra, PathType::kNvl);
  const double gib = 1024.0 * 1024 * 1024;
  StatusOr<CollResult> r = testing::TimeCollectiveCal(c, CollOp::kAllReduce, gib, pair);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(r->busbw_Bps, 50e9);
  EXPECT_GT(r->busbw_Bps, 30e9);
  const std::vector<int> apart = {0, 5};
  EXPECT_EQ(AnalyzeGroup(c, apart, k)->intra, PathType::kPci);
  r = testing::TimeCollectiveCal(c, CollOp::kAllReduce, gib, apart);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_LE(r->busbw_Bps, 15.75e9);  // a PCIe 3.0 x16 link, let alone the socket link
}

TEST(Coll, PcieRingsAcrossSocketsRunAtTheSocketLink) {
  // Standard_ND24rs: 4 P40s on PCIe 3.0, GPUs 0,1 on one Broadwell socket and 2,3 on the other,
  // 6 GB/s per direction between the sockets (data/vms). The ring 0-1-2-3 crosses that link once
  // each way, so all_reduce's bus bandwidth (the ring's per-hop rate) is at most 6 GB/s (before:
  // 11.66 GB/s at the PCIe rate). GPUs 0,1 alone stay on their socket: faster than that.
  Env e;
  Cluster c = e.Build("Standard_ND24rs", 1);
  const double gib = 1024.0 * 1024 * 1024;
  StatusOr<CollResult> all = testing::TimeCollectiveCal(c, CollOp::kAllReduce, gib, All(c));
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_LE(all->busbw_Bps, 6e9);
  EXPECT_GT(all->busbw_Bps, 4e9);
  const std::vector<int> pair = {0, 1};
  StatusOr<CollResult> near = testing::TimeCollectiveCal(c, CollOp::kAllReduce, gib, pair);
  ASSERT_TRUE(near.ok()) << near.status().message();
  EXPECT_GT(near->busbw_Bps, 6e9);
}

TEST(Coll, LargeAllReduceBusBwApproachesTheNvlinkBottleneck) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> g = All(c);
  // 8 GiB at 240 GB/s bus bandwidth: 8 GiB x 14/8 / 240e9 = 62.63 ms, plus 22 loops of 384 MiB
  // x 14 steps x 10 us of step sync = 3.08 ms, plus 56 us latency and 3 us kernel gap (the
  // 42.8 us host overhead hides under the kernel): 65.77 ms, i.e.
  // busbw = 8 GiB x 1.75 / 65.77 ms = 228.5 GB/s.
  CollResult r = *testing::TimeCollectiveCal(c, CollOp::kAllReduce, 8.0 * (1 << 30), g);
  EXPECT_NEAR(r.busbw_Bps / 1e9, 228.5, 0.5);
  EXPECT_EQ(r.algo, Algo::kRing);
  EXPECT_EQ(r.proto, Proto::kSimple);
}

TEST(Coll, SimpleRingLoopsFollowNcclChunking) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> g = All(c);
  NcclTopo t = *AnalyzeGroup(c, g, testing::BuiltinNcclCalibration().tuning);
  // One loop = 2 x 12 channels x 8 ranks x (4 steps x 4 MiB / 8) = 384 MiB.
  const double loop = 384.0 * (1 << 20);
  EXPECT_EQ(RingSimpleLoops(t, 0), 0);
  EXPECT_EQ(RingSimpleLoops(t, 1), 1);
  EXPECT_EQ(RingSimpleLoops(t, loop), 1);
  EXPECT_EQ(RingSimpleLoops(t, loop + 1), 2);
  EXPECT_EQ(RingSimpleLoops(t, 8.0 * (1 << 30)), 22);  // 8192 / 384 = 21.3
}

TEST(Coll, SimpleRingPaysStepSyncOncePerLoop) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> g = All(c);
  CollOptions o;
  o.algo = Algo::kRing;
  o.proto = Proto::kSimple;
  // Ring/Simple all_reduce on 8 ranks, device time (longer than the 42.8 us host overhead, so it
  // sets the pace): 3 us kernel gap + NCCL latency 8.4 + 14 x 3.4 = 56 us + loops x 14 steps x
  // 10 us + bytes / (240 x 8/14 GB/s).
  auto expect = [](double bytes, int loops) {
    return 3e-6 + 56e-6 + loops * 14 * 10e-6 + bytes / (240e9 * 8 / 14);
  };
  const double mib = 1 << 20;
  EXPECT_NEAR(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 32 * mib, g, o)->time_s,
              expect(32 * mib, 1), 1e-9);
  EXPECT_NEAR(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 384 * mib, g, o)->time_s,
              expect(384 * mib, 1), 1e-9);
  // One byte past the loop adds a whole second loop of step syncs (14 x 10 = 140 us).
  EXPECT_NEAR(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 384 * mib + 4096, g, o)->time_s,
              expect(384 * mib + 4096, 2), 1e-9);
  // all_gather runs n-1 = 7 steps per loop: 3 + (8.4 + 7 x 3.4) + 7 x 10 us + bytes x 7/8 / 240.
  double ag = 3e-6 + 32.2e-6 + 7 * 10e-6 + 32 * mib / (240e9 * 8 / 7);
  EXPECT_NEAR(testing::TimeCollectiveCal(c, CollOp::kAllGather, 32 * mib, g, o)->time_s, ag, 1e-9);
  // LL and LL128 carry their flags inline: no loop sync; LL128 runs at 0.59 of NCCL's
  // 0.92 x 240 GB/s: 3 + (14 + 14 x 1.9) us + bytes / (220.8 x 0.59 x 8/14 GB/s).
  o.proto = Proto::kLL128;
  double ll128 = 3e-6 + 40.6e-6 + 16 * mib / (220.8e9 * 0.59 * 8 / 14);
  EXPECT_NEAR(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 16 * mib, g, o)->time_s, ll128,
              1e-9);
}

TEST(Coll, TreeBandwidthTakesNcclCorrectionFactor) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  NcclTopo t = *AnalyzeGroup(c, All(c), testing::BuiltinNcclCalibration().tuning);
  // Tree Simple: A = 0.5 x min(0.92 x 240, 12 x 24) = 110.4 GB/s, times NCCL's Simple factor at
  // log2(bytes/64): 16 MiB -> 18 -> 0.7; 1 GiB -> 24 (past the table) -> 1.0.
  const double mib = 1 << 20;
  EXPECT_NEAR(
      EstimateNccl(t, CollOp::kAllReduce, Algo::kTree, Proto::kSimple, 16 * mib, false).algbw_GBps,
      110.4 * 0.7, 1e-9);
  EXPECT_NEAR(EstimateNccl(t, CollOp::kAllReduce, Algo::kTree, Proto::kSimple, 1024 * mib, false)
                  .algbw_GBps,
              110.4, 1e-9);
}

TEST(Coll, LatencyDominatesSmallMessages) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> g = All(c);
  // 1 KiB vs 2 KiB: the bandwidth term (< 0.1 us) is tiny against the 18 us of a Ring/LL call
  // (3 us gap + 6.6 + 14 x 0.6), above the host cost of one process per GPU (5.35 us).
  double t1 = testing::TimeCollectiveCal(c, CollOp::kAllReduce, 1024, g)->time_s;
  double t2 = testing::TimeCollectiveCal(c, CollOp::kAllReduce, 2048, g)->time_s;
  EXPECT_NEAR(t2 / t1, 1.0, 0.01);
  EXPECT_NEAR(t1, 18.0e-6, 0.05e-6);
}

// A Ring broadcast (or reduce) is a chain: the first chunk crosses n - 1 ring hops before the
// last rank has it, as the last chunk of a Ring all_gather does. 8 bytes on 64 ND H100 v5 VMs
// (512 GPUs, 64 nodes, Xeon host, Ring LL): NCCL's all_gather ring latency 6.6 + (511 - 63) x
// max(0.6, 1.0 network overhead) + 63 x 2.7 = 624.7 us, + the 3 us kernel gap = 627.7 us. One
// VM: 6.6 + 7 x 0.6 + 3 = 13.8 us. (NCCL's tuner charges a broadcast one hop, 6.6 + 2.7 + 3 =
// 12.3 us at any size: a byte cannot reach 512 GPUs down a chain in that time.)
TEST(Coll, RingBroadcastPaysItsChainOfHops) {
  Env e;
  const Cluster one = e.Build("Standard_ND96isr_H100_v5", 1);
  const Cluster many = e.Build("Standard_ND96isr_H100_v5", 64);
  for (CollOp op : {CollOp::kBroadcast, CollOp::kReduce}) {
    const CollResult r1 = *testing::TimeCollectiveCal(one, op, 8, All(one));
    const CollResult r64 = *testing::TimeCollectiveCal(many, op, 8, All(many));
    EXPECT_EQ(r64.algo, Algo::kRing);
    EXPECT_EQ(r64.proto, Proto::kLL);
    EXPECT_NEAR(r1.time_s, 13.8e-6, 0.01e-6) << CollOpName(op);
    EXPECT_NEAR(r64.time_s, 627.7e-6, 0.01e-6) << CollOpName(op);
  }
}

TEST(Coll, TimeGrowsWithBytesAndMoreBandwidthIsNeverSlower) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  GpuSpec fast = e.cat.GpuOf(*c.spec().sku);
  fast.nvlink_links *= 2;
  Cluster f = e.Build("Standard_ND96amsr_A100_v4", 1, {}, &fast);
  std::vector<int> g = All(c);
  double prev = 0;
  for (double b = 1024; b <= 8.0 * (1 << 30); b *= 4) {
    for (CollOp op : {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kBroadcast}) {
      double slow_t = testing::TimeCollectiveCal(c, op, b, g)->time_s;
      double fast_t = testing::TimeCollectiveCal(f, op, b, g)->time_s;
      EXPECT_LE(fast_t, slow_t * (1 + 1e-12)) << CollOpName(op) << " " << b;
    }
    // Non-decreasing: small calls all cost the host overhead (max(host, device)).
    double t = testing::TimeCollectiveCal(c, CollOp::kAllReduce, b, g)->time_s;
    EXPECT_GE(t, prev);
    if (b >= 4.0 * (1 << 20)) {  // past the host overhead (1 MiB: 3 + 35.9 us < 42.8)
      EXPECT_GT(t, prev);
    }
    prev = t;
  }
}

TEST(Coll, HostCostScalesWithTheGpusOneThreadDrives) {
  // 1 KiB all_reduce on 8 H100s: device = 3 us gap + Ring/LL 6.6 + 14 x 0.6 = 18.0 us. The
  // default is one process per GPU (-g 1, as PyTorch, Megatron-LM and mpirun launch): one
  // enqueue and launch, 5.35 us, under the device time, which shows.
  Env e;
  Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 1);
  EXPECT_EQ(CollOptions().gpus_per_thread, 1);
  EXPECT_NEAR(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1024, All(h100))->time_s,
              18.0e-6, 0.05e-6);
  // One thread on all 8 GPUs (nccl-tests -g 8, one process for the VM) costs 8 x 5.35 = 42.8 us
  // of host time per call, which paces the loop; -g 4: 21.4 us.
  CollOptions o;
  o.gpus_per_thread = 8;
  EXPECT_NEAR(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1024, All(h100), o)->time_s,
              42.8e-6, 1e-12);
  o.gpus_per_thread = 4;
  EXPECT_NEAR(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1024, All(h100), o)->time_s,
              21.4e-6, 1e-12);
  o.gpus_per_thread = 0;  // below 1 counts as 1
  EXPECT_NEAR(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1024, All(h100), o)->time_s,
              18.0e-6, 0.05e-6);
  // Across VMs too: one launch, 5.35 us, under the device time.
  Cluster two = e.Build("Standard_ND96isr_H100_v5", 2);
  const double t2 = testing::TimeCollectiveCal(two, CollOp::kAllReduce, 1024, All(two))->time_s;
  EXPECT_GT(t2, 5.35e-6);
  // A Grace host launches in 4.05 us per GPU (the GB200 sweep, data/calibration/nccl.yaml):
  // 1 KiB on 4 GB200s with -g 4 is host-paced at 4 x 4.05 = 16.2 us (device: 3 + Ring/LL 6.6 +
  // 6 x 0.6 = 13.2 us).
  Cluster gb = e.Build("Standard_ND128isr_NDR_GB200_v6", 1);
  o.gpus_per_thread = 4;
  EXPECT_NEAR(testing::TimeCollectiveCal(gb, CollOp::kAllReduce, 1024, All(gb), o)->time_s, 16.2e-6,
              1e-12);
}

TEST(Coll, XeonHostKeepsTheEpycCostWhichSetsTheHopperSweepsMidSizes) {
  // ND H100 v5 (Xeon 8480C host) keeps the A100 host's 5.35 us per GPU. 1 MiB all_reduce, NVLS
  // forced, one thread on the 8 GPUs (-g 8, as Azure's sweep): host 8 x 5.35 = 42.8 us; device
  // 3 us gap + NvlsPipelineUs 28.91 (A = 320 x 0.982 = 314.24 GB/s, one 2 MiB loop: 1 MiB / A
  // = 3.34 + 6.3 step + 2 x (3.34 + 6.3)) = 31.91 us, so the host sets the call: 42.8 us. The
  // H100 sweep took 42.0 us there (43.7 GB/s bus) and 42-45 us from 64 KiB to 2 MiB; the largest
  // Xeon cost its small sizes allow, 25.6 / 8 = 3.2 us (1 KiB and 2 KiB: 25.6 us), would leave
  // the kernel's 31.9 us: +32% at 1 MiB (VALIDATION.md, Hopper NVLS). Lower it only with a
  // kernel model that explains those sizes.
  Env e;
  const Cluster h100 = e.Build("Standard_ND96isr_H100_v5", 1);
  CollOptions o;
  o.algo = Algo::kNvls;
  o.gpus_per_thread = 8;
  EXPECT_NEAR(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1 << 20, All(h100), o)->time_s,
              42.8e-6, 1e-12);
  o.host_hidden = true;
  EXPECT_NEAR(testing::TimeCollectiveCal(h100, CollOp::kAllReduce, 1 << 20, All(h100), o)->time_s,
              31.91e-6, 0.01e-6);
}

TEST(Coll, ErrorsAreInvalidInput) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> one = {0};
  EXPECT_EQ(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 1024, one).status().code(),
            StatusCode::kInvalidInput);
  std::vector<int> dup = {0, 0};
  EXPECT_FALSE(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 1024, dup).ok());
  CollOp op;
  EXPECT_FALSE(ParseCollOp("allsum", &op).ok());
  CollOptions pat;
  pat.algo = Algo::kPat;  // PAT needs 1 rank per node
  EXPECT_FALSE(testing::TimeCollectiveCal(c, CollOp::kAllGather, 1 << 20, All(c), pat).ok());
}

// NCCL runs PAT with the Simple protocol only (tuning.cc skips LL and LL128 for it), and picks a
// p2p transfer's protocol by size, not by NCCL_PROTO: forcing LL or LL128 there is refused, not
// reported under a label the price does not follow.
TEST(Coll, PatAndPointToPointTakeNoForcedProtocol) {
  Env e;
  const Cluster c = e.Build("Standard_ND96isr_H100_v5", 4);
  const std::vector<int> per_vm = {0, 8, 16, 24};  // one GPU per VM: PAT's case
  for (double bytes : {1024.0, 1048576.0, 1073741824.0}) {
    CollOptions pat;
    pat.algo = Algo::kPat;
    const CollResult r = *testing::TimeCollectiveCal(c, CollOp::kAllGather, bytes, per_vm, pat);
    EXPECT_EQ(r.proto, Proto::kSimple) << bytes;
    const CollResult d = *testing::TimeCollectiveCal(c, CollOp::kAllGather, bytes, per_vm);
    EXPECT_FALSE(d.algo == Algo::kPat && d.proto != Proto::kSimple) << bytes;
  }
  CollOptions pat_ll;
  pat_ll.algo = Algo::kPat;
  pat_ll.proto = Proto::kLL;
  EXPECT_FALSE(testing::TimeCollectiveCal(c, CollOp::kAllGather, 1024, per_vm, pat_ll).ok());
  for (Proto p : {Proto::kLL, Proto::kLL128}) {
    CollOptions o;
    o.proto = p;
    for (CollOp op : {CollOp::kAllToAll, CollOp::kSendRecv}) {
      const std::vector<int> g = op == CollOp::kSendRecv ? std::vector<int>{0, 8} : All(c);
      StatusOr<CollResult> r = testing::TimeCollectiveCal(c, op, 1 << 20, g, o);
      ASSERT_FALSE(r.ok()) << CollOpName(op);
      EXPECT_NE(r.status().message().find("drop --proto"), std::string::npos);
    }
  }
  CollOptions simple;
  simple.proto = Proto::kSimple;
  EXPECT_EQ(testing::TimeCollectiveCal(c, CollOp::kAllToAll, 1 << 20, All(c), simple)->proto,
            Proto::kSimple);
}

TEST(Coll, SchedulesSendWhatTheyReceive) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 4);
  std::vector<int> g = All(c);
  for (const Schedule& s :
       {RingSchedule(c, CollOp::kAllReduce, 1 << 20, std::span<const int>(g.data(), 8)),
        RingSchedule(c, CollOp::kAllReduce, 1 << 20, g), AllToAllSchedule(1 << 20, g)}) {
    std::vector<double> sent(c.num_gpus()), recv(c.num_gpus());
    double total_sent = 0, total_recv = 0;
    for (const Step& st : s)
      for (const Transfer& x : st.transfers) {
        sent[x.src] += x.bytes;
        recv[x.dst] += x.bytes;
        total_sent += x.bytes;
        total_recv += x.bytes;
      }
    EXPECT_DOUBLE_EQ(total_sent, total_recv);
    // Every step is a permutation or all-pairs pattern: each rank sends what it receives.
    for (int r = 0; r < c.num_gpus(); ++r) EXPECT_DOUBLE_EQ(sent[r], recv[r]) << r;
  }
}

TEST(Coll, ClosedFormEqualsFlowReplayWithoutContention) {
  Env e;
  for (int vms : {1, 4}) {
    Cluster c = e.Build("Standard_ND96amsr_A100_v4", vms);
    std::vector<int> g = All(c);
    Schedule s = RingSchedule(c, CollOp::kAllReduce, 1 << 28, g);
    double closed = EvaluateClosedForm(c, s);
    EXPECT_NEAR(EvaluateOnNetwork(c, s, NetFidelity::kFlow) / closed, 1.0, 0.01) << vms;
    EXPECT_NEAR(EvaluateOnNetwork(c, s, NetFidelity::kAnalytical) / closed, 1.0, 0.01) << vms;
    CollOptions flow;
    flow.fidelity = Fidelity::kFlow;
    double ta = testing::TimeCollectiveCal(c, CollOp::kAllReduce, 1 << 28, g)->time_s;
    double tf = testing::TimeCollectiveCal(c, CollOp::kAllReduce, 1 << 28, g, flow)->time_s;
    EXPECT_NEAR(tf / ta, 1.0, 0.01) << vms;
  }
}

TEST(Coll, OversubscriptionSlowsAllToAllAcrossLeavesByItsRatio) {
  Env e;
  // 8 VMs, 4 per leaf group: half of every rank's all_to_all traffic leaves its leaf group.
  // Non-blocking: a leaf's uplinks carry all of its NICs' crossing traffic at NIC rate, so the
  // NIC is the bottleneck. Oversubscription 2 halves the uplinks: crossing traffic runs at half
  // the NIC rate, and with half the bytes crossing the step takes ~ 2x its NIC-bound time
  // for that share. Expect a slowdown between 1.3x and 2.05x on the network time.
  FabricSpec fab;
  fab.vms_per_leaf = 4;
  Cluster nb = e.Build("Standard_ND96amsr_A100_v4", 8, fab);
  fab.oversubscription = 2;
  Cluster os = e.Build("Standard_ND96amsr_A100_v4", 8, fab);
  std::vector<int> g = All(nb);
  Schedule s = AllToAllSchedule(1 << 30, g);
  double t_nb = EvaluateOnNetwork(nb, s, NetFidelity::kFlow);
  double t_os = EvaluateOnNetwork(os, s, NetFidelity::kFlow);
  EXPECT_GT(t_os / t_nb, 1.3);
  EXPECT_LT(t_os / t_nb, 2.05);
  // A ring crosses each leaf boundary with one flow per rail: no uplink is shared, so the ring
  // all_reduce is not slowed (NCCL rings are bisection-light).
  CollOptions flow;
  flow.fidelity = Fidelity::kFlow;
  double r_nb = testing::TimeCollectiveCal(nb, CollOp::kAllReduce, 1 << 30, g, flow)->time_s;
  double r_os = testing::TimeCollectiveCal(os, CollOp::kAllReduce, 1 << 30, g, flow)->time_s;
  EXPECT_NEAR(r_os / r_nb, 1.0, 0.01);
}

TEST(Coll, HostOverheadHidesUnderLongKernels) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> g = All(c);
  CollOptions g8;
  g8.gpus_per_thread = 8;
  // 1 KiB with -g 8: device = 3 us gap + Ring/LL 6.6 + 14 x 0.6 = 18 us + ~0.02 us < 42.8 us host
  // overhead, so nccl-tests' back-to-back loop is paced by the host: exactly 42.8 us.
  EXPECT_NEAR(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 1024, g, g8)->time_s, 42.8e-6,
              1e-12);
  // 32 MiB Ring/Simple: device 3 + 56 + 14 x 10 + 32 MiB / 137.14 GB/s = 443.7 us > 42.8 us.
  const double t =
      testing::TimeCollectiveCal(c, CollOp::kAllReduce, 32.0 * (1 << 20), g, g8)->time_s;
  EXPECT_NEAR(t, 3e-6 + 56e-6 + 140e-6 + 32.0 * (1 << 20) / (240e9 * 8 / 14), 1e-9);
  // Inside a workload whose host runs ahead, the 1 KiB call costs its device time: ~15 us + 3 us.
  CollOptions hidden;
  hidden.host_hidden = true;
  const double d = testing::TimeCollectiveCal(c, CollOp::kAllReduce, 1024, g, hidden)->time_s;
  EXPECT_GT(d, 18e-6);
  EXPECT_LT(d, 18.1e-6);
  EXPECT_NEAR(
      testing::TimeCollectiveCal(c, CollOp::kAllReduce, 32.0 * (1 << 20), g, hidden)->time_s, t,
      1e-12);
}

TEST(Coll, RingLLBusFactorFollowsTheNcclRelease) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  NcclTopo t = *AnalyzeGroup(c, All(c), testing::BuiltinNcclCalibration().tuning);
  const double mib = 1 << 20;
  // v2.30 (pinned): min(llMaxBw 87.7, 240 / 2) = 87.7 bus -> 87.7 x 8/14 algorithm bandwidth.
  EXPECT_NEAR(EstimateNccl(t, CollOp::kAllReduce, Algo::kRing, Proto::kLL, mib, false).algbw_GBps,
              87.7 * 8 / 14, 1e-9);
  // v2.18.5: min(87.7, 240 / 4) = 60 for all_reduce; all_gather on one node min(87.7, 240 / 3) =
  // 80 bus -> 80 x 8/7.
  t.nccl_version = 21805;
  EXPECT_NEAR(EstimateNccl(t, CollOp::kAllReduce, Algo::kRing, Proto::kLL, mib, false).algbw_GBps,
              60.0 * 8 / 14, 1e-9);
  EXPECT_NEAR(EstimateNccl(t, CollOp::kAllGather, Algo::kRing, Proto::kLL, mib, false).algbw_GBps,
              80.0 * 8 / 7, 1e-9);
  // The switch to 1/2 is at 2.21 (tuning.cc: 1/4 in v2.20.5, 0.5 in v2.21.5).
  t.nccl_version = 22005;
  EXPECT_NEAR(EstimateNccl(t, CollOp::kAllReduce, Algo::kRing, Proto::kLL, mib, false).algbw_GBps,
              60.0 * 8 / 14, 1e-9);
  t.nccl_version = 22105;
  EXPECT_NEAR(EstimateNccl(t, CollOp::kAllReduce, Algo::kRing, Proto::kLL, mib, false).algbw_GBps,
              87.7 * 8 / 14, 1e-9);
}

TEST(Coll, TunerPicksByNcclsOwnModelNotByCalibratedTime) {
  Env e;
  Cluster c = e.Build("Standard_ND96amsr_A100_v4", 1);
  std::vector<int> g = All(c);
  const double mib = 1 << 20;
  CollOptions o;
  o.nccl_version = 21805;
  // NCCL 2.18.5 model at 1 MiB: Ring LL 15 + 1 MiB / 34.29 GB/s = 45.6 us, LL128 40.6 + 8.3 =
  // 48.9, Simple 56 + 7.6 = 63.6 -> LL. At 2 MiB: LL 76.2, LL128 57.2, Simple 71.3 -> LL128,
  // although LL128 then achieves only 0.59 of its model: 3 + 40.6 + 2 MiB / (126.17 x 0.59
  // GB/s) = 71.8 us.
  CollResult r1 = *testing::TimeCollectiveCal(c, CollOp::kAllReduce, mib, g, o);
  EXPECT_EQ(r1.proto, Proto::kLL);
  CollResult r2 = *testing::TimeCollectiveCal(c, CollOp::kAllReduce, 2 * mib, g, o);
  EXPECT_EQ(r2.proto, Proto::kLL128);
  EXPECT_NEAR(r2.time_s, 3e-6 + 40.6e-6 + 2 * mib / (220.8e9 * 8 / 14 * 0.59), 1e-9);
  // v2.30: Ring LL at 87.7 bus: 15 + 2 MiB / 50.11 GB/s = 56.85 us < LL128's 57.2 -> LL.
  EXPECT_EQ(testing::TimeCollectiveCal(c, CollOp::kAllReduce, 2 * mib, g)->proto, Proto::kLL);
}

}  // namespace
}  // namespace ndt

namespace ndt {
namespace {

TEST(Coll, BlackwellRingPaysItsFittedStepAndEfficiency) {
  // 4 GB200s, Ring forced, 16 MiB: NCCL 2.25's tuner runs Simple (16 channels x 45 GB/s: 480
  // GB/s algbw). Blackwell's fit: 0.915 of it, 1 us per ring step, 6 steps in the one 256 MiB
  // loop. Time = 3 gap + 28.8 latency (8.4 + 6 x 3.4) + 16 MiB / (480 x 0.915) GB/s (38.20) + 6
  // = 76.0 us (the sweep: 76.0).
  Env e;
  const Cluster gb = e.Build("Standard_ND128isr_NDR_GB200_v6", 1);
  CollOptions o;
  o.algo = Algo::kRing;
  o.nccl_version = 22501;
  const double S = 16.0 * (1 << 20);
  const CollResult r = *testing::TimeCollectiveCal(gb, CollOp::kAllReduce, S, All(gb), o);
  EXPECT_EQ(r.proto, Proto::kSimple);
  EXPECT_NEAR(r.time_s * 1e6, 3 + 28.8 + S / (480e3 * 0.915) + 6, 1e-6);
  // Across racks the NICs set the pace and the A100 constants stand: 2 GB200 VMs in different
  // NVLink domains are not Blackwell-NVLink groups (CalibrationFor, calibration_test.cc).
}

}  // namespace
}  // namespace ndt
