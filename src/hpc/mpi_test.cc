#include "hpc/mpi.h"

#include <gtest/gtest.h>

#include <cmath>

#include "compute/compute.h"
#include "hpc/micro.h"
#include "hpc/params.h"
#include "hpc/testing.h"
#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/fabric_params.h"

namespace ndt {
namespace {

using hpc_testing::D;
using hpc_testing::Make;

MpiModel Model(const Cluster& c, MpiBuffer b = MpiBuffer::kDevice) {
  return MpiModel(c, D().params.mpi, D().fabric, D().compute.For(c.gpu_spec().arch), b);
}

// data/hpc.yaml mpi: software 0.4 us, adapter 0.6 us, cable 0.05 us per IB link, gpu buffer
// overhead 0.5 us, CUDA IPC 2 us, shm 0.2 us and 10 GB/s, staging copy 6.5 us, rendezvous above
// 8192 B, IB payload 4096 / (4096 + 26). data/fabric.yaml: switch 0.13 us, PCIe and NVLink
// links 0.3 us each.
constexpr double kUs = 1e-6;
constexpr double kPayload = 4096.0 / 4122.0;

TEST(MpiP2p, InterVmDeviceBuffersWithGpuDirect) {
  // ND H100 v5, 2 VMs: GPU 0 -> GPU 8 is GPU -> PCIe switch -> NIC -> rail leaf -> NIC -> PCIe
  // switch -> GPU: 2 IB links, 1 switch, 4 PCIe hops. 8 B, eager:
  //   0.4 + 0.6 + 2 x 0.05 + 0.13 + 0.5 + 4 x 0.3 = 2.93 us.
  Cluster c = Make("Standard_ND96isr_H100_v5", 2);
  MpiModel m = Model(c);
  P2pTime t = m.PointToPoint(0, 8, 8);
  EXPECT_EQ(t.transport, "ib-gdr");
  EXPECT_EQ(t.protocol, "eager");
  EXPECT_NEAR(t.latency_s, 2.93 * kUs, 1e-12);
  // 400 Gb/s NDR = 50 GB/s x the packet payload fraction.
  EXPECT_NEAR(t.bandwidth_Bps, 50e9 * kPayload, 1e3);
  // Eager: + the bounce copies, 2 x 8 B / 10 GB/s.
  EXPECT_NEAR(t.copy_s, 16 / 10e9, 1e-18);
  EXPECT_NEAR(t.time_s, 2.93 * kUs + 16 / 10e9 + 8 / (50e9 * kPayload), 1e-12);
}

TEST(MpiP2p, HostBuffersSkipTheGpuHops) {
  // 0.4 + 0.6 + 0.1 + 0.13 = 1.23 us (the HCA's own host path is in its datasheet latency).
  Cluster c = Make("Standard_ND96asr_v4", 2);
  MpiModel m = Model(c, MpiBuffer::kHost);
  P2pTime t = m.PointToPoint(0, 8, 8);
  EXPECT_EQ(t.transport, "ib-host");
  EXPECT_NEAR(t.latency_s, 1.23 * kUs, 1e-12);
  // HDR 200 Gb/s = 25 GB/s.
  EXPECT_NEAR(t.bandwidth_Bps, 25e9 * kPayload, 1e3);
  // Inside the VM, host buffers go through shared memory: 0.4 + 0.2 us + 1 MB / 10 GB/s.
  P2pTime shm = m.PointToPoint(0, 1, 1e6);
  EXPECT_EQ(shm.transport, "shm");
  EXPECT_NEAR(shm.time_s, 0.6 * kUs + 1e6 / 10e9, 1e-12);
}

TEST(MpiP2p, RendezvousAddsAControlRoundTrip) {
  // Above 8192 B: + software 0.4 + 2 x (0.6 + 0.1 + 0.13) = 2.06 us on top of 1.23 us.
  Cluster c = Make("Standard_ND96asr_v4", 2);
  MpiModel m = Model(c, MpiBuffer::kHost);
  EXPECT_EQ(m.PointToPoint(0, 8, 8192).protocol, "eager");
  P2pTime t = m.PointToPoint(0, 8, 8193);
  EXPECT_EQ(t.protocol, "rendezvous");
  EXPECT_NEAR(t.latency_s, 3.29 * kUs, 1e-12);
  EXPECT_EQ(t.copy_s, 0);  // zero-copy: the NIC reads the sender's buffer
}

TEST(MpiP2p, CudaIpcInsideTheNvlinkDomain) {
  // GPU 0 -> NVSwitch -> GPU 1: 2 NVLink links of 0.3 us; 0.4 + 2 + 0.6 = 3.0 us; H100's
  // NVLink 450 GB/s per direction.
  Cluster c = Make("Standard_ND96isr_H100_v5", 1);
  P2pTime t = Model(c).PointToPoint(0, 1, 8);
  EXPECT_EQ(t.transport, "cuda-ipc");
  EXPECT_NEAR(t.latency_s, 3.0 * kUs, 1e-12);
  EXPECT_NEAR(t.bandwidth_Bps, 450e9, 1e6);
  // An NVL72 rack: GPU 0 and GPU 4 are in two VMs of one rack, still CUDA IPC over NVLink.
  Cluster r = Make("Standard_ND128isr_GB300_v6", 2);
  EXPECT_EQ(Model(r).PointToPoint(0, 4, 8).transport, "cuda-ipc");
  // With host buffers they are two VMs: InfiniBand.
  EXPECT_EQ(Model(r, MpiBuffer::kHost).PointToPoint(0, 4, 8).transport, "ib-host");
}

TEST(MpiP2p, StagingWithoutGpuDirectRdma) {
  // ND40rs_v2 has no GPUDirect RDMA: two staging copies of 6.5 us each replace the 0.5 us GPU
  // buffer overhead and the PCIe hops: 0.4 + 0.6 + 0.1 + 0.13 + 13 = 14.23 us.
  Cluster c = Make("Standard_ND40rs_v2", 2);
  MpiModel m = Model(c);
  P2pTime t = m.PointToPoint(0, 8, 8);
  EXPECT_EQ(t.transport, "ib-staged");
  EXPECT_NEAR(t.latency_s, 14.23 * kUs, 1e-12);
  // One NIC per VM shared by its 8 GPUs.
  EXPECT_EQ(m.NicSharers(0), 8);
  EXPECT_NEAR(m.PointToPoint(0, 8, 1e6, 8).bandwidth_Bps, t.bandwidth_Bps / 8,
              t.bandwidth_Bps * 1e-9);
}

TEST(MpiP2p, OsuBwWindow) {
  // W = 64 messages: bw = 64 s / (t(s) + 63 max(s / bw, 0.4 us)).
  Cluster c = Make("Standard_ND96asr_v4", 2);
  MpiModel m = Model(c, MpiBuffer::kHost);
  const double bw = 25e9 * kPayload;
  const double s = 4194304;
  const double t = 3.29e-6 + s / bw;
  EXPECT_NEAR(m.WindowBandwidth(0, 8, s), 64 * s / (t + 63 * s / bw), 1e3);
  // 8 B (eager): the sender's 0.4 us + its 8 B / 10 GB/s copy per message bounds the rate.
  const double t8 = 1.23e-6 + 16 / 10e9 + 8 / bw;
  EXPECT_NEAR(m.WindowBandwidth(0, 8, 8), 64 * 8 / (t8 + 63 * (0.4e-6 + 8 / 10e9)), 1);
}

TEST(MpiReduce, GpuKernelOrCpu) {
  // H100: hopper kernel_overhead 1.75 us + 3 x 1 MB / (3.35 TB/s x hbm_fraction 0.9187).
  Cluster c = Make("Standard_ND96isr_H100_v5", 1);
  const ArchCalibration& cal = D().compute.For(c.gpu_spec().arch);
  EXPECT_NEAR(Model(c).ReduceTime(1e6),
              cal.kernel_overhead_s + 3e6 / (c.gpu_spec().memory_Bps * cal.hbm_fraction), 1e-15);
  EXPECT_NEAR(Model(c, MpiBuffer::kHost).ReduceTime(1e6), 3e6 / 10e9, 1e-15);
  EXPECT_EQ(Model(c).ReduceTime(0), 0);
}

TEST(MpiAllreduce, RecursiveDoublingSteps) {
  // 2 VMs x 8 GPUs, 8 B: log2 16 = 4 exchanges at distances 1, 2, 4 (NVLink) and 8 (IB), each a
  // full 8-byte message and a reduction.
  Cluster c = Make("Standard_ND96isr_H100_v5", 2);
  MpiModel m = Model(c);
  StatusOr<MpiAllreduce> a = TimeMpiAllreduce(m, 16, 8);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->algorithm, "recursive-doubling");
  ASSERT_EQ(a->steps.size(), 4u);
  EXPECT_EQ(a->steps[2].transport, "cuda-ipc");
  EXPECT_EQ(a->steps[3].transport, "ib-gdr");
  EXPECT_EQ(a->steps[3].distance, 8);
  const double expect = 3 * (m.PointToPoint(0, 1, 8).time_s + m.ReduceTime(8)) +
                        m.PointToPoint(0, 8, 8).time_s + m.ReduceTime(8);
  EXPECT_NEAR(a->time_s, expect, 1e-15);
  // busbw = 8 / t x 2 x 15 / 16.
  EXPECT_NEAR(a->busbw_Bps, 8 / a->time_s * 30 / 16, 1e-6);
}

TEST(MpiAllreduce, RabenseifnerHalvesThenDoubles) {
  // 1 MiB over 16: reduce-scatter 512K, 256K, 128K, 64K at distances 1, 2, 4, 8; all-gather
  // 64K, 128K, 256K, 512K at distances 8, 4, 2, 1.
  Cluster c = Make("Standard_ND96isr_H100_v5", 2);
  StatusOr<MpiAllreduce> a = TimeMpiAllreduce(Model(c), 16, 1048576);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->algorithm, "rabenseifner");
  ASSERT_EQ(a->steps.size(), 8u);
  EXPECT_EQ(a->steps[0].bytes, 524288);
  EXPECT_EQ(a->steps[3].bytes, 65536);
  EXPECT_EQ(a->steps[3].distance, 8);
  EXPECT_EQ(a->steps[4].phase, "all-gather");
  EXPECT_EQ(a->steps[4].bytes, 65536);
  EXPECT_EQ(a->steps[7].distance, 1);
  EXPECT_EQ(a->steps[7].bytes, 524288);
}

