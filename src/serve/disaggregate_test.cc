#include "serve/disaggregate.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

TEST(ReplicaFirstGpu, ReplicasFillVmsInOrder) {
  // 8-GPU VMs, TP2 replicas: 4 to a VM. Replica 5 is VM 1's second: GPU 8 + 2 = 10.
  EXPECT_EQ(ReplicaFirstGpu(0, 2, 8), 0);
  EXPECT_EQ(ReplicaFirstGpu(5, 2, 8), 10);
  // TP3: 2 to a VM (GPUs 6 and 7 idle). Replica 3 is VM 1's second: 8 + 3 = 11.
  EXPECT_EQ(ReplicaFirstGpu(3, 3, 8), 11);
  // GB300 (4-GPU VMs), TP1: replica 37 is VM 9's second: 36 + 1 = 37.
  EXPECT_EQ(ReplicaFirstGpu(37, 1, 4), 37);
  // A replica of TP4 x PP4 = 16 GPUs on 8-GPU VMs: two VMs each; replica 2 starts at GPU 32.
  EXPECT_EQ(ReplicaFirstGpu(2, 16, 8), 32);
}

}  // namespace
}  // namespace ndt
