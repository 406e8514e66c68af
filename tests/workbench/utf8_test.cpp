// valid_utf8 and is_valid_utf8 (core/base/utf8.h): paths from the file system are bytes, JSON
// and messages want UTF-8.
#include "core/base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace fusebox {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";  // U+FFFD

TEST(Utf8, WellFormedTextIsKept) {
  for (const std::string text : {"", "model.onnx", "caf\xC3\xA9", "\xE2\x82\xAC",
                                 "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF"}) {
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    EXPECT_EQ(valid_utf8(text), text);
  }
}

TEST(Utf8, EachBadByteBecomesOneReplacementCharacter) {
  const auto r = kReplacement;
  EXPECT_EQ(valid_utf8("a\xFF"
                       "b"),
            "a" + r + "b");
  EXPECT_EQ(valid_utf8("\x80"), r);                          // a lone continuation byte
  EXPECT_EQ(valid_utf8("\xC3"), r);                          // cut short at the end
  EXPECT_EQ(valid_utf8("\xC3x"), r + "x");                   // cut short before ASCII
  EXPECT_EQ(valid_utf8("\xC0\xAF"), r + r);                  // overlong '/'
  EXPECT_EQ(valid_utf8("\xE0\x80\xAF"), r + r + r);          // overlong '/'
  EXPECT_EQ(valid_utf8("\xED\xA0\x80"), r + r + r);          // a surrogate
  EXPECT_EQ(valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // past U+10FFFF
  EXPECT_EQ(valid_utf8("/tmp/\xE9t\xE9.onnx"), "/tmp/" + r + "t" + r + ".onnx");  // Latin-1
  for (const std::string text :
       {"a\xFF", "\x80", "\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80"}) {
    EXPECT_FALSE(is_valid_utf8(text)) << text;
    EXPECT_TRUE(is_valid_utf8(valid_utf8(text))) << text;
  }
}

}  // namespace
}  // namespace fusebox
