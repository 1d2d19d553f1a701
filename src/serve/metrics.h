// File: serve/metrics.h
// Latency statistics of a serving run: percentiles (linear interpolation between order
// statistics, numpy's default) of TTFT, TPOT (MLPerf: (latency - TTFT)/(output tokens - 1),
// over requests with more than one output token) and end-to-end latency. Seconds.
#ifndef NDTWIN_SERVE_METRICS_H_
#define NDTWIN_SERVE_METRICS_H_

#include <vector>

#include "serve/engine.h"

namespace ndt {

struct LatencyStats {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Sorts ascending, the same sequence as std::sort; faster on large samples of non-negative
// values (an LSD radix sort of their bits; other samples take std::sort).
void SortLatencies(std::vector<double>* values);
// q in [0, 1]. Sorts a copy. 0 for an empty sample.
double Percentile(std::vector<double> values, double q);
LatencyStats Summarize(std::vector<double> values);

struct RequestStats {
  LatencyStats ttft_s, tpot_s, e2e_s;
  int64_t requests = 0;
};
RequestStats SummarizeRequests(const std::vector<const RequestRecord*>& records);

}  // namespace ndt

#endif  // NDTWIN_SERVE_METRICS_H_
