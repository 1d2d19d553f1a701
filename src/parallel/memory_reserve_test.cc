#include "parallel/memory_reserve.h"

#include <gtest/gtest.h>

#include <string>

#include "hw/catalog.h"
#include "parallel/testing.h"

namespace ndt {
namespace {

Strategy Groups(int tp, int pp, int cp, int dp, int ep = 1) {
  Strategy s;
  s.tp = tp;
  s.pp = pp;
  s.cp = cp;
  s.dp = dp;
  s.ep = ep;
  return s;
}

TEST(MemoryReserve, CommunicatorsCountTheStrategysGroups) {
  // One GPU: no group of two ranks, no communicator.
  EXPECT_EQ(NcclCommunicators(Groups(1, 1, 1, 1)), 0);
  // TP 8 on 8 GPUs: the TP group is the world; one communicator.
  EXPECT_EQ(NcclCommunicators(Groups(8, 1, 1, 1)), 1);
  // NeMo's Llama 3 8B on 8 GPUs, cp 2 dp 4: CP (2), DP x CP (8), DP alone (4); the world (8) is
  // the DP x CP group's ranks: 3.
  EXPECT_EQ(NcclCommunicators(Groups(1, 1, 2, 4)), 3);
  // Llama 3 405B on 8,192 GPUs, tp 8 pp 16 dp 64: TP, DP, PP, MP = TP x PP (128) and the world
  // (8,192), which no group spans: 5.
  EXPECT_EQ(NcclCommunicators(Groups(8, 16, 1, 64)), 5);
  // MoE, dp 8 ep 4 on 8 GPUs: DP (8, the world), EP (4), expert DP (8 / 4 = 2): 3.
  EXPECT_EQ(NcclCommunicators(Groups(1, 1, 1, 8, 4)), 3);
}

TEST(MemoryReserve, ReserveOfAddsTheSourcedPieces) {
  // Hopper's entry in data/memory_reserve.yaml: context 804,061,184 B (measured), cuBLAS 32 MiB =
  // 33,554,432 B, 16 channels of 4,194,304 + 524,288 + 4,915,200 = 9,633,792 B, fragmentation
  // 3.7% of the pool (measured).
  StatusOr<MemoryReserveTable> t = LoadMemoryReserve(NDT_DATA_DIR);
  ASSERT_TRUE(t.ok()) << t.status().message();
  StatusOr<MemoryReserve> h = t->For("hopper");
  ASSERT_TRUE(h.ok());
  EXPECT_DOUBLE_EQ(h->nccl_channel_bytes, 9633792.0);
  // cp 2 dp 4 (3 communicators), no TP overlap, on 80e9 B:
  //   NCCL 3 x 16 x 9,633,792 = 462,422,016 B
  //   pool 80e9 - 804,061,184 - 462,422,016 = 78,733,516,800 B; 3.7% = 2,913,140,121.6 B
  //   total 804,061,184 + 33,554,432 + 462,422,016 + 2,913,140,121.6 = 4,213,177,753.6 B
  const TransformerSpec m = testing::SmallGpt();
  const Strategy s = Groups(1, 1, 2, 4);
  const ReserveBreakdown r = ReserveOf(*h, 80e9, m, s);
  EXPECT_EQ(r.nccl_communicators, 3);
  EXPECT_DOUBLE_EQ(r.nccl_buffers_bytes, 462422016.0);
  EXPECT_DOUBLE_EQ(r.userbuffers_bytes, 0.0);
  EXPECT_NEAR(r.allocator_fragmentation_bytes, 2913140121.6, 1e-3);
  EXPECT_NEAR(r.total_bytes(), 4213177753.6, 1e-3);
  EXPECT_NEAR(UsableBytes(*h, 80e9, m, s), 80e9 - 4213177753.6, 1e-3);
}

// The shipped file: every architecture of the catalog's GPUs has an entry.
TEST(MemoryReserve, ShippedDataCoversTheCatalog) {
  StatusOr<MemoryReserveTable> t = LoadMemoryReserve(NDT_DATA_DIR);
  ASSERT_TRUE(t.ok()) << t.status().message();
  StatusOr<Catalog> cat = Catalog::Load(NDT_DATA_DIR);
  ASSERT_TRUE(cat.ok());
  for (const GpuSpec& g : cat->gpus()) {
    StatusOr<MemoryReserve> r = t->For(g.arch);
    ASSERT_TRUE(r.ok()) << g.name << ": " << r.status().message();
    EXPECT_GT(r->cuda_context_bytes, 0) << g.arch;
    EXPECT_GT(r->cublas_workspace_bytes, 0) << g.arch;
    EXPECT_GT(r->nccl_channels, 0) << g.arch;
  }
}

TEST(MemoryReserve, BadFilesSayWhatIsWrong) {
  const std::string nccl =
      "nccl:\n  simple_buffer: {value: \"4 MiB\", source: \"s\"}\n"
      "  ll_buffer: {value: \"512 KiB\", source: \"s\"}\n"
      "  ll128_buffer: {value: \"4915200 B\", source: \"s\"}\n";
  const std::string arch =
      "archs:\n  - arch: hopper\n    cuda_context: {value: \"600 MiB\", source: \"s\"}\n"
      "    cublas_workspace: {value: \"32 MiB\", source: \"s\"}\n"
      "    nccl_channels: {value: 16, source: \"s\"}\n";
  auto err = [](const std::string& text) {
    StatusOr<MemoryReserveTable> t = ParseMemoryReserve(text, "t.yaml");
    return t.ok() ? std::string() : t.status().message();
  };
  const std::string frag = "allocator_fragmentation: {value: 0.05, source: \"assumption\"}\n";
  StatusOr<MemoryReserveTable> ok = ParseMemoryReserve(nccl + frag + arch, "t.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  // 4 MiB + 512 KiB + 4,915,200 B = 4,194,304 + 524,288 + 4,915,200 = 9,633,792 B.
  EXPECT_DOUBLE_EQ(ok->archs[0].nccl_channel_bytes, 9633792.0);
  EXPECT_DOUBLE_EQ(ok->archs[0].cuda_context_bytes, 600.0 * 1024 * 1024);
  EXPECT_NE(
      err(nccl + "allocator_fragmentation: {value: 1.5, source: \"a\"}\n" + arch).find("fraction"),
      std::string::npos);
  EXPECT_NE(err(nccl + "allocator_fragmentation: 0.05\n" + arch).find("source"), std::string::npos);
  EXPECT_NE(err(nccl + frag + "archs: []\n").find("archs"), std::string::npos);
  EXPECT_NE(err(nccl + frag + arch + "    bogus: 1\n").find("bogus"), std::string::npos);
  // An architecture the file does not list: one line naming the file and what to add.
  StatusOr<MemoryReserve> none = ok->For("ampere");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("data/memory_reserve.yaml has no entry"),
            std::string::npos);
  EXPECT_EQ(none.status().message().find('\n'), std::string::npos);
}

}  // namespace
}  // namespace ndt
