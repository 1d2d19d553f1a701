// File: parallel/testing.h
// Test-only helpers shared by the module's tests: closed-form TrainCosts (FakeCosts), a small
// GPT, a tiny MoE, an MoE that fits only with expert parallelism, and a strategy resolved for it.
#ifndef NDTWIN_PARALLEL_TESTING_H_
#define NDTWIN_PARALLEL_TESTING_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "model/transformer.h"
#include "parallel/costs.h"
#include "parallel/strategy.h"

namespace ndt::testing {

// Closed-form costs: 100 TFLOP/s, 1 TB/s HBM; ring collectives at `bus_Bps` bus bandwidth;
// p2p at `p2p_Bps`. Zero bandwidth cost when bus_Bps is infinite.
class FakeCosts : public TrainCosts {
 public:
  explicit FakeCosts(double bus_Bps = 100e9, double p2p_Bps = 25e9)
      : bus_Bps_(bus_Bps), p2p_Bps_(p2p_Bps) {}
  double OpsTime(const std::vector<Op>& ops) const override {
    double t = 0;
    for (const Op& op : ops) t += std::max(op.flop / 100e12, op.bytes / 1e12);
    return t;
  }
  double CommTime(CommKind k, double bytes, std::span<const int> g) const override {
    const double n = static_cast<double>(g.size());
    const double f = k == CommKind::kAllReduce ? 2 * (n - 1) / n : (n - 1) / n;
    return f * bytes / bus_Bps_;
  }
  double P2pTime(double bytes, int, int) const override { return bytes / p2p_Bps_; }
  double PeakFlops() const override { return 100e12; }

 private:
  double bus_Bps_, p2p_Bps_;
};

inline TransformerSpec SmallGpt(int64_t vocab = 51200) {
  InlineModelArgs a;
  a.layers = 8;
  a.hidden = 1024;
  a.heads = 16;
  a.seq = 1024;
  a.vocab = vocab;
  return BuildInlineModel(a).value();
}

// A Mixtral-shaped MoE built inline: llama layers, `experts` SwiGLU experts of `expert_ffn`, top 2,
// no dense MLP.
inline TransformerSpec InlineMoe(int layers, int64_t hidden, int heads, int kv_heads,
                                 int64_t expert_ffn, int64_t vocab, int64_t seq, int experts = 8) {
  InlineModelArgs a;
  a.arch = "llama";
  a.layers = layers;
  a.hidden = hidden;
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.ffn = 1024;  // any valid size: the dense MLP is replaced by the experts below
  a.vocab = vocab;
  a.seq = seq;
  TransformerSpec m = BuildInlineModel(a).value();
  m.arch = "mixtral";
  m.moe.experts = experts;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = expert_ffn;
  m.ffn_hidden = 0;
  return m;
}

// A small Mixtral-shaped MoE: 4 layers, hidden 1024, 16 heads (8 K/V), 8 experts of 3584, top 2.
inline TransformerSpec TinyMoe(int64_t vocab) {
  return InlineMoe(4, 1024, 16, 8, 3584, vocab, 1024);
}

// An MoE whose experts fit only when split by EP (plan and choose tests): one layer (pp 1 only),
// 3 heads of 128 (tp 1 only: tp is a power of two dividing the heads), hidden 384, 8 SwiGLU
// experts of 2^21, top 2, sequence 256: expert parameters 8 x 3 x 384 x 2^21 = 19.33e9. On one
// 8 x H100 VM (dp 8, ~74 GiB = ~80 GB usable: 79.11 GiB less data/memory_reserve.yaml's
// reserve), bf16 (2 B weights, 4 B fp32 main grads, 12 B fp32 master and Adam) with ZeRO <= 1,
// weights and gradients split only by EP while the optimizer shards over dp = 8 either way: ep
// 1: 19.33e9 x (6 + 1.5) = 145 GB; ep 2: 19.33e9 x (3 + 1.5) = 87 GB, neither fits before any
// activation; ep 4: 58 GB, ep 8: 43.5 GB.
inline TransformerSpec MoeFitsOnlySplit() {
  return InlineMoe(1, 384, 3, 3, int64_t{1} << 21, 32000, 256);
}

inline Strategy Resolve(const TransformerSpec& m, Strategy s, int gpus) {
  std::vector<std::string> w;
  Status st = ResolveStrategy(m, gpus, 8, &s, &w);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

}  // namespace ndt::testing

#endif  // NDTWIN_PARALLEL_TESTING_H_
