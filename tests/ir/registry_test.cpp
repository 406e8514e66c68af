// core/base/registry.h: the one registry shape (add / find / get / names, order kept).
#include "core/base/registry.h"

#include <gtest/gtest.h>

#include <string>

namespace fusebox {
namespace {

TEST(Registry, KeepsTheOrderAddedAndReplacesInPlace) {
  Registry<int> r("widget");
  r.add("b", 1);
  r.add("a", 2);
  r.add("c", 3);
  r.add("a", 20);  // same name: replaced where it stands, not moved to the end
  EXPECT_EQ(r.names(), (std::vector<std::string>{"b", "a", "c"}));
  ASSERT_NE(r.find("a"), nullptr);
  EXPECT_EQ(*r.find("a"), 20);
  EXPECT_EQ(r.size(), 3u);
  int sum = 0;
  for (int value : r.entries()) sum += value;
  EXPECT_EQ(r.items()[1].first, "a");
  EXPECT_EQ(sum, 24);
}

TEST(Registry, AnUnknownNameIsNullOrAnErrorNamingTheKind) {
  Registry<int> r("planner");
  r.add("first_fit", 1);
  r.add("greedy_by_size", 2);
  EXPECT_EQ(r.find("nope"), nullptr);
  EXPECT_FALSE(r.contains("nope"));
  try {
    r.get("first_fti");
    FAIL() << "get of an unknown name must throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown planner 'first_fti' (did you mean 'first_fit'?)");
  }
  try {
    r.get("zzzzzzzzzz");
    FAIL() << "get of an unknown name must throw";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown planner 'zzzzzzzzzz' (valid: first_fit, greedy_by_size)");
  }
}

}  // namespace
}  // namespace fusebox