TEST(MpiAllreduce, NonPowerOfTwoFolds) {
  // 3 VMs x 8 = 24 ranks: 2^4 = 16 take part after the 8 extra fold in; fold + 4 + unfold.
  Cluster c = Make("Standard_ND96isr_H100_v5", 3);
  StatusOr<MpiAllreduce> a = TimeMpiAllreduce(Model(c), 24, 8);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->steps.size(), 6u);
  EXPECT_EQ(a->steps.front().phase, "fold");
  EXPECT_EQ(a->steps.front().distance, 16);
  EXPECT_EQ(a->steps.back().phase, "unfold");
  EXPECT_EQ(TimeMpiAllreduce(Model(c), 1, 8).status().code(), StatusCode::kInvalidInput);
}

TEST(MpiAllreduce, StepsUseTheSlowestPairAtTheirDistance) {
  // 19 GB300 VMs = 76 GPUs, 64 after folding; distance 32 pairs stay in rack 0 (72 GPUs), but
  // the fold pairs rank 64 (rack 0) with 0, and rank 72 (rack 1) is outside the 64.
  Cluster c = Make("Standard_ND128isr_GB300_v6", 19);
  StatusOr<MpiAllreduce> a = TimeMpiAllreduce(Model(c), 76, 8);
  ASSERT_TRUE(a.ok());
  for (const MpiAllreduceStep& s : a->steps) EXPECT_EQ(s.transport, "cuda-ipc") << s.distance;
  // All 76 GPUs with 128 ranks' worth (37 VMs = 148 GPUs): distance 64 from rank 8 -> 72 crosses
  // racks, so that step is InfiniBand although 0 -> 64 is not.
  Cluster big = Make("Standard_ND128isr_GB300_v6", 37);
  StatusOr<MpiAllreduce> b = TimeMpiAllreduce(Model(big), 128, 8);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->steps.back().distance, 64);
  EXPECT_EQ(b->steps.back().transport, "ib-gdr");
}

