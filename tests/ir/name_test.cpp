// core/base/name.h: one copy per distinct text, compared and ordered by text, read as a string.
#include "core/base/name.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

using fusebox::Name;
using fusebox::NameMemo;

TEST(Name, EqualTextsAreOneCopy) {
  const std::string text = "void at::native::vectorized_elementwise_kernel<4, float>(int, float*)";
  const Name a(text), b{std::string_view(text)}, c(text.c_str());
  EXPECT_EQ(&a.str(), &b.str()) << "a second intern of a text must find the first copy";
  EXPECT_EQ(&a.str(), &c.str());
  const size_t distinct = Name::table_size();
  for (int i = 0; i < 1000; ++i) Name again(text);
  EXPECT_EQ(Name::table_size(), distinct) << "repeating a name must not grow the table";
  const Name other("cudaLaunchKernel");
  EXPECT_NE(&other.str(), &a.str());
  EXPECT_EQ(Name().str(), "");
  EXPECT_TRUE(Name("").empty());
}

TEST(Name, ComparesAndOrdersByText) {
  const Name gemm("gemm"), relu("relu"), gemm2(std::string("ge") + "mm");
  EXPECT_TRUE(gemm == gemm2);
  EXPECT_TRUE(gemm == "gemm");
  EXPECT_TRUE(gemm == std::string("gemm"));
  EXPECT_TRUE("gemm" == gemm);
  EXPECT_TRUE(std::string("gemm") == gemm);
  EXPECT_FALSE(gemm == relu);
  EXPECT_TRUE(gemm != "relu");
  // Order is the text's, not the table's (which was filled in another order): output that sorts
  // by name does not depend on what was read first.
  std::vector<Name> v = {Name("zeta"), Name("alpha"), Name("mid")};
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v[0], "alpha");
  EXPECT_EQ(v[2], "zeta");
  std::map<Name, int> m;
  m[Name("b")] = 2;
  m[Name("a")] = 1;
  EXPECT_EQ(m.begin()->first, "a");
  std::unordered_set<Name> set = {gemm, gemm2, relu};
  EXPECT_EQ(set.size(), 2u);
}

TEST(Name, ReadsAsAConstString) {
  const Name n("cudaLaunchKernel_v7000");
  const std::string& s = n;
  EXPECT_EQ(s, "cudaLaunchKernel_v7000");
  EXPECT_EQ(n.size(), 22u);
  EXPECT_EQ(n.rfind("_v"), 16u);
  EXPECT_EQ(n.substr(0, 4), "cuda");
  EXPECT_TRUE(n.starts_with("cuda"));
  EXPECT_EQ(n + "!", "cudaLaunchKernel_v7000!");
  EXPECT_EQ("<" + n, "<cudaLaunchKernel_v7000");
  std::ostringstream os;
  os << n;
  EXPECT_EQ(os.str(), "cudaLaunchKernel_v7000");
  Name assigned;
  assigned = std::string_view(s).substr(0, 16);
  EXPECT_EQ(assigned, "cudaLaunchKernel");
}

TEST(Name, InterningFromManyThreadsGivesOneCopyEach) {
  std::vector<std::thread> threads;
  std::vector<std::vector<const std::string*>> seen(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 500; ++i) seen[t].push_back(&Name("kernel_" + std::to_string(i)).str());
    });
  for (std::thread& th : threads) th.join();
  for (int t = 1; t < 4; ++t) EXPECT_EQ(seen[t], seen[0]) << "thread " << t;
}

namespace {
int memo_calls = 0;
size_t counted_length(const std::string& s) {
  memo_calls += 1;
  return s.size();
}
}  // namespace

TEST(NameMemo, WorksOutEachDistinctNameOnce) {
  memo_calls = 0;
  NameMemo<size_t> length(&counted_length);
  const Name a("ampere_sgemm_128x64_tn"), b("gelu_kernel"),
      a_again(std::string("ampere_sgemm_") + "128x64_tn");
  EXPECT_EQ(length(a), 22u);
  EXPECT_EQ(length(a), 22u);
  EXPECT_EQ(length(b), 11u);
  EXPECT_EQ(length(a_again), 22u);  // one text, one entry
  EXPECT_EQ(length(b), 11u);
  EXPECT_EQ(length(Name()), 0u);
  EXPECT_EQ(memo_calls, 3);
}
