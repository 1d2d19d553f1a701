#include "serve/comm.h"

#include <gtest/gtest.h>

#include <vector>

#include "coll/collective.h"
#include "serve/testing.h"
#include "topo/builders.h"

namespace ndt {
namespace {

// Attention-DP's MoE dispatch and combine are TensorRT-LLM's all-gather and reduce-scatter with
// per-rank sizes, i.e. one NCCL group of a broadcast (a reduce) rooted at each rank, which NCCL
// aggregates into one Broadcast (Reduce) of the summed bytes (serve/comm.cc). So on one ND H200
// v5 (8 GPUs), the H200 DeepSeek-R1 row's decode step, the dispatch of 8 ranks x 128 tokens x
// 14,400 bytes (bf16 hidden states, 7168 x 2, and the top-8 ids and weights, 8 x 8:
// 14,745,600 bytes) costs coll/'s Broadcast of those bytes over GPUs 0..7, not its AllGather,
// and the combine of 8 x 128 x 14,336 bytes (14,680,064) its Reduce, not its ReduceScatter.
// The two models differ at these sizes (NCCL's tuner picks their protocols apart), so a
// dispatch priced as an all-gather fails here.
TEST(MoeComm, AttentionDpDispatchAndCombineAreGroupedBroadcastsAndReduces) {
  const ServeData& d = testing::BuiltinServeData();
  ClusterSpec spec;
  spec.sku = *d.catalog->FindSku("Standard_ND96isr_H200_v5");
  spec.gpu = &d.catalog->GpuOf(*spec.sku);
  spec.vms = 1;
  spec.fabric.tiers = ChooseTiers(spec);
  const Cluster c = *BuildCluster(spec, *d.fabric);
  const CommFns f = MakeCommFns(c, *d.nccl);
  const std::vector<int> group = {0, 1, 2, 3, 4, 5, 6, 7};
  CollOptions o;
  o.calibration = d.nccl;
  o.host_hidden = true;
  auto coll = [&](CollOp op, double bytes) {
    return TimeCollective(c, op, bytes, group, o)->time_s;
  };
  const double dispatch = 8 * 128 * 14400.0, combine = 8 * 128 * 14336.0;
  EXPECT_DOUBLE_EQ(f.moe_dispatch_s(8, dispatch), coll(CollOp::kBroadcast, dispatch));
  EXPECT_DOUBLE_EQ(f.moe_combine_s(8, combine), coll(CollOp::kReduce, combine));
  EXPECT_NE(f.moe_dispatch_s(8, dispatch), coll(CollOp::kAllGather, dispatch));
  EXPECT_NE(f.moe_combine_s(8, combine), coll(CollOp::kReduceScatter, combine));
  // One GPU has no group to talk to.
  EXPECT_EQ(f.moe_dispatch_s(1, dispatch), 0.0);
}

}  // namespace
}  // namespace ndt
