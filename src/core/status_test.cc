#include "core/status.h"

#include <gtest/gtest.h>

namespace ndt {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return Status::InvalidInput("odd");
  return x / 2;
}

Status Quarter(int x, int* out) {
  NDT_ASSIGN_OR_RETURN(int h, Half(x));
  NDT_ASSIGN_OR_RETURN(int q, Half(h));
  *out = q;
  return Status::Ok();
}

TEST(Status, PropagatesErrorsAndValues) {
  int q = 0;
  EXPECT_TRUE(Quarter(8, &q).ok());
  EXPECT_EQ(q, 2);
  Status s = Quarter(6, &q);  // 6/2 = 3 is odd
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.WithPrefix("x: ").message(), "x: odd");
}

TEST(Status, MapsCodesToExitCodes) {
  EXPECT_EQ(Status::Ok().exit_code(), 0);
  EXPECT_EQ(Status::InvalidInput("").exit_code(), 2);
  EXPECT_EQ(Status::NotFound("").exit_code(), 2);
  EXPECT_EQ(Status::Infeasible("").exit_code(), 2);
  EXPECT_EQ(Status::Internal("").exit_code(), 1);
}

}  // namespace
}  // namespace ndt

namespace ndt {
namespace {

TEST(Status, ReasonsOfAnInfeasibleRequestAreTheirOwnCodes) {
  // A search counts these as answers (infeasible()), not input errors; each keeps its code
  // through a reworded message, and Reason() is the message up to its advice.
  const Status fit = Status::DoesNotFit("does not fit: 90 GiB > 75 GiB; try --zero 1");
  EXPECT_TRUE(fit.infeasible());
  EXPECT_TRUE(Status::SloUnmet("no request rate meets p99 TTFT").infeasible());
  EXPECT_TRUE(Status::Infeasible("gbs does not divide").infeasible());
  EXPECT_FALSE(Status::InvalidInput("--tp must be >= 1").infeasible());
  EXPECT_FALSE(Status::Unsupported("--kv fp4").infeasible());
  EXPECT_EQ(fit.Reason(), "does not fit: 90 GiB > 75 GiB");
  const Status again = fit.WithMessage(fit.Reason() + "; add --vms");
  EXPECT_EQ(again.code(), StatusCode::kDoesNotFit);
  EXPECT_EQ(again.message(), "does not fit: 90 GiB > 75 GiB; add --vms");
  EXPECT_EQ(again.exit_code(), 2);
}

}  // namespace
}  // namespace ndt
