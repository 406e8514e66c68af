// The CUDA backend on a GPU: what the self-test (`fusebox selftest --backend cuda`, also a CTest
// test) does not cover on its own. Each test skips, saying why, where the backend cannot run (no
// driver, no device, the plugin not built): on machines without a GPU every test here is SKIPPED
// with the backend's own sentence, or FAILS with it under FUSEBOX_REQUIRE_CUDA=1.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/plugin.h"
#include "core/exec/session.h"
#include "core/ir/npy.h"
#include "core/models/builtin_models.h"
#include "core/models/onnx_import.h"
#include "ops/cpu/cpu_backend.h"
#include "tests/cuda_device/require_cuda.h"
#include "tests/support/graph_eval.h"

namespace fusebox {
namespace {

// The CUDA backend, or the reason there is none (then the test skips with it).
std::unique_ptr<exec::Backend> cuda_or_reason(std::string& reason) {
  cpu::register_backend();
  exec::register_plugin_backends();
  for (const auto& [name, why] : exec::BackendRegistry::instance().status()) {
    if (name != "cuda") continue;
    if (!why.empty()) {
      reason = why;
      return nullptr;
    }
    return exec::BackendRegistry::instance().create("cuda");
  }
  reason = "no backend named 'cuda' is registered";
  return nullptr;
}

#define REQUIRE_CUDA(backend)                                              \
  std::string skip_reason;                                                 \
  std::unique_ptr<exec::Backend> backend = cuda_or_reason(skip_reason);   \
  if (!backend) FUSEBOX_SKIP_OR_FAIL("no CUDA backend here: " + skip_reason)

std::vector<ir::Tensor> run_on(const ir::Graph& g, const std::vector<ir::Tensor>& inputs, const std::string& backend,
                               bool capture = false) {
  exec::SessionOptions o;
  o.backend = backend;
  o.capture = capture;
  exec::Session s(g, o);
  return s.run(inputs);
}

void expect_close(const std::vector<ir::Tensor>& got, const std::vector<ir::Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].shape(), want[o].shape()) << what;
    for (int64_t i = 0; i < got[o].numel(); ++i) {
      const float a = got[o].data<float>()[i], b = want[o].data<float>()[i];
      ASSERT_NEAR(a, b, 1e-3 + 1e-3 * std::abs(b)) << what << ": output " << o << " element " << i;
    }
  }
}

// Copies through the pinned staging ring, of sizes that wrap it and outgrow it, come back intact.
TEST(CudaDevice, CopiesThroughPinnedStagingComeBackIntact) {
  REQUIRE_CUDA(be);
  for (const size_t bytes : {size_t{1}, size_t{4096}, size_t{700} << 10, size_t{1} << 20, (size_t{3} << 20) + 3}) {
    std::vector<unsigned char> host(bytes), back(bytes, 0);
    std::iota(host.begin(), host.end(), static_cast<unsigned char>(bytes));
    std::shared_ptr<void> d = be->allocate(bytes);
    for (int round = 0; round < 3; ++round) be->copy_to_device(d.get(), host.data(), bytes);  // wraps the ring
    be->copy_to_host(back.data(), d.get(), bytes);
    EXPECT_EQ(std::memcmp(host.data(), back.data(), bytes), 0) << bytes << " bytes";
  }
}

// Several buffers written each round with data of their own, with no wait in between, then read
// back: a staging slot reused while its bytes are still in flight would put one buffer's (or one
// round's) bytes in another.
TEST(CudaDevice, StagingRoundTripsKeepEachBuffersOwnBytes) {
  REQUIRE_CUDA(be);
  const std::vector<size_t> sizes = {size_t{300} << 10, size_t{1} << 20, 4096, (size_t{2} << 20) + 5};
  std::vector<std::shared_ptr<void>> dev;
  for (size_t bytes : sizes) dev.push_back(be->allocate(bytes));
  for (int round = 0; round < 4; ++round) {
    std::vector<std::vector<unsigned char>> host;
    for (size_t b = 0; b < sizes.size(); ++b) {
      host.emplace_back(sizes[b]);
      for (size_t i = 0; i < sizes[b]; ++i) host.back()[i] = static_cast<unsigned char>(i * 31 + b * 7 + round * 101);
      be->copy_to_device(dev[b].get(), host.back().data(), sizes[b]);
    }
    for (size_t b = 0; b < sizes.size(); ++b) {
      std::vector<unsigned char> back(sizes[b], 0);
      be->copy_to_host(back.data(), dev[b].get(), sizes[b]);
      EXPECT_EQ(std::memcmp(back.data(), host[b].data(), sizes[b]), 0) << "round " << round << ", buffer " << b;
    }
  }
}

