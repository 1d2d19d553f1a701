#include "parallel/context_parallel.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

#include "parallel/strategy.h"
#include "parallel/train_sim.h"

namespace ndt {
namespace {

// Records what is asked of it; p2p at 10 GB/s, collectives as rings at 10 GB/s bus bandwidth,
// 1 TFLOP/s compute (so attention takes long enough to hide or not hide what we choose).
class RecordingCosts : public TrainCosts {
 public:
  double OpsTime(const std::vector<Op>& ops) const override {
    double t = 0;
    for (const Op& op : ops) t += op.flop / flops_;
    return t;
  }
  double CommTime(CommKind k, double bytes, std::span<const int> g) const override {
    coll_bytes_[k] += bytes;
    const double n = static_cast<double>(g.size());
    return (n - 1) / n * bytes / 10e9;
  }
  double P2pTime(double bytes, int src, int dst) const override {
    p2p_.push_back({bytes, src, dst});
    return bytes / 10e9;
  }
  double PeakFlops() const override { return flops_; }
  double flops_ = 1e12;
  struct P2p {
    double bytes;
    int src, dst;
  };
  mutable std::vector<P2p> p2p_;
  mutable std::map<CommKind, double> coll_bytes_;
};

TransformerSpec Gqa() {
  InlineModelArgs a;
  a.layers = 4;
  a.hidden = 4096;
  a.heads = 32;
  a.kv_heads = 8;
  a.seq = 32768;
  a.vocab = 32000;
  a.arch = "llama";
  return BuildInlineModel(a).value();
}

TEST(ContextParallel, KvBytesAreTheRanksTokensOfItsLocalKvHeads) {
  // seq 32768 on cp 4 -> 8192 tokens per rank; 8 K/V heads on tp 2 -> 4 per rank; head_dim
  // 4096 / 32 = 128. K and V in bf16: 2 * 8192 * 4 * 128 * 2 B = 16 MiB.
  const TransformerSpec m = Gqa();
  EXPECT_DOUBLE_EQ(CpKvBytes(m, 1, 2, 4), 2.0 * 8192 * 4 * 128 * 2);
  // tp 16 > 8 K/V heads: each rank still holds one (replicated), not half.
  EXPECT_DOUBLE_EQ(CpKvBytes(m, 1, 16, 4), 2.0 * 8192 * 1 * 128 * 2);
  // Two sequences per micro-batch: twice the tokens.
  EXPECT_DOUBLE_EQ(CpKvBytes(m, 2, 2, 4), 2 * CpKvBytes(m, 1, 2, 4));
}

TEST(ContextParallel, RingSendsCpMinusOneBlocksForwardAndTwiceThatPlusOneBackward) {
  // cp 4, kv = 16 MiB. Forward: 3 hops of kv. Backward: 3 hops of kv + dkv (2 kv) and the last
  // dkv hop home (kv): 7 kv. Each hop at 10 GB/s: kv / 10e9 s.
  const double kv = 16.0 * 1024 * 1024;
  const std::vector<int> group = {0, 8, 16, 24};
  RecordingCosts c;
  // Attention slow enough (1 s forward, 2 s backward) to hide every hop but the last.
  CpLayerComm r = CpLayerCost(CpComm::kRing, kv, 1.0, 2.0, group, c);
  EXPECT_DOUBLE_EQ(r.fwd_sent_bytes, 3 * kv);
  EXPECT_DOUBLE_EQ(r.bwd_sent_bytes, 7 * kv);
  EXPECT_DOUBLE_EQ(r.fwd_comm_s, 3 * kv / 10e9);
  EXPECT_DOUBLE_EQ(r.bwd_comm_s, 3 * 2 * kv / 10e9 + kv / 10e9);
  EXPECT_DOUBLE_EQ(r.fwd_exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(r.bwd_exposed_s, kv / 10e9);  // the last dK/dV hop
  // Hops go to the next rank of the ring, the wrap-around included.
  bool wrap = false;
  for (const auto& p : c.p2p_) wrap = wrap || (p.src == 24 && p.dst == 0);
  EXPECT_TRUE(wrap);
  // No attention to hide under: every hop is exposed.
  r = CpLayerCost(CpComm::kRing, kv, 0.0, 0.0, group, c);
  EXPECT_DOUBLE_EQ(r.fwd_exposed_s, r.fwd_comm_s);
  EXPECT_DOUBLE_EQ(r.bwd_exposed_s, r.bwd_comm_s);
  // Each hop hides under one step (1/cp of the attention): 4 ms forward hides 1 ms per hop.
  const double hop = kv / 10e9;  // 1.68 ms
  r = CpLayerCost(CpComm::kRing, kv, 4e-3, 0.0, group, c);
  EXPECT_NEAR(r.fwd_exposed_s, 3 * (hop - 1e-3), 1e-12);
}

TEST(ContextParallel, AllGatherMovesEveryRanksBlockAndExposesIt) {
  // Llama 3: forward all-gathers cp * kv (nccl-tests' buffer), each rank sending (cp - 1) kv;
  // backward gathers again and reduce-scatters dK/dV: 2 (cp - 1) kv sent. Nothing hidden.
  const double kv = 16.0 * 1024 * 1024;
  const std::vector<int> group = {0, 8, 16, 24};
  RecordingCosts c;
  const CpLayerComm r = CpLayerCost(CpComm::kAllGather, kv, 1.0, 2.0, group, c);
  EXPECT_DOUBLE_EQ(r.fwd_sent_bytes, 3 * kv);
  EXPECT_DOUBLE_EQ(r.bwd_sent_bytes, 6 * kv);
  // The gather of cp * kv is priced once and paid in the forward and again in the backward.
  EXPECT_DOUBLE_EQ(c.coll_bytes_[CommKind::kAllGather], 4 * kv);
  EXPECT_DOUBLE_EQ(c.coll_bytes_[CommKind::kReduceScatter], 4 * kv);
  EXPECT_DOUBLE_EQ(r.fwd_exposed_s, 0.75 * 4 * kv / 10e9);
  EXPECT_DOUBLE_EQ(r.bwd_exposed_s, 2 * 0.75 * 4 * kv / 10e9);
}

TEST(ContextParallel, StepChargesTheExposedPartToCpAndAllGatherCostsMoreThanTheRing) {
  // A whole step with cp 4 on 4 GPUs: the ring's hops mostly hide under attention at 32k tokens,
  // the all-gather's do not; both show up as CP in the breakdown, never as compute.
  const TransformerSpec m = Gqa();
  Strategy s;
  s.gbs = 1;
  s.cp = 4;
  std::vector<std::string> w;
  ASSERT_TRUE(ResolveStrategy(m, 4, 8, &s, &w).ok());
  RecordingCosts c;
  const TrainSimResult ring = SimulateTrainingStep(m, s, c, {}).value();
  s.cp_comm = CpComm::kAllGather;
  const TrainSimResult ag = SimulateTrainingStep(m, s, c, {}).value();
  EXPECT_GT(ag.breakdown.cp_comm_s, 0.0);
  EXPECT_GT(ag.breakdown.cp_comm_s, ring.breakdown.cp_comm_s);
  EXPECT_DOUBLE_EQ(ag.breakdown.compute_s, ring.breakdown.compute_s);
  EXPECT_GT(ag.step_time_s, ring.step_time_s);
  // The trace shows the exposed exchange as "cp" spans summing to the breakdown's CP.
  TrainSimOptions o;
  o.want_trace = true;
  const TrainSimResult traced = SimulateTrainingStep(m, s, c, o).value();
  double cp_spans = 0;
  for (const StepSpan& sp : traced.spans) {
    if (sp.category == "cp") cp_spans += sp.dur_s;
  }
  EXPECT_NEAR(cp_spans, ag.breakdown.cp_comm_s, 1e-9 * ag.step_time_s);
  EXPECT_DOUBLE_EQ(traced.step_time_s, ag.step_time_s);
}

// RecordingCosts that also keeps every forward attention core it is asked to price.
class AttentionRecordingCosts : public RecordingCosts {
 public:
  double OpsTime(const std::vector<Op>& ops) const override {
    for (const Op& op : ops) {
      if (op.kind == OpKind::kAttention && op.pass == Pass::kForward) attn_.push_back(op);
      if (op.name.starts_with("cp_")) merge_.push_back(op);
    }
    return RecordingCosts::OpsTime(ops);
  }
  mutable std::vector<Op> attn_;
  mutable std::vector<Op> merge_;
};

TEST(ContextParallel, RingRunsOneAttentionKernelPerStepOverOneChunkAndMergesThem) {
  // seq 32768, cp 4: each rank holds 8192 queries in two chunks of c = 32768 / 8 = 4096 tokens
  // and does 1/4 of the causal pairs, 32768 * 32769 / 2 / 4 = 134,221,824 (32 heads of 128 on
  // tp 1: FLOPs = 2 * 32 * pairs * 256). The ring runs them as 4 kernels (one per K/V block, TE's
  // AttnFuncWithCPAndKVP2P) of 1/4 each, 33,555,456 pairs over the same 8192 queries: 4096.125
  // keys per query, one chunk (c), where the all-gather's single kernel walks 16384.5.
  const TransformerSpec m = Gqa();
  Strategy s;
  s.gbs = 1;
  s.cp = 4;
  std::vector<std::string> w;
  ASSERT_TRUE(ResolveStrategy(m, 4, 8, &s, &w).ok());
  const double pairs = 32768.0 * 32769.0 / 2 / 4;
  auto keys = [](const Op& op) { return op.flop / (2.0 * 32 * 256) / op.q_len; };
  AttentionRecordingCosts ring;
  ASSERT_TRUE(SimulateTrainingStep(m, s, ring, {}).ok());
  ASSERT_EQ(ring.attn_.size() % 4, 0u);
  ASSERT_FALSE(ring.attn_.empty());
  for (const Op& op : ring.attn_) {
    EXPECT_DOUBLE_EQ(op.q_len, 8192.0);
    EXPECT_NEAR(op.flop, 2.0 * 32 * 256 * pairs / 4, 1e-6 * op.flop);
    EXPECT_NEAR(keys(op), 4096.125, 1e-9);
  }
  // The merges after the steps, the output (and dQ) of 8192 tokens x 32 heads x 128 in bf16,
  // Q = 67,108,864 B: forward 4 corrections x 3 Q = 805,306,368 B; backward one copy (2 Q) and
  // 3 adds (9 Q) of dQ, 738,197,504 B, plus 3 adds of the received dK/dV block, K and V of 8192
  // tokens x 8 K/V heads x 128 in bf16 = 33,554,432 B, x 3 each: 301,989,888 B; 1,040,187,392 B.
  ASSERT_FALSE(ring.merge_.empty());
  int fwd = 0, bwd = 0;
  for (const Op& op : ring.merge_) {
    if (op.name == "cp_out_correction") {
      ++fwd;
      EXPECT_DOUBLE_EQ(op.bytes, 805306368.0);
    } else {
      ++bwd;
      EXPECT_EQ(op.name, "cp_grad_accumulate");
      EXPECT_DOUBLE_EQ(op.bytes, 1040187392.0);
    }
  }
  EXPECT_GT(fwd, 0);
  EXPECT_GT(bwd, 0);
  s.cp_comm = CpComm::kAllGather;
  AttentionRecordingCosts ag;
  ASSERT_TRUE(SimulateTrainingStep(m, s, ag, {}).ok());
  ASSERT_EQ(ag.attn_.size() * 4, ring.attn_.size());
  for (const Op& op : ag.attn_) EXPECT_NEAR(keys(op), 16384.5, 1e-9);
  EXPECT_TRUE(ag.merge_.empty());  // one kernel over the gathered K/V: nothing to merge
}

TEST(ContextParallel, ParsesBothNames) {
  CpComm c = CpComm::kAllGather;
  EXPECT_TRUE(ParseCpComm("ring", &c));
  EXPECT_EQ(c, CpComm::kRing);
  EXPECT_TRUE(ParseCpComm("all_gather", &c));
  EXPECT_EQ(c, CpComm::kAllGather);
  EXPECT_FALSE(ParseCpComm("ulysses", &c));
  EXPECT_STREQ(CpCommName(CpComm::kRing), "ring");
}

}  // namespace
}  // namespace ndt