TEST(MpiBufferParse, NamesAndErrors) {
  EXPECT_EQ(*ParseMpiBuffer("D"), MpiBuffer::kDevice);
  EXPECT_EQ(*ParseMpiBuffer("host"), MpiBuffer::kHost);
  StatusOr<MpiBuffer> bad = ParseMpiBuffer("managed");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(bad.status().message().find("--buffer"), std::string::npos);
}

TEST(Osu, PairsAndCurves) {
  Cluster c = Make("Standard_ND96isr_H100_v5", 2);
  StatusOr<std::vector<OsuPair>> p = RunOsuPairs(Model(c), 8);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].path, "NVLink");
  EXPECT_EQ((*p)[1].path, "InfiniBand");
  EXPECT_NEAR((*p)[1].time_s, 2.93e-6 + 16 / 10e9 + 8 / (50e9 * kPayload), 1e-12);
  // OSU's sizes: 1 B .. 4 MiB in powers of two = 23 points (8 B is one of them).
  EXPECT_EQ((*p)[1].curve.size(), 23u);
  EXPECT_EQ((*p)[1].curve.front().bytes, 1);
  EXPECT_EQ((*p)[1].curve.back().bytes, 4194304);
  // A size off the grid joins it.
  EXPECT_EQ((*RunOsuPairs(Model(c), 1000))[1].curve.size(), 24u);
  StatusOr<OsuAllreduce> a = RunOsuAllreduce(Model(c), 8);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->curve.size(), 21u);  // 4 B .. 4 MiB
}

