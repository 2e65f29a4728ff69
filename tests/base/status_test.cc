#include "base/status.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace fabcheck {
namespace {

Result<int> Half(int v) {
  if (v % 2) return InvalidArgumentError("odd");
  return v / 2;
}

Result<int> Quarter(int v) {
  ASSIGN_OR_RETURN(int half, Half(v));
  ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = NotFoundError("cannot read x");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NotFound: cannot read x");
  EXPECT_EQ(s.WithContext("inventory").message(), "inventory: cannot read x");
}

TEST(StatusTest, ErrnoErrorNamesTheErrnoAndHint) {
  Status s = ErrnoError(ENOENT, "cannot read /sys/x", "is mlx5_ib loaded?");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("ENOENT"), std::string::npos);
  EXPECT_NE(s.message().find("is mlx5_ib loaded?"), std::string::npos);
  EXPECT_EQ(ErrnoError(EACCES, "x").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoError(ETIMEDOUT, "x").code(), StatusCode::kDeadlineExceeded);
}

TEST(ResultTest, PropagatesThroughMacros) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_FALSE(Quarter(6).ok());
  EXPECT_EQ(Quarter(6).status().message(), "odd");
  EXPECT_EQ(Quarter(6).value_or(-1), -1);
}

}  // namespace
}  // namespace fabcheck
