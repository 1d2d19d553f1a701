#include "parallel/schedule.h"

#include <gtest/gtest.h>

#include "parallel/testing.h"

namespace ndt {
namespace {

TEST(Schedule, OneFOneBHasWarmupThenAlternates) {
  // pp 4, stage 0: 3 warm-up forwards, then F3 B0 ... ; every pass appears once.
  auto st = StageSchedule(PipeSchedule::kOneFOneB, 4, 1, 8, 0);
  ASSERT_EQ(st.size(), 16u);
  EXPECT_TRUE(st[0].forward && st[1].forward && st[2].forward && st[3].forward);
  EXPECT_FALSE(st[4].forward);
  EXPECT_EQ(st[4].micro_batch, 0);
  auto last = StageSchedule(PipeSchedule::kOneFOneB, 4, 1, 8, 3);
  EXPECT_TRUE(last[0].forward);
  EXPECT_FALSE(last[1].forward);  // last stage: no warm-up
}

TEST(Schedule, InterleavedVisitsEveryChunkMicroBatchOnce) {
  auto st = StageSchedule(PipeSchedule::kInterleaved, 4, 2, 8, 1);
  std::vector<int> seen(2 * 2 * 8, 0);
  for (const PipeStep& p : st) ++seen[(p.forward ? 0 : 16) + p.chunk * 8 + p.micro_batch];
  for (int v : seen) EXPECT_EQ(v, 1);
}

}  // namespace
}  // namespace ndt
