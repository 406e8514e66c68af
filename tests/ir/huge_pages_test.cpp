// core/base/huge_pages.h: the environment a fusebox executable re-executes itself with.
#include "core/base/huge_pages.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fusebox {
namespace {

// The environment huge_pages_environment builds from `vars`, or nothing when it builds none.
std::vector<std::string> environment_for(std::vector<std::string> vars, size_t env_room = 64,
                                         size_t text_room = 256, bool* built = nullptr) {
  std::vector<char*> envp;
  for (std::string& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<char*> env(env_room, nullptr);
  std::vector<char> text(text_room, 'x');
  const bool ok = huge_pages_environment(envp.data(), env.data(), env.size(), text.data(), text.size());
  if (built) *built = ok;
  std::vector<std::string> out;
  if (!ok) return out;
  for (size_t i = 0; env[i]; ++i) out.emplace_back(env[i]);
  return out;
}

TEST(HugePages, TheTunableIsAddedAndEveryOtherVariableKept) {
  bool built = false;
  const auto env = environment_for({"HOME=/root", "PATH=/usr/bin"}, 64, 256, &built);
  ASSERT_TRUE(built);
  EXPECT_EQ(env, (std::vector<std::string>{"HOME=/root", "PATH=/usr/bin", "GLIBC_TUNABLES=glibc.malloc.hugetlb=1"}));
}

TEST(HugePages, TheUsersTunablesAreKeptAndTheOneAddedAfterThem) {
  const auto env = environment_for({"GLIBC_TUNABLES=glibc.malloc.check=3", "A=1"});
  EXPECT_EQ(env, (std::vector<std::string>{"A=1", "GLIBC_TUNABLES=glibc.malloc.check=3:glibc.malloc.hugetlb=1"}));
  EXPECT_EQ(environment_for({"GLIBC_TUNABLES="}), (std::vector<std::string>{"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"}));
}

TEST(HugePages, NoReExecutionOnceSetOrWhenTheUserSaysNo) {
  bool built = true;
  environment_for({"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"}, 64, 256, &built);
  EXPECT_FALSE(built) << "the re-executed process must not re-execute again";
  environment_for({"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}, 64, 256, &built);
  EXPECT_FALSE(built) << "the user's own choice stands";
  environment_for({"FUSEBOX_HUGE_PAGES=0", "A=1"}, 64, 256, &built);
  EXPECT_FALSE(built);
  environment_for({"FUSEBOX_HUGE_PAGES=1", "A=1"}, 64, 256, &built);
  EXPECT_TRUE(built);
}

TEST(HugePages, AnEnvironmentTooLargeForItsRoomIsLeftAlone) {
  bool built = true;
  environment_for({"A=1", "B=2", "C=3"}, 4, 256, &built);
  EXPECT_FALSE(built) << "3 variables, the tunable and the null need 5 pointers";
  environment_for({"A=1", "B=2", "C=3"}, 5, 256, &built);
  EXPECT_TRUE(built);
  environment_for({"GLIBC_TUNABLES=" + std::string(300, 'a') + "=1"}, 64, 256, &built);
  EXPECT_FALSE(built) << "the tunables' text does not fit";
}

}  // namespace
}  // namespace fusebox
