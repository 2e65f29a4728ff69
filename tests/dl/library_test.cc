#include "dl/library.h"

#include <gtest/gtest.h>

namespace fabcheck::dl {
namespace {

TEST(LibraryTest, MissingLibraryIsUnavailableWithHint) {
  auto lib = Library::Open({"libfabcheck-does-not-exist.so.7"}, "install the frobnicator package");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(lib.status().message().find("install the frobnicator package"), std::string::npos);
}

TEST(LibraryTest, LoadsARealLibraryAndSymbol) {
  auto lib = Library::Open({"libm.so.6"}, "libc6");
  ASSERT_TRUE(lib.ok()) << lib.status().ToString();
  double (*cos_fn)(double) = nullptr;
  ASSERT_TRUE((*lib)->Load("cos", &cos_fn).ok());
  EXPECT_DOUBLE_EQ(cos_fn(0.0), 1.0);
  int (*missing)() = nullptr;
  EXPECT_FALSE((*lib)->Load("fabcheck_no_such_symbol", &missing).ok());
  (*lib)->LoadOptional("fabcheck_no_such_symbol", &missing);
  EXPECT_EQ(missing, nullptr);
  EXPECT_NE((*lib)->path().find("libm"), std::string::npos);
}

}  // namespace
}  // namespace fabcheck::dl