TEST(Osu, Nvl72PairsInsideAndAcrossRacks) {
  // 19 GB300 VMs: VM 1 is in rack 0 (NVLink); GPU 72 (VM 18) is in the second rack.
  Cluster c = Make("Standard_ND128isr_GB300_v6", 19);
  StatusOr<std::vector<OsuPair>> bw = RunOsuPairs(Model(c), 4194304);
  ASSERT_TRUE(bw.ok()) << bw.status().message();
  ASSERT_EQ(bw->size(), 3u);
  EXPECT_EQ((*bw)[1].path, "NVLink (NVL72 rack)");
  EXPECT_EQ((*bw)[2].scope, "inter-rack");
  EXPECT_EQ((*bw)[2].to, 72);
  EXPECT_EQ((*bw)[2].path, "InfiniBand");
  EXPECT_GT((*bw)[1].bandwidth_Bps, (*bw)[2].bandwidth_Bps);
}

TEST(Osu, OneGpuHasNoPair) {
  const SkuSpec* sku = *D().cat.FindSku("Standard_ND96isr_H100_v5");
  ClusterSpec spec;
  spec.sku = sku;
  spec.gpu = &D().cat.GpuOf(*sku);
  spec.gpus_per_vm = 1;
  Cluster c = *BuildCluster(spec, D().fabric);
  EXPECT_EQ(RunOsuPairs(Model(c), 8).status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(RunOsuAllreduce(Model(c), 8).status().code(), StatusCode::kInvalidInput);
}

TEST(StreamHost, SocketsTimesChannelsTimesFraction) {
  // ND A100 v4: 2 sockets x 204.8 GB/s (8 x DDR4-3200 x 8 B) = 409.6 GB/s; x 0.80 = 327.68.
  StreamResult s = RunStream(Make("Standard_ND96asr_v4", 2), D().compute, D().params.host_memory);
  ASSERT_TRUE(s.has_host);
  EXPECT_NEAR(s.host_peak_Bps, 409.6e9, 1e3);
  EXPECT_NEAR(s.host_Bps, 327.68e9, 1e3);
  EXPECT_NEAR(s.host_cluster_Bps, 655.36e9, 1e3);
  // ND6s: 1 socket x 76.8 GB/s x its 0.5 share x 0.80 = 30.72 GB/s.
  StreamResult n = RunStream(Make("Standard_ND6s", 1), D().compute, D().params.host_memory);
  EXPECT_NEAR(n.host_Bps, 30.72e9, 1e3);
  // GB300: 2 Grace x 512 GB/s x 0.80 = 819.2 GB/s.
  StreamResult g =
      RunStream(Make("Standard_ND128isr_GB300_v6", 1), D().compute, D().params.host_memory);
  EXPECT_NEAR(g.host_Bps, 819.2e9, 1e3);
  // NG8's CPU is not stated: no host figure.
  EXPECT_FALSE(RunStream(Make("NG8", 1), D().compute, D().params.host_memory).has_host);
}

TEST(HpcParamsParse, HostMemoryErrors) {
  const std::string base = R"(hpl:
  memory_fraction: {value: 0.85, source: "a"}
  max_memory_fraction: {value: 0.95, source: "a"}
  nb: {value: 1024, source: "a"}
  panel_kernels_per_column: {value: 3, source: "a"}
  mxp_lu_precision: "fp16"
  mxp_matrix_bytes: {value: 4, source: "a"}
  mxp_panel_bytes: {value: 2, source: "a"}
  mxp_refinement_iterations: {value: 3, source: "a"}
stencil:
  hpcg_grid: {value: "16", source: "a"}
  halo3d_grid: {value: "16", source: "a"}
osu:
  latency_bytes: {value: 8, source: "a"}
  bw_bytes: {value: 8, source: "a"}
  allreduce_bytes: {value: 8, source: "a"}
mpi:
  software: {value: "0.4 us", source: "a"}
  adapter_latency: {value: "0.6 us", source: "a"}
  cable_latency: {value: "0.05 us", source: "a"}
  ib_mtu: {value: "4096 B", source: "a"}
  ib_packet_overhead: {value: "26 B", source: "a"}
  rndv_threshold: {value: "8192 B", source: "a"}
  gpu_buffer_overhead: {value: "0.5 us", source: "a"}
  cuda_copy_latency: {value: "4 us", source: "a"}
  cuda_ipc_latency: {value: "2 us", source: "a"}
  shm_latency: {value: "0.2 us", source: "a"}
  shm_bandwidth: {value: "10 GB/s", source: "a"}
  osu_window: {value: 64, source: "a"}
  allreduce_short: {value: "2048 B", source: "a"}
host_memory:
  stream_fraction: {value: 0.8, source: "a"}
  sizes:
    - size: "X"
      peak_per_socket: {value: "100 GB/s", source: "a"}
)";
  StatusOr<HpcParams> ok = ParseHpcParams(base, "t.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_NEAR(ok->mpi.software_s, 0.4e-6, 1e-15);
  EXPECT_EQ(ok->host_memory.Find("X")->peak_per_socket_Bps, 100e9);
  EXPECT_EQ(ok->host_memory.Find("Y"), nullptr);
  // The same size twice, a share above 1, an unknown key: one-line errors.
  const std::string dup =
      base + "    - size: \"X\"\n      peak_per_socket: {value: \"1 GB/s\", source: \"a\"}\n";
  EXPECT_NE(ParseHpcParams(dup, "t.yaml").status().message().find("listed twice"),
            std::string::npos);
  const std::string share = base + "      share: {value: 1.5, source: \"a\"}\n";
  EXPECT_FALSE(ParseHpcParams(share, "t.yaml").ok());
  const std::string unknown = base + "      channels: {value: 8, source: \"a\"}\n";
  EXPECT_FALSE(ParseHpcParams(unknown, "t.yaml").ok());
}

}  // namespace
}  // namespace ndt
