// A compiled run allocates nothing: every buffer was planned, every kernel prepared. We count
// calls to operator new and (outside sanitizer builds, which own malloc) to malloc and friends
// while a warmed-up session runs.
#include <gtest/gtest.h>

// Our replacement operator new calls malloc and operator delete calls free, which GCC cannot
// see as a pair when it inlines library code into this file.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/exec/session.h"
#include "core/models/builtin_models.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/support/graph_eval.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
[[maybe_unused]] void note() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

// Sanitizer builds own the allocator (and check new/delete pairs): there we count nothing and
// the tests skip; the Release run of the same tests does the counting.
#if defined(__SANITIZE_ADDRESS__)
#define FUSEBOX_COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSEBOX_COUNTING 0
#endif
#endif
#ifndef FUSEBOX_COUNTING
#define FUSEBOX_COUNTING 1
#endif

#if FUSEBOX_COUNTING
void* operator new(std::size_t n) {
  note();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  note();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  note();
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  note();
  return std::malloc(n ? n : 1);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }


extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  note();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void* aligned_alloc(size_t align, size_t n) {
  note();
  return __libc_memalign(align, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  note();
  *out = __libc_memalign(align, n);
  return *out ? 0 : 12;
}
}
#endif

namespace fusebox {
namespace {

long allocations_during_runs(const char* spec, const char* executor, int threads) {
  cpu::register_backend();
  ir::Graph g = models::build_model(spec, 1);
  exec::SessionOptions opt;
  opt.executor = executor;
  opt.threads = threads;
  exec::Session s(g, opt);
  std::vector<ir::Tensor> inputs = testing::random_inputs(g, 2);
  std::vector<ir::Tensor> outputs;
  std::vector<const void*> in;
  std::vector<void*> out;
  for (auto& t : inputs) in.push_back(t.bytes());
  for (const auto& o : s.graph().outputs) {
    outputs.emplace_back(s.graph().tensor(o).dtype, s.graph().tensor(o).shape);
    out.push_back(outputs.back().bytes());
  }
  for (int i = 0; i < 3; ++i) s.run_raw(in.data(), out.data());  // warm up (thread pools start)
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 5; ++i) s.run_raw(in.data(), out.data());
  g_counting = false;
  return g_allocations.load();
}

TEST(NoAllocation, CompiledRunAllocatesNothing) {
  if (!FUSEBOX_COUNTING) GTEST_SKIP() << "sanitizer build: the allocator is ASan's; the Release run counts";
  // Small models (no op worth a second thread: OpenBLAS held to one thread) and larger ones
  // (their GEMMs, attention and normalizations split over the team).
  for (const char* spec : {"mlp", "transformer:seq=32,d=64,heads=4,ffn=128", "mlp:batch=64", "transformer"})
    for (int threads : {1, 2}) EXPECT_EQ(allocations_during_runs(spec, "compiled", threads), 0) << spec << " threads=" << threads;
}

TEST(NoAllocation, CounterSeesTheEagerExecutorAllocate) {
  if (!FUSEBOX_COUNTING) GTEST_SKIP() << "sanitizer build: the allocator is ASan's; the Release run counts";
  // The counter must be able to fail: the eager executor allocates every op's outputs.
  EXPECT_GT(allocations_during_runs("mlp", "eager", 1), 10);
}

}  // namespace
}  // namespace fusebox
