#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "profiler/nvtx.h"
#include "profiler_test_util.h"

using namespace fusebox;
using namespace fusebox::profiler;

#ifdef FUSEBOX_NVTX_INJECTION
// NVTX reads the variable at its first call: set it before any test runs.
static const int injection_env = setenv("NVTX_INJECTION64_PATH", FUSEBOX_NVTX_INJECTION, 1);
#endif

TEST(NvtxInjection, ExactNamesAndNestingForASmallModel) {
#ifndef FUSEBOX_NVTX_INJECTION
  GTEST_SKIP() << "built without NVTX3 headers: ranges are compiled out";
#else
  ASSERT_TRUE(nvtx_available());
  ASSERT_EQ(injection_env, 0);
  NvtxRanges::name_this_thread("fusebox main");
  NvtxRanges nvtx;  // creates the "fusebox" domain (first NVTX call loads the tool)
  void* lib = dlopen(FUSEBOX_NVTX_INJECTION, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(lib, nullptr) << "NVTX did not load the injection library";
  auto count = reinterpret_cast<size_t (*)()>(dlsym(lib, "fusebox_nvtx_event_count"));
  auto event = reinterpret_cast<const char* (*)(size_t)>(dlsym(lib, "fusebox_nvtx_event"));
  ASSERT_TRUE(count && event);

  // Record the same session with the recorder too: NVTX must see exactly the recorded spans.
  ptest::register_cpu();
  Recorder rec;
  ObserverTee tee({&rec, &nvtx});
  exec::SessionOptions opt;
  opt.passes = "none";
  opt.observer = &tee;
  exec::Session s(models::build_model("mlp:dims=16-8-4", 1), opt);
  rec.attach(s);
  nvtx.attach(s);
  auto in = ptest::ones_inputs(s.graph());
  s.run(in);
  s.run(in);
  Recording r = rec.finish();

  std::vector<std::string> got;
  for (size_t i = 0; i < count(); ++i) got.push_back(event(i));
  std::vector<std::string> want = {"thread fusebox main", "domain fusebox"};
  // Expected calls, rebuilt from the spans' nesting: push at start, pops when ranges close.
  std::vector<const Span*> stack;
  for (const Span& sp : r.spans) {
    while (!stack.empty() && stack.back()->end_ns <= sp.start_ns) {
      want.push_back("pop fusebox");
      stack.pop_back();
    }
    want.push_back("push fusebox:" + sp.name + " color");
    stack.push_back(&sp);
  }
  while (!stack.empty()) want.push_back("pop fusebox"), stack.pop_back();
  EXPECT_EQ(got, want);

  // And the exact names, spelled out for the first run of this model.
  std::vector<std::string> run0;
  bool in_run0 = false;
  for (const auto& e : got) {
    if (e == "push fusebox:run 0 color") in_run0 = true;
    if (in_run0 && e.rfind("push", 0) == 0) run0.push_back(e.substr(13, e.size() - 19));
    if (e == "push fusebox:run 1 color") break;
  }
  run0.pop_back();  // "run 1"
  std::vector<std::string> names = {"run 0"};
  for (size_t i = 0; i < s.graph().nodes.size(); ++i) {
    const ir::Node& n = s.graph().nodes[i];
    bool ran = false;
    for (const Span& sp : r.spans) ran |= sp.kind == SpanKind::Op && sp.node == static_cast<int32_t>(i);
    if (ran) names.push_back(n.op + "." + std::to_string(i) + "(" + n.name + ")");
  }
  EXPECT_EQ(run0, names);
  EXPECT_EQ(names[1], "Transpose.0(fc0.Transpose)");
  // Stages got ranges too.
  for (const auto& st : s.stages())
    EXPECT_NE(std::find(got.begin(), got.end(), "push fusebox:" + st.name + " color"), got.end()) << st.name;
#endif
}