// A run captured into a CUDA graph and replayed with new inputs computes what the CPU does.
TEST(CudaDevice, AReplayedGraphTakesNewInputs) {
  REQUIRE_CUDA(be);
  const ir::Graph g = models::build_model("transformer:seq=16,d=64,heads=4,ffn=128,batch=2", 3);
  exec::SessionOptions o;
  o.backend = "cuda";
  o.capture = true;
  exec::Session s(g, o);
  ASSERT_EQ(s.capture_note(), "");
  for (uint64_t seed : {1u, 2u, 3u}) {
    const std::vector<ir::Tensor> inputs = testing::random_inputs(g, seed);
    expect_close(s.run(inputs), run_on(g, inputs, "cpu"), "inputs " + std::to_string(seed));
  }
  EXPECT_NE(s.executor().captured().find("a CUDA graph of "), std::string::npos) << s.executor().captured();
}

// CUPTI: the run's input copies are HtoD records of the inputs' bytes, and every kernel is tied to
// an op of the graph. Collection runs from begin_recording() to end_recording() only: a run
// outside leaves no record.
TEST(CudaDevice, CuptiRecordsCopiesAndKernelsTiedToOps) {
  REQUIRE_CUDA(be);
  const ir::Graph g = models::build_model("mlp", 3);
  const std::vector<ir::Tensor> inputs = testing::random_inputs(g, 1);
  exec::SessionOptions o;
  o.backend = "cuda";
  exec::Session s(g, o);
  s.run(inputs);
  EXPECT_TRUE(s.backend().end_recording().device.empty()) << "nothing is recorded before a recording starts";
  exec::BackendRecording recording(s.backend());
  if (s.backend().description().find("CUPTI activity on recorded runs") == std::string::npos)
    FUSEBOX_SKIP_OR_FAIL("CUPTI is not collecting here: " + s.backend().description());
  s.run(inputs);
  const std::vector<exec::DeviceActivity> a = recording.finish().device;
  uint64_t in_bytes = 0, want_in = 0;
  for (const auto& t : inputs) want_in += t.nbytes();
  for (const auto& x : a)
    if (x.kind == exec::ActivityKind::Memcpy && x.name == "HtoD") in_bytes += x.bytes;
  EXPECT_EQ(in_bytes, want_in);
  const exec::KernelCorrelation c = exec::check_kernel_correlation(a, s.graph().nodes.size());
  EXPECT_TRUE(c.ok()) << c.summary();
  s.run(inputs);  // not recorded: CUPTI is off again
  EXPECT_TRUE(s.backend().end_recording().device.empty()) << "a run outside a recording leaves no record";
}

// Every builtin model, all passes, against the CPU (the self-test does this too; here a failure
// names the model in the test log).
TEST(CudaDevice, BuiltinModelsMatchTheCpu) {
  REQUIRE_CUDA(be);
  for (const std::string& name : models::builtin_model_names()) {
    const ir::Graph g = models::build_model(name, 3);
    const std::vector<ir::Tensor> inputs = testing::random_inputs(g, 9);
    expect_close(run_on(g, inputs, "cuda"), run_on(g, inputs, "cpu"), name);
  }
}

// MobileNetV3-Small with its BatchNormalizations kept (every op of the conv family but
// ConvTranspose: Conv on all three paths, the fused activations, BatchNorm, the pools), end to end
// against the CPU on the same graph within 1e-4, unoptimized and with every pass (BN folded, the
// activations fused into the Convs), and against PyTorch's saved output.
TEST(CudaDevice, MobileNetV3SmallMatchesTheCpu) {
  REQUIRE_CUDA(be);
  const std::string dir = std::string(FUSEBOX_SOURCE_DIR) + "/assets/models/";
  auto cpu = cpu::make_backend();
  models::OnnxImportOptions opt;
  opt.evaluator = cpu.get();
  const ir::Graph g = models::import_onnx_file(dir + "mobilenet_v3_small_bn_opset17.onnx", opt);
  const ir::Tensor x = ir::read_npy(dir + "mobilenet_v3_small_bn.x.npy");
  const ir::Tensor pytorch = ir::read_npy(dir + "mobilenet_v3_small_bn.y.npy");
  for (const char* passes : {"none", "all"}) {
    SCOPED_TRACE(std::string("passes ") + passes);
    exec::SessionOptions o;
    o.passes = passes;
    o.backend = "cuda";
    const std::vector<ir::Tensor> got = exec::Session(g, o).run({x});
    o.backend = "cpu";
    const std::vector<ir::Tensor> want = exec::Session(g, o).run({x});
    ASSERT_EQ(got.size(), 1u);
    ASSERT_EQ(got[0].shape(), want[0].shape());
    ASSERT_EQ(got[0].shape(), pytorch.shape());
    double worst_cpu = 0, worst_pytorch = 0;
    for (int64_t i = 0; i < want[0].numel(); ++i) {
      const double v = got[0].data<float>()[i];
      worst_cpu = std::max(worst_cpu, std::abs(v - want[0].data<float>()[i]));
      worst_pytorch = std::max(worst_pytorch, std::abs(v - pytorch.data<float>()[i]));
    }
    EXPECT_LE(worst_cpu, 1e-4) << "max |cuda - cpu|";
    EXPECT_LE(worst_pytorch, 1e-4) << "max |cuda - pytorch|";
  }
}

}  // namespace
}  // namespace fusebox
