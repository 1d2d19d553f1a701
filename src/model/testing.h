// Helpers shared by model/'s tests (ops_test.cc, moe_ops_test.cc, ops_fp8_test.cc,
// transformer_test.cc): a preset model from data/models, an op of a list by name, and the FLOPs of
// a list's GEMMs.
#ifndef NDTWIN_MODEL_TESTING_H_
#define NDTWIN_MODEL_TESTING_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/ops.h"
#include "model/transformer.h"

namespace ndt::model_testing {

inline TransformerSpec Preset(const std::string& name) {
  StatusOr<TransformerSpec> s = LoadModel(name, ModelsDir(""));
  EXPECT_TRUE(s.ok()) << s.status().message();
  return *s;
}

inline const Op& Find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& o : ops) {
    if (o.name == name) return o;
  }
  ADD_FAILURE() << "no op " << name;
  return ops.front();
}

inline double GemmFlop(const std::vector<Op>& ops) {
  double f = 0;
  for (const Op& o : ops) {
    if (o.kind == OpKind::kGemm) f += o.flop;
  }
  return f;
}

}  // namespace ndt::model_testing

#endif  // NDTWIN_MODEL_TESTING_H_
