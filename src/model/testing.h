// Helpers shared by model/'s tests (ops_test.cc, ops_fp8_test.cc, transformer_test.cc): a preset
// model from data/models and an op of a list by name.
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

}  // namespace ndt::model_testing

#endif  // NDTWIN_MODEL_TESTING_H_
