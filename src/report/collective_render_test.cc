#include "report/collective_render.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace ndt {
namespace {

// One 1 MiB all_reduce on 8 GPUs of 1 VM: 100 us, algbw 1048576 B / 100 us = 10.48576 GB/s,
// busbw 2 (n - 1) / n = 1.75 times that = 18.35008 GB/s; and one 8-byte row.
struct Sweep {
  std::string sku = "ND96isr_H100_v5";
  std::string fidelity = "analytical";
  std::vector<std::pair<double, CollResult>> results;
  std::vector<IntervalClass> intervals;

  Sweep() {
    CollResult big;
    big.time_s = 100e-6;
    big.algbw_Bps = 10.48576e9;
    big.busbw_Bps = 18.35008e9;
    big.algo = Algo::kRing;
    big.proto = Proto::kSimple;
    CollResult small;
    small.time_s = 25.5e-6;
    small.algbw_Bps = 8 / 25.5e-6;
    small.busbw_Bps = 1.75 * 8 / 25.5e-6;
    small.algo = Algo::kTree;
    small.proto = Proto::kLL;
    results = {{1048576, big}, {8, small}};
    IntervalClass iv;
    iv.name = "Hopper collectives-medium";
    iv.cases = 5;
    iv.p10 = 0.8;
    iv.p90 = 1.1;
    intervals = {iv, iv};
  }
  CollectiveView View() const {
    return CollectiveView{sku,     1,        8, CollOp::kAllReduce, fidelity, kPinnedNcclVersion,
                          results, intervals};
  }
};

TEST(CollectiveRender, TextIsNcclTestsColumns) {
  Sweep s;
  const std::string text = CollectiveText(s.View());
  // Header, column heads, then one row per size: %12.0f bytes, %12.0f floats (bytes / 4),
  // %6s type, %10.2f us, %9.2f algbw and busbw in GB/s, %-13s algorithm, protocol.
  EXPECT_EQ(text.find("# ndtwin collective: all_reduce, 1 VM(s) of ND96isr_H100_v5, 8 GPUs, "
                      "analytical model, NCCL "),
            0u)
      << text;
  EXPECT_NE(text.find("\n     1048576       262144  float     100.00     10.49     18.35  Ring"
                      "          Simple\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n           8            2  float      25.50      0.00      0.00  Tree"
                      "          LL\n"),
            std::string::npos)
      << text;
  // The interval stays out of the text (nccl-tests' columns only).
  EXPECT_EQ(text.find("p10"), std::string::npos);
}

TEST(CollectiveRender, JsonRowsCarryTheBusBandwidthInterval) {
  Sweep s;
  const Json j = CollectiveJson(s.View());
  EXPECT_EQ(j["schema"], "ndtwin.collective/1");
  EXPECT_EQ(j["op"], "all_reduce");
  EXPECT_EQ(j["gpus"], 8);
  ASSERT_EQ(j["rows"].size(), 2u);
  const Json& row = j["rows"][0];
  EXPECT_EQ(row["bytes"], 1048576);
  EXPECT_NEAR(row["time_us"].get<double>(), 100.0, 1e-9);
  EXPECT_NEAR(row["busbw_GBps"].get<double>(), 18.35008, 1e-9);
  // A rate's interval is [v p10, v p90] = [18.35008 x 0.8, 18.35008 x 1.1].
  EXPECT_NEAR(row["busbw_GBps_interval"]["p10"].get<double>(), 14.680064, 1e-9);
  EXPECT_NEAR(row["busbw_GBps_interval"]["p90"].get<double>(), 20.185088, 1e-9);
  EXPECT_EQ(row["busbw_GBps_interval"]["class"], "Hopper collectives-medium");
  EXPECT_EQ(row["algorithm"], "Ring");
  EXPECT_EQ(j["rows"][1]["protocol"], "LL");
}

}  // namespace
}  // namespace ndt
