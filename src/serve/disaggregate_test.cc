#include "serve/disaggregate.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

TEST(ReplicaFirstGpu, ReplicasFillVmsInOrder) {
  // 8-GPU VMs, TP2 replicas: 4 to a VM. Replica 5 is VM 1's second: GPU 8 + 2 = 10.
  EXPECT_EQ(ReplicaFirstGpu(0, 2, 1, 8, 8), 0);
  EXPECT_EQ(ReplicaFirstGpu(5, 2, 1, 8, 8), 10);
  // TP3: 2 to a VM (GPUs 6 and 7 idle). Replica 3 is VM 1's second: 8 + 3 = 11.
  EXPECT_EQ(ReplicaFirstGpu(3, 3, 1, 8, 8), 11);
  // GB300 (4-GPU VMs, 72-GPU racks), TP1: replica 37 is VM 9's second: 36 + 1 = 37.
  EXPECT_EQ(ReplicaFirstGpu(37, 1, 1, 4, 72), 37);
}

TEST(ReplicaFirstGpu, WideReplicasKeepTpGroupsInsideADomain) {
  // TP4 x PP4 on 8-GPU VMs (domain = VM): TP groups of 4, 2 to a VM; replica 2 is TP groups
  // 8-11, the first in VM 4: GPU 32.
  EXPECT_EQ(ReplicaFirstGpu(2, 4, 4, 8, 8), 32);
  // GB300 TP16 x PP1: a 72-GPU rack holds 4 TP16 groups (64 GPUs, 8 idle), so replica 4 starts
  // the second rack at GPU 72, not at 4 x 16 = 64 (which would straddle the racks).
  EXPECT_EQ(ReplicaFirstGpu(3, 16, 1, 4, 72), 48);
  EXPECT_EQ(ReplicaFirstGpu(4, 16, 1, 4, 72), 72);
}

TEST(StageFirstGpu, PipelineStagesCrossRacksWhereTheLayoutSaysSo) {
  // GB300 (4-GPU VMs, 72-GPU racks) TP2 x PP8: a rack holds 36 TP2 groups. Replica 4 is TP groups
  // 32-39: stage 3 is group 35 (GPUs 70-71, rack 1), stage 4 group 36 = rack 2's first (GPU 72):
  // that boundary crosses the racks. Replica 0's stage 4 is group 4: GPU 8, in rack 1.
  EXPECT_EQ(StageFirstGpu(4, 3, 2, 8, 4, 72), 70);
  EXPECT_EQ(StageFirstGpu(4, 4, 2, 8, 4, 72), 72);
  EXPECT_EQ(StageFirstGpu(0, 4, 2, 8, 4, 72), 8);
  // Inside a VM: 8-GPU VMs, TP2 x PP2, replica 1 (GPUs 4-7): stage 1 at 4 + 2 = 6.
  EXPECT_EQ(StageFirstGpu(1, 1, 2, 2, 8, 8), 6);
}

}  // namespace
}  // namespace ndt
