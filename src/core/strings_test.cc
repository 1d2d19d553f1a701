#include "core/strings.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

TEST(EditDistance, CountsEditsIgnoringCase) {
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);  // k->s, e->i, +g
  EXPECT_EQ(EditDistance("ABC", "abc"), 0);
}

TEST(DidYouMean, SuggestsTheClosestName) {
  std::vector<std::string> names = {"Standard_ND96amsr_A100_v4", "Standard_ND40rs_v2"};
  EXPECT_EQ(DidYouMean("Standard_ND96amsr_A100v4", names),
            "; did you mean 'Standard_ND96amsr_A100_v4'?");
  EXPECT_EQ(DidYouMean("completely-different", names), "");
}

}  // namespace
}  // namespace ndt
