#include "base/json_text.h"

#include <gtest/gtest.h>

namespace fabcheck {
namespace {

TEST(JsonTextTest, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  // A hostname and a log line as they come from sysfs and NCCL: not UTF-8.
  nlohmann::json j = {{"host", std::string("gpu-\xff\xfe")}, {"line", std::string("a\xc3(b\x80")}};
  std::string text;
  ASSERT_NO_THROW(text = ToJsonText(j, 2));
  auto back = nlohmann::json::parse(text);
  EXPECT_EQ(back["host"], "gpu-\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(back["line"], "a\xef\xbf\xbd(b\xef\xbf\xbd");
  // Valid UTF-8 is kept as it is, not escaped.
  EXPECT_EQ(ToJsonText(nlohmann::json("Grüße")), "\"Grüße\"");
  EXPECT_EQ(ToJsonText(nlohmann::json{{"a", 1}}), "{\"a\":1}");
}

}  // namespace
}  // namespace fabcheck
