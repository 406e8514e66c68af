// The Runner: runs on its worker thread, cancels promptly, survives concurrent flips, keeps the
// last good result when a run fails, and applies the thread count where the kernels run.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "app/workbench/runner.h"
#include "core/backend/backend.h"
#include "tests/support/temp_dir.h"
#include "tests/workbench/workbench_test_util.h"

namespace fusebox::workbench {
namespace {

using test::fixed_roofline;
using test::small_settings;
using Clock = std::chrono::steady_clock;

TEST(Runner, PublishesAResultFromItsWorker) {
  Runner r(fixed_roofline);
  EXPECT_EQ(r.result(), nullptr);
  r.request(small_settings());
  ASSERT_TRUE(r.wait_idle(std::chrono::seconds(60)));
  auto snap = r.snapshot();
  ASSERT_TRUE(snap.result);
  EXPECT_EQ(snap.result->settings, small_settings());
  EXPECT_TRUE(snap.result->measured());
  EXPECT_FALSE(snap.error);
  EXPECT_FALSE(snap.busy);
  EXPECT_EQ(snap.finished, 1u);
}

// Cancelling waits for the measured call in flight and no more. Counted in calls, not
// milliseconds: a call's time depends on what else the machine runs (CTest runs tests side by
// side), the number of calls after cancel() does not. The time it takes is in the README
// (fusebox_bench_ui and the flip benchmark), measured on a quiet machine.
TEST(Runner, CancellingAStackRunMidMeasureStopsAfterTheCallInFlight) {
  Runner r(fixed_roofline);
  Settings s = small_settings("stack");
  s.iters = 1000000;
  s.profile_runs = 0;
  r.request(s);
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (true) {
    auto snap = r.snapshot();
    if (snap.stage == Stage::Measure && snap.done >= 4) break;
    ASSERT_LT(Clock::now(), deadline) << "never reached the measure stage";
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  r.cancel();
  const int done_at_cancel = r.snapshot().done;
  ASSERT_TRUE(r.wait_idle(std::chrono::seconds(10))) << "cancel did not stop the run";
  EXPECT_LE(r.snapshot().done - done_at_cancel, 1) << "calls were made after cancel() beyond the one in flight";
  EXPECT_LT(r.snapshot().done, 1000000);
  ASSERT_TRUE(r.result()) << "the graph and plan were published before measuring";
  EXPECT_FALSE(r.result()->measured()) << "a cancelled run publishes no figures";
  EXPECT_EQ(r.result()->latency.samples_us.size(), 0u);
  EXPECT_FALSE(r.snapshot().error);
}

// Random flips of every switch that does not change the model.
Settings random_flip(Settings s, std::mt19937& rng) {
  switch (rng() % 5) {
    case 0: s.executor = std::vector<std::string>{"eager", "interpreted", "compiled"}[rng() % 3]; break;
    case 1: s.planner = std::vector<std::string>{"naive", "first_fit", "greedy_by_size", "best"}[rng() % 4]; break;
    case 2: s.threads = 1 + static_cast<int>(rng() % 2); break;
    case 3: {
      const std::string pass = std::vector<std::string>{"absorb_matmul", "fuse_patterns", "absorb_layout",
                                                        "fuse_elementwise", "dce"}[rng() % 5];
      if (s.passes_off.count(pass)) s.passes_off.erase(pass); else s.passes_off.insert(pass);
      break;
    }
    default: {
      const std::string pattern = std::vector<std::string>{"attention", "gelu", "layernorm"}[rng() % 3];
      if (s.patterns_off.count(pattern)) s.patterns_off.erase(pattern); else s.patterns_off.insert(pattern);
    }
  }
  return s;
}

TEST(Runner, TwoHundredFlipsFromTwoThreadsEndLikeAFreshRunOfTheLastSettings) {
  Runner r(fixed_roofline);
  std::mutex mu;
  uint64_t last_n = 0;
  Settings last;
  auto flipper = [&](unsigned seed) {
    std::mt19937 rng(seed);
    Settings s = small_settings();
    for (int i = 0; i < 100; ++i) {
      s = random_flip(s, rng);
      std::lock_guard<std::mutex> lock(mu);  // so "the last request" is well defined
      uint64_t n = r.request(s);
      if (n > last_n) last_n = n, last = s;
      if (rng() % 8 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    }
  };
  std::thread a(flipper, 1), b(flipper, 2);
  a.join();
  b.join();
  ASSERT_TRUE(r.wait_idle(std::chrono::seconds(120)));
  auto got = r.result();
  ASSERT_TRUE(got);
  ASSERT_FALSE(r.snapshot().error) << r.snapshot().error->message;
  EXPECT_EQ(got->settings, last);
  EXPECT_EQ(last_n, 200u);

  Pipeline fresh(fixed_roofline);
  auto want = fresh.run(last);
  EXPECT_EQ(got->graph().nodes.size(), want->graph().nodes.size());
  EXPECT_EQ(got->graph().op_histogram(), want->graph().op_histogram());
  EXPECT_EQ(got->plan->arena_bytes, want->plan->arena_bytes);
  EXPECT_EQ(got->plan->strategy, want->plan->strategy);
  ASSERT_EQ(got->outputs.size(), want->outputs.size());
  for (size_t o = 0; o < want->outputs.size(); ++o)
    for (int64_t i = 0; i < want->outputs[o].numel(); ++i)
      ASSERT_EQ(got->outputs[o].data<float>()[i], want->outputs[o].data<float>()[i]) << "element " << i;
}

TEST(Runner, AModelThatFailsToImportKeepsTheLastGoodResult) {
  Runner r(fixed_roofline);
  r.request(small_settings());
  ASSERT_TRUE(r.wait_idle(std::chrono::seconds(60)));
  auto good = r.result();
  ASSERT_TRUE(good);

  const std::string bad = fusebox::test::process_temp_dir() + "/fusebox_not_a_model.onnx";
  std::ofstream(bad) << "this is not a protobuf";
  Settings s = small_settings();
  s.model = bad;
  r.request(s);
  ASSERT_TRUE(r.wait_idle(std::chrono::seconds(60)));
  auto snap = r.snapshot();
  EXPECT_EQ(snap.result, good) << "the last good result stays published";
  ASSERT_TRUE(snap.error);
  EXPECT_NE(snap.error->message.find(bad), std::string::npos) << snap.error->message;
  EXPECT_EQ(snap.error->settings.model, bad);

  r.request(small_settings());
  ASSERT_TRUE(r.wait_idle(std::chrono::seconds(60)));
  EXPECT_FALSE(r.snapshot().error) << "a good run clears the error";
  EXPECT_NE(r.result(), good);
}

// A CPU backend whose FusedBiasRelu kernel first reports the size of the OpenMP team it gets on
// the thread that runs it: the test sees threads from inside a kernel, not a setting read back.
std::atomic<int> g_team{0};
exec::KernelFn g_fused_bias_relu = nullptr;

void probe_kernel(const exec::KernelArgs& args) {
#pragma omp parallel
  {
#pragma omp single
    g_team.store(omp_get_num_threads());
  }
  g_fused_bias_relu(args);
}

class ProbeBackend final : public exec::Backend {
 public:
  ProbeBackend() : cpu_(cpu::make_backend()), table_(cpu_->kernels()) {
    exec::KernelDef def = *table_.find("FusedBiasRelu");
    g_fused_bias_relu = def.run;
    def.run = probe_kernel;
    table_.add("FusedBiasRelu", def);
  }
  std::string name() const override { return "cpu_probe"; }
  std::string description() const override { return "CPU with a thread probe"; }
  const exec::KernelTable& kernels() const override { return table_; }
  bool supports(const std::string& op, const std::vector<ir::TensorType>& in) const override {
    return cpu_->supports(op, in);
  }
  size_t alignment() const override { return cpu_->alignment(); }
  size_t scratch_bytes(const exec::KernelContext& ctx) const override { return cpu_->scratch_bytes(ctx); }
  void bind_threads(int threads) const override { cpu_->bind_threads(threads); }
  std::shared_ptr<void> allocate(size_t bytes) override { return cpu_->allocate(bytes); }
  std::shared_ptr<const void> upload(const ir::Tensor& w) override { return cpu_->upload(w); }
  void copy_to_device(void* d, const void* s, size_t n) override { cpu_->copy_to_device(d, s, n); }
  void copy_to_host(void* d, const void* s, size_t n) override { cpu_->copy_to_host(d, s, n); }

 private:
  std::unique_ptr<exec::Backend> cpu_;
  exec::KernelTable table_;
};

TEST(Runner, ThreadsAreAppliedWhereTheKernelsRunAndDoNotLeak) {
  test::register_cpu();
  exec::BackendRegistry::instance().add("cpu_probe", [] { return std::make_unique<ProbeBackend>(); });
  const int main_threads = omp_get_max_threads();
  Runner r(fixed_roofline);
  Settings s = small_settings("mlp:dims=64-64-10,batch=4");
  s.backend = "cpu_probe";
  for (int threads : {2, 1, 2}) {
    s.threads = threads;
    g_team.store(0);
    r.request(s);
    ASSERT_TRUE(r.wait_idle(std::chrono::seconds(60)));
    ASSERT_FALSE(r.snapshot().error) << r.snapshot().error->message;
    EXPECT_EQ(g_team.load(), threads) << "the kernel's OpenMP team on the worker";
  }
  EXPECT_EQ(omp_get_max_threads(), main_threads) << "the worker's count never reaches this thread";
}

// The window's quit while a stage runs that cannot look at the cancel flag (here the roofline
// source; in life a model file whose open blocks, or one very long pass): the Runner waits
// kShutdownWait, then leaves the worker to end on its own thread, which owns what it uses.
TEST(Runner, GoesWithinASecondWhileAStageThatCannotStopRuns) {
  auto entered = std::make_shared<std::atomic<bool>>(false);
  auto slow = [entered](const std::string& backend, const std::string& isa) {
    entered->store(true);
    std::this_thread::sleep_for(std::chrono::seconds(5));  // deaf to the cancel flag
    return test::fixed_roofline(backend, isa);
  };
  auto runner = std::make_unique<Runner>(slow);
  runner->request(test::small_settings());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!entered->load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(entered->load()) << "the run never reached the roofline";
  const auto start = std::chrono::steady_clock::now();
  runner.reset();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.0) << "waits kShutdownWait (0.4 s) at most, not the 5 s stage";
}

}  // namespace
}  // namespace fusebox::workbench
