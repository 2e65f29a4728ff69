#include "base/strings.h"

#include <gtest/gtest.h>

namespace fabcheck {
namespace {

TEST(StringsTest, SplitTrimJoin) {
  EXPECT_EQ(Trim("  a b \n"), "a b");
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(Split("/a//b/", '/', true), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(Join({"a", "b"}, ", "), "a, b");
}

TEST(StringsTest, Numbers) {
  EXPECT_EQ(*ParseInt(" 42\n"), 42);
  EXPECT_EQ(*ParseInt("-1"), -1);
  EXPECT_EQ(*ParseInt("0x1a", 16), 26);
  EXPECT_FALSE(ParseInt("42abc").has_value());
  EXPECT_FALSE(ParseInt("").has_value());
  EXPECT_FALSE(ParseUint("-3").has_value());
  EXPECT_FALSE(ParseUint("99999999999999999999999").has_value());
  EXPECT_DOUBLE_EQ(*ParseDouble("2.5"), 2.5);
  EXPECT_FALSE(ParseDouble("N/A (no PMA)").has_value());
  // Not finite: never a value (a NaN rate passed every threshold).
  for (const char* text : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e999"}) {
    EXPECT_FALSE(ParseDouble(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace fabcheck
