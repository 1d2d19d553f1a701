// File: model/moe_load.cc
// How routed tokens spread over a mixture of experts (see ops.h): the experts a batch reaches, the
// most-loaded expert's rows under uniform routing, and the busiest expert-parallel rank's share
// under the measured routing skew. Used by the MoE operators of ops.cc.
#include <algorithm>
#include <cmath>

#include "model/ops.h"

namespace ndt {

double ExpectedDistinctExperts(double routed, int experts, int top_k, double local) {
  if (experts <= 0 || routed <= 0) return 0;
  const double p_hit = std::min(1.0, static_cast<double>(top_k) / experts);
  return local * (1.0 - std::pow(1.0 - p_hit, routed));
}

double ExpectedMaxExpertLoad(double routed, int experts, int top_k, double local) {
  if (experts <= 0 || routed <= 0 || top_k <= 0) return 0;
  const double n = routed * top_k;  // token-expert pairs (balls)
  const double p = 1.0 / experts;
  const double mean = n * p;
  if (local <= 1.0 + 1e-12) return mean;  // one expert: the max is its own load
  // Binomial(n, p) CDF over mean +- 12 sigma (+ 2): outside it F is 0 or 1 to double precision.
  const double sigma = std::sqrt(n * p * (1 - p));
  const double lo = std::max(0.0, std::floor(mean - 12 * sigma - 2));
  const double hi = std::min(std::floor(n), std::ceil(mean + 12 * sigma + 2));
  const double lg_n1 = std::lgamma(n + 1);
  double cdf = 0, expect = lo;  // x < lo: F(x) ~ 0, each term 1 - F^local = 1
  for (double x = lo; x <= hi; x += 1) {
    cdf += std::exp(lg_n1 - std::lgamma(x + 1) - std::lgamma(n - x + 1) + x * std::log(p) +
                    (n - x) * std::log1p(-p));
    expect += 1.0 - std::pow(std::min(1.0, cdf), local);
  }
  return std::clamp(expect, mean, std::max(mean, routed));
}

double BusiestRankLoad(const MoeSpec& moe, int ep) {
  if (ep <= 1 || moe.experts <= 0 || moe.top_k <= 0 || moe.imbalance_ratio <= 0 ||
      moe.imbalance_ep <= 0) {
    return 1.0;
  }
  const double local = static_cast<double>(moe.experts) / ep;
  const double cap = ep * std::min(local, static_cast<double>(moe.top_k)) / moe.top_k;
  const double load = 1.0 + moe.imbalance_ratio * ep / moe.imbalance_ep;
  return std::max(1.0, std::min(load, cap));
}

}  // namespace ndt
