// File: plan/testing.h
// Helpers shared by the planner's test files (plan_test.cc, plan_space_test.cc,
// plan_search_test.cc, plan_stack_test.cc): the sizes they plan on, a Llama built inline, the
// catalog and calibration loaded once, a one-VM request, and a report as exact bytes.
#ifndef NDTWIN_PLAN_TESTING_H_
#define NDTWIN_PLAN_TESTING_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "coll/testing.h"
#include "parallel/cluster_costs.h"
#include "parallel/testing.h"
#include "parallel/train.h"
#include "plan/plan.h"
#include "topo/builders.h"
#include "topo/testing.h"

namespace ndt {
namespace plan_testing {

inline constexpr char kA100[] = "Standard_ND96amsr_A100_v4";  // 8 x A100 80 GB, priced
inline constexpr char kH100[] = "Standard_ND96isr_H100_v5";   // 8 x H100 80 GB, priced
inline constexpr char kH200[] = "Standard_ND96isr_H200_v5";   // 8 x H200, no price

inline TransformerSpec Llama(int64_t layers, int64_t hidden, int64_t heads) {
  InlineModelArgs a;
  a.layers = layers;
  a.hidden = hidden;
  a.heads = heads;
  a.arch = "llama";
  StatusOr<TransformerSpec> m = BuildInlineModel(a);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return *m;
}

struct Env {
  Catalog cat;
  ComputeCalibration cal;
  MemoryReserveTable reserve;  // data/memory_reserve.yaml
};

inline const Env& TheEnv() {
  static const Env* env = [] {
    const std::string dir = Catalog::DefaultDataDir();
    StatusOr<Catalog> cat = Catalog::Load(dir);
    StatusOr<ComputeCalibration> cal = LoadComputeCalibration(dir);
    StatusOr<MemoryReserveTable> reserve = LoadMemoryReserve(dir);
    EXPECT_TRUE(cat.ok() && cal.ok() && reserve.ok());
    return new Env{*cat, *cal, *reserve};
  }();
  return *env;
}

inline PlanTrainRequest Request(const TransformerSpec& m, int64_t gbs,
                                std::vector<std::string> skus) {
  PlanTrainRequest req;
  req.model = m;
  req.gbs = gbs;
  for (const std::string& s : skus) req.skus.push_back(*TheEnv().cat.FindSku(s));
  req.vms = 1;
  req.fidelity = Fidelity::kAnalytical;
  req.memory_reserve = &TheEnv().reserve;
  return req;
}

// Everything a plan reports, numbers as exact hex floats (%a): two reports print the same bytes
// only if every field is bit-identical.
inline std::string Bytes(const PlanTrainReport& r) {
  std::string out;
  auto add = [&out](const char* fmt, auto v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), fmt, v);
    out += buf;
  };
  add("evaluated %lld ", static_cast<long long>(r.evaluated));
  add("infeasible %lld ", static_cast<long long>(r.infeasible));
  add("bounded %lld\n", static_cast<long long>(r.bounded));
  for (const std::string& n : r.notes) out += "note " + n + "\n";
  for (const PlanResult& p : r.results) {
    const Strategy& s = p.strategy;
    out += p.sku;
    add(" #%zu", p.index);
    add(" vms %d", p.vms);
    add(" gpus %d", p.gpus);
    add(" tp %d", s.tp);
    add(" pp %d", s.pp);
    add(" dp %d", s.dp);
    add(" ep %d", s.ep);
    add(" vpp %d", s.vpp);
    add(" sp %d", static_cast<int>(s.sp));
    add(" zero %d", s.zero);
    add(" rc %d", static_cast<int>(s.recompute));
    add(" mbs %lld", static_cast<long long>(s.mbs));
    add(" step %a", p.step_time_s);
    add(" straggler %a", p.straggler_s);
    add(" tok/s %a", p.tokens_per_s);
    add(" mfu %a", p.mfu);
    add(" mem %a", p.memory_bytes);
    add(" ttt %a", p.time_to_train_s);
    add(" usd %a", p.cost_usd);
    add(" priced %d", static_cast<int>(p.priced));
    add(" fid %d\n", static_cast<int>(p.fidelity));
  }
  return out;
}

}  // namespace plan_testing
}  // namespace ndt

#endif  // NDTWIN_PLAN_TESTING_H_
