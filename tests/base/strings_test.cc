#include "base/strings.h"
#include "base/terminal_text.h"

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

// Foreign text on a terminal or in a log: an ESC sequence must not reach the
// terminal, a newline must not forge a log line, bidi overrides must not hide
// text; printable text, tabs and UTF-8 stay as they are.
TEST(StringsTest, NeutralizeControls) {
  EXPECT_EQ(NeutralizeControls("dgx-03 mlx5_2 \t caf\xc3\xa9 \xe2\x9c\x93"), "dgx-03 mlx5_2 \t caf\xc3\xa9 \xe2\x9c\x93");
  EXPECT_EQ(NeutralizeControls("red\x1b[31m\x1b]0;t\x07"), "red\\x1b[31m\\x1b]0;t\\x07");
  EXPECT_EQ(NeutralizeControls("a\nfabcheck: error [perf] forged\r"), "a\\x0afabcheck: error [perf] forged\\x0d");
  EXPECT_EQ(NeutralizeControls("a\nb", Newlines::kKeep), "a\nb");
  EXPECT_EQ(NeutralizeControls("del\x7f nul", Newlines::kKeep), "del\\x7f nul");
  EXPECT_EQ(NeutralizeControls(std::string_view("n\0ul", 4)), "n\\x00ul");
  // C1 as UTF-8 (U+009B is CSI), bidi override U+202E, isolate U+2066.
  EXPECT_EQ(NeutralizeControls("\xc2\x9b" "2J \xe2\x80\xae" "evil \xe2\x81\xa6x"), "\\u009b2J \\u202eevil \\u2066x");
  // Not UTF-8: a lone 0x9b (8-bit CSI), a truncated sequence, an overlong and a surrogate.
  EXPECT_EQ(NeutralizeControls("\x9b" "2J \xe2\x80 \xc0\xaf \xed\xa0\x80"),
            "\\x9b" "2J \\xe2\\x80 \\xc0\\xaf \\xed\\xa0\\x80");
  EXPECT_EQ(NeutralizeControls("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");
}

}  // namespace
}  // namespace fabcheck
