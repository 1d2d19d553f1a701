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

}  // namespace
}  // namespace ndt
