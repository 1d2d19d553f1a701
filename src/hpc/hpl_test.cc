#include "hpc/hpl.h"

#include <gtest/gtest.h>

#include <cmath>

#include "coll/nccl_model.h"
#include "compute/compute.h"
#include "hpc/micro.h"
#include "hpc/params.h"
#include "hpc/stencil.h"
#include "hpc/testing.h"
#include "hw/catalog.h"
#include "topo/builders.h"
#include "topo/fabric_params.h"

namespace ndt {
namespace {

using hpc_testing::D;
using hpc_testing::Make;

StatusOr<HplResult> Hpl(const Cluster& c, HplRequest req = {}) {
  return RunHpl(c, D().compute, D().nccl, D().params, req);
}

TEST(HplFlops, IsHplsCount) {
  // HPL_pdtest.c's Gflops: N^2 (2/3 N + 3/2): 2/3 1000^3 + 3/2 1000^2 = 666,666,666.7 +
  // 1,500,000 (was 2 N^2 = 668,666,666.7, which is not what HPL reports).
  EXPECT_NEAR(HplFlops(1000), 668166666.667, 1e-3);
  EXPECT_DOUBLE_EQ(HplFlops(0), 0);
}

TEST(HplGrid, ClosestToSquareWithPNotAboveQ) {
  EXPECT_EQ(HplGrid(8), std::make_pair(2, 4));
  EXPECT_EQ(HplGrid(16), std::make_pair(4, 4));
  EXPECT_EQ(HplGrid(7), std::make_pair(1, 7));  // a prime: one row
  // 2,240 = 40 x 56: 40 is the largest divisor <= sqrt(2240) = 47.3 (41..47 do not divide).
  EXPECT_EQ(HplGrid(2240), std::make_pair(40, 56));
  EXPECT_EQ(HplGrid(72), std::make_pair(8, 9));
}

TEST(HplN, FillsTheMemoryFraction) {
  // sqrt(0.85 x 80e9 B x 8 GPUs / 8 B) = 260,768.1; / 1024 = 254.7 -> 254 blocks = 260,096.
  EXPECT_EQ(HplNFromMemory(8, 80e9, 0.85, 8, 1024), 260096);
}

TEST(Hpl, OneA100VmIsDgemmBound) {
  Cluster c = Make("Standard_ND96amsr_A100_v4", 1);
  StatusOr<HplResult> r = Hpl(c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->p, 2);
  EXPECT_EQ(r->q, 4);
  EXPECT_EQ(r->nb, 1024);
  // N from the A100 80GB's memory (data/gpus: 80 GB) at 85%.
  EXPECT_EQ(r->n, HplNFromMemory(8, c.gpu_spec().memory_bytes, 0.85, 8, 1024));
  EXPECT_DOUBLE_EQ(r->flops, HplFlops(static_cast<double>(r->n)));
  // Rpeak: 8 x 19.5 TFLOP/s on the FP64 tensor cores.
  EXPECT_DOUBLE_EQ(r->rpeak_flops, 8 * 19.5e12);
  EXPECT_EQ(r->bound, "dgemm");
  // Below the DGEMM's own fraction (the GEMM model at the first step) and above half of it.
  EXPECT_LT(r->efficiency, r->dgemm_efficiency);
  EXPECT_GT(r->efficiency, 0.5 * r->dgemm_efficiency);
  EXPECT_NEAR(r->time_s, r->dgemm_s + r->panel_s + r->comm_s, 1e-9 * r->time_s);
  EXPECT_NEAR(r->rmax_flops, r->flops / r->time_s, 1e-6 * r->rmax_flops);
}

TEST(Hpl, SmallNOnManyVmsIsNotDgemmBound) {
  // 64 VMs (512 GPUs) on N = 32,768: each GPU's trailing block is at most 1,456 x 1,024, so the
  // per-column pivot all-reduces and the broadcasts dominate.
  Cluster c = Make("Standard_ND96amsr_A100_v4", 64);
  HplRequest req;
  req.n = 32768;
  StatusOr<HplResult> r = Hpl(c, req);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NE(r->bound, "dgemm");
  EXPECT_LT(r->efficiency, 0.2);
}

TEST(Hpl, Gb300RackShowsItsTinyFp64) {
  Cluster c = Make("Standard_ND128isr_GB300_v6", 18);
  StatusOr<HplResult> r = Hpl(c);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // 72 GPUs x 1.25 TFLOP/s (data/gpus/gb300.yaml).
  EXPECT_DOUBLE_EQ(r->rpeak_flops, 72 * 1.25e12);
  EXPECT_LT(r->rmax_flops, 90e12);
  // One H100 VM (8 GPUs) outruns the 72-GPU rack in FP64.
  StatusOr<HplResult> h = Hpl(Make("Standard_ND96isr_H100_v5", 1));
  ASSERT_TRUE(h.ok());
  EXPECT_GT(h->rmax_flops, r->rmax_flops);
}

TEST(Hpl, MxpIsFasterOnTensorCores) {
  Cluster c = Make("Standard_ND96amsr_A100_v4", 1);
  HplRequest req;
  req.mxp = true;
  StatusOr<HplResult> m = Hpl(c, req);
  StatusOr<HplResult> d = Hpl(c);
  ASSERT_TRUE(m.ok() && d.ok());
  EXPECT_EQ(m->lu_precision, Precision::kFp16);
  EXPECT_GT(m->refinement_s, 0);
  // N on 4-byte elements: sqrt(2) larger than HPL's 8-byte N, within one block.
  EXPECT_NEAR(static_cast<double>(m->n), d->n * std::sqrt(2.0), 1024);
  EXPECT_GT(m->rmax_flops, 2 * d->rmax_flops);
}

TEST(Hpl, Errors) {
  Cluster c = Make("Standard_ND96amsr_A100_v4", 1);
  HplRequest grid;
  grid.p = 3;
  grid.q = 3;  // 9 ranks on 8 GPUs
  StatusOr<HplResult> r = Hpl(c, grid);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(r.status().message().find("--p 3 x --q 3 = 9"), std::string::npos);
  HplRequest alone;
  alone.p = 2;
  EXPECT_EQ(Hpl(c, alone).status().code(), StatusCode::kInvalidInput);
  // 8 x 80 GB: N = 300,000 needs 150,000 x 75,000 x 8 B = 90 GB per GPU.
  HplRequest big;
  big.n = 300000;
  r = Hpl(c, big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDoesNotFit);
  EXPECT_NE(r.status().message().find("--n 300000"), std::string::npos);
  HplRequest nb;
  nb.n = 1000;
  nb.nb = 2048;
  EXPECT_EQ(Hpl(c, nb).status().code(), StatusCode::kInvalidInput);
}

TEST(Stream, IsTheFittedHbmFraction) {
  Cluster c = Make("Standard_ND96amsr_A100_v4", 2);
  StreamResult s = RunStream(c, D().compute, D().params.host_memory);
  // A100 80GB: 2,039 GB/s x ampere's hbm_fraction (0.8117, compute.yaml) = 1,655 GB/s.
  EXPECT_NEAR(s.gpu_Bps, 2039e9 * 0.8117, 1e9);
  EXPECT_DOUBLE_EQ(s.vm_Bps, 8 * s.gpu_Bps);
  EXPECT_DOUBLE_EQ(s.cluster_Bps, 16 * s.gpu_Bps);
}

TEST(Grid, Parses) {
  EXPECT_EQ(*ParseGrid("256x128x64"), (Grid3{256, 128, 64}));
  EXPECT_EQ(*ParseGrid("32"), (Grid3{32, 32, 32}));  // one number: a cube
  EXPECT_FALSE(ParseGrid("256x128").ok());
  EXPECT_FALSE(ParseGrid("1x4x4").ok());  // a side of 1 has no interior
  EXPECT_FALSE(ParseGrid("-4x4x4").ok());
  EXPECT_FALSE(ParseGrid("").ok());
}

TEST(Hpcg, IsMemoryBoundAtAFewPercentOfPeak) {
  Cluster c = Make("Standard_ND96amsr_A100_v4", 1);
  StatusOr<HpcgResult> r =
      RunHpcg(c, D().compute, D().params.mpi, D().fabric, Grid3{128, 128, 128});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->bound, "memory");
  // SpMV's intensity is 2 FLOPs per 12 bytes (+ vectors): below 1/6 FLOP per byte, so at most
  // 1,655 GB/s / 6 = 276 GFLOP/s per GPU, 1.4% of 19.5 TFLOP/s.
  EXPECT_LT(r->gflops_per_gpu, 276);
  EXPECT_GT(r->gflops_per_gpu, 150);
  EXPECT_LT(r->fraction_of_peak, 0.015);
  EXPECT_NEAR(r->time_per_iteration_s, r->memory_s + r->halo_s + r->allreduce_s, 1e-12);
  // A grid whose matrix cannot fit in 80 GB: 1024^3 rows x ~400 B.
  EXPECT_EQ(
      RunHpcg(c, D().compute, D().params.mpi, D().fabric, Grid3{1024, 1024, 1024}).status().code(),
      StatusCode::kDoesNotFit);
}

TEST(Halo3d, WeakScalingDropsAcrossVmsAndStrongScalingStops) {
  Cluster c = Make("Standard_ND96isr_H100_v5", 4);
  StatusOr<Halo3dResult> r =
      RunHalo3d(c, D().compute, D().params.mpi, D().fabric, Grid3{256, 256, 256});
  ASSERT_TRUE(r.ok()) << r.status().message();
  // G = 1, 2, 4, 8, 16, 32.
  ASSERT_EQ(r->rows.size(), 6u);
  EXPECT_DOUBLE_EQ(r->rows[0].weak_efficiency, 1.0);
  EXPECT_EQ(r->rows[3].path, "NVLink");
  EXPECT_EQ(r->rows[4].path, "InfiniBand");
  EXPECT_LT(r->rows[4].weak_efficiency, r->rows[3].weak_efficiency);
  // 256^3 x 16 B = 268 MB per sweep, ~93 us on one H100: exchanges of microseconds stop strong
  // scaling well before 32 GPUs.
  EXPECT_GT(r->strong_stops_at, 1);
  EXPECT_LE(r->strong_stops_at, 32);
}

TEST(HpcParams, RejectsUnknownKeysAndBadValues) {
  const std::string ok =
      "hpl:\n  memory_fraction: 0.8\n  max_memory_fraction: 0.9\n  nb: 512\n"
      "  panel_kernels_per_column: 3\n  mxp_lu_precision: bf16\n  mxp_matrix_bytes: 4\n"
      "  mxp_panel_bytes: 2\n  mxp_refinement_iterations: 3\n"
      "stencil:\n  hpcg_grid: {value: \"64x64x64\", source: \"test\"}\n"
      "  halo3d_grid: {value: \"128\", source: \"test\"}\n"
      "osu:\n  latency_bytes: 8\n  bw_bytes: 1024\n  allreduce_bytes: 8\n"
      "mpi:\n  software: 0.4 us\n  adapter_latency: 0.6 us\n  cable_latency: 0.05 us\n"
      "  ib_mtu: 4096 B\n  ib_packet_overhead: 26 B\n  rndv_threshold: 8192 B\n"
      "  gpu_buffer_overhead: 0.5 us\n  cuda_copy_latency: 4 us\n  cuda_ipc_latency: 2 us\n"
      "  shm_latency: 0.2 us\n  shm_bandwidth: 10 GB/s\n  osu_window: 64\n"
      "  allreduce_short: 2048 B\n"
      "host_memory:\n  stream_fraction: 0.8\n  sizes: []\n";
  StatusOr<HpcParams> p = ParseHpcParams(ok, "hpc.yaml");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->hpl.nb, 512);
  EXPECT_EQ(p->hpl.mxp_lu_precision, Precision::kBf16);
  EXPECT_FALSE(ParseHpcParams(ok + "extra: 1\n", "hpc.yaml").ok());
  std::string bad = ok;
  bad.replace(bad.find("0.8"), 3, "1.5");  // memory_fraction above 1
  EXPECT_FALSE(ParseHpcParams(bad, "hpc.yaml").ok());
}

}  // namespace
}  // namespace ndt
