#include "serve/allreduce.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

// TensorRT-LLM's AUTO selection with data/serve/engine.yaml's values (16 MB / 8 MB workspaces,
// one-shot below 1 MB at TP 3-4 and 500 kB above, MIN_LATENCY one-shot up to 128 tokens).
TEST(TpAllReduce, SelectionFollowsTheEngine) {
  const CustomAllReduceParams p;
  using A = TpAllReduceAlgo;
  const auto k24 = TpAllReduceImpl::kTrtllm2024, k25 = TpAllReduceImpl::kTrtllm2025;
  // NCCL everywhere when told so, and at TP 1.
  EXPECT_EQ(ChooseTpAllReduce(TpAllReduceImpl::kNccl, 8, 1e3, 1, p), A::kNccl);
  EXPECT_EQ(ChooseTpAllReduce(k25, 1, 1e3, 1, p), A::kNccl);
  // 2024 plugin: TP 2 one-shot up to its 16 MB workspace, NCCL above.
  EXPECT_EQ(ChooseTpAllReduce(k24, 2, 16e6, 1000, p), A::kOneShot);
  EXPECT_EQ(ChooseTpAllReduce(k24, 2, 16e6 + 1, 1000, p), A::kNccl);
  // TP 4: one-shot below 1 MB, two-shot up to 8 MB, NCCL above.
  EXPECT_EQ(ChooseTpAllReduce(k24, 4, 999e3, 61, p), A::kOneShot);
  EXPECT_EQ(ChooseTpAllReduce(k24, 4, 1e6, 61, p), A::kTwoShot);
  EXPECT_EQ(ChooseTpAllReduce(k24, 4, 9e6, 549, p), A::kNccl);
  // TP 8: one-shot below 500 kB, then two-shot.
  EXPECT_EQ(ChooseTpAllReduce(k24, 8, 499e3, 30, p), A::kOneShot);
  EXPECT_EQ(ChooseTpAllReduce(k24, 8, 500e3, 30, p), A::kTwoShot);
  // 2025: MIN_LATENCY (one-shot <= 128 tokens, else two-shot) at TP 2 up to 16 MB ...
  EXPECT_EQ(ChooseTpAllReduce(k25, 2, 128 * 16384.0, 128, p), A::kOneShot);
  EXPECT_EQ(ChooseTpAllReduce(k25, 2, 129 * 16384.0, 129, p), A::kTwoShot);
  EXPECT_EQ(ChooseTpAllReduce(k25, 2, 17e6, 1038, p), A::kNccl);
  // ... and NCCL from 1 MB (TP 4) or 500 kB (TP 8) on, where the 2024 plugin ran two-shot.
  EXPECT_EQ(ChooseTpAllReduce(k25, 4, 999e3, 61, p), A::kOneShot);
  EXPECT_EQ(ChooseTpAllReduce(k25, 4, 1e6, 61, p), A::kNccl);
  EXPECT_EQ(ChooseTpAllReduce(k25, 8, 500e3, 30, p), A::kNccl);
}

// H100 NVSwitch path: 450 GB/s per direction, 0.6 us one way, 3 us launch. A 1 MB message:
//   one-shot TP 8 = 3 + 3 x 0.6 + 7 x 1e6 / 450e9 s = 3 + 1.8 + 15.556 = 20.356 us;
//   two-shot TP 8 = 3 + 6 x 0.6 + 2 x 7/8 x 1e6 / 450e9 = 3 + 3.6 + 3.889 = 10.489 us;
//   one-shot TP 2 = 3 + 1.8 + 1e6 / 450e9 = 7.022 us.
TEST(TpAllReduce, CustomKernelTimes) {
  const NvlinkPath path{450e9, 0.6e-6, 3e-6};
  EXPECT_NEAR(CustomAllReduceTime(TpAllReduceAlgo::kOneShot, 8, 1e6, path), 20.3556e-6, 1e-10);
  EXPECT_NEAR(CustomAllReduceTime(TpAllReduceAlgo::kTwoShot, 8, 1e6, path), 10.4889e-6, 1e-10);
  EXPECT_NEAR(CustomAllReduceTime(TpAllReduceAlgo::kOneShot, 2, 1e6, path), 7.0222e-6, 1e-10);
}

// The 2024 kernels' traits on the same path, with I = 24 x 512 x 16 B = 196,608 B in flight per
// peer and a 3 TB/s local copy. The read rate is min(450e9, (tp - 1) I / (2 x 0.6 us)):
//   TP 2: 196,608 / 1.2e-6 = 163.84 GB/s (the cap binds); a 16 MB one-shot =
//     3 + 1.8 + 2 x 16e6 / 3e12 (10.667) + 16e6 / 163.84e9 (97.656) = 113.123 us;
//   TP 8: 7 x 163.84 = 1,146.9 GB/s > 450: the link binds; a 1 MB two-shot =
//     3 + 3.6 + 2 x 1e6 / 3e12 (0.667) + 3.889 = 11.156 us.
TEST(TpAllReduce, The2024KernelsCopyInAndKeepFewReadsInFlight) {
  const CustomAllReduceParams p;
  EXPECT_DOUBLE_EQ(p.inflight_bytes_2024, 196608.0);
  NvlinkPath path{450e9, 0.6e-6, 3e-6};
  path.inflight_bytes = p.inflight_bytes_2024;
  path.copy_Bps = 3e12;
  EXPECT_NEAR(CustomAllReduceTime(TpAllReduceAlgo::kOneShot, 2, 16e6, path), 113.1230e-6, 1e-10);
  EXPECT_NEAR(CustomAllReduceTime(TpAllReduceAlgo::kTwoShot, 8, 1e6, path), 11.1556e-6, 1e-10);
}

// The read round trip as given (data/serve/engine.yaml remote_read_round_trip_2024) instead of
// 2 x 0.6 us: at R = 2.4 us the TP 2 cap halves, 196,608 / 2.4e-6 = 81.92 GB/s, and the same
// 16 MB one-shot = 3 + 1.8 + 10.667 + 16e6 / 81.92e9 (195.3125) = 210.7792 us; at TP 8 the cap,
// 7 x 81.92 = 573.4 GB/s, is still above the link's 450: the 1 MB two-shot stays 11.156 us.
TEST(TpAllReduce, The2024KernelsReadRateFollowsTheRoundTrip) {
  NvlinkPath path{450e9, 0.6e-6, 3e-6};
  path.inflight_bytes = CustomAllReduceParams{}.inflight_bytes_2024;
  path.copy_Bps = 3e12;
  path.read_round_trip_s = 2.4e-6;
  EXPECT_NEAR(CustomAllReduceTime(TpAllReduceAlgo::kOneShot, 2, 16e6, path), 210.7792e-6, 1e-10);
  EXPECT_NEAR(CustomAllReduceTime(TpAllReduceAlgo::kTwoShot, 8, 1e6, path), 11.1556e-6, 1e-10);
}

TEST(TpAllReduce, Names) {
  TpAllReduceImpl i = TpAllReduceImpl::kNccl;
  EXPECT_TRUE(ParseTpAllReduce("trtllm-2024", &i));
  EXPECT_EQ(i, TpAllReduceImpl::kTrtllm2024);
  EXPECT_STREQ(TpAllReduceName(TpAllReduceImpl::kTrtllm2025), "trtllm-2025");
  EXPECT_FALSE(ParseTpAllReduce("oneshot", &i));
}

}  // namespace
}  // namespace ndt
