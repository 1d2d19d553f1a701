// File: parallel/testing.h
// Test-only helpers shared by the module's tests: closed-form TrainCosts (FakeCosts), a small
// GPT, a tiny MoE, and a strategy resolved for it.
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

// A small Mixtral-shaped MoE: 4 layers, hidden 1024, 16 heads (8 K/V), 8 experts of 3584, top 2.
inline TransformerSpec TinyMoe(int64_t vocab) {
  InlineModelArgs a;
  a.arch = "llama";
  a.layers = 4;
  a.hidden = 1024;
  a.heads = 16;
  a.kv_heads = 8;
  a.ffn = 3584;
  a.vocab = vocab;
  a.seq = 1024;
  TransformerSpec m = BuildInlineModel(a).value();
  m.arch = "mixtral";
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 3584;
  m.ffn_hidden = 0;
  return m;
}

inline Strategy Resolve(const TransformerSpec& m, Strategy s, int gpus) {
  std::vector<std::string> w;
  Status st = ResolveStrategy(m, gpus, 8, &s, &w);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

}  // namespace ndt::testing

#endif  // NDTWIN_PARALLEL_TESTING_H_
