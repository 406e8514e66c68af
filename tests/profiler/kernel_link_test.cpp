// profiler/kernel_link.h: a trace's kernels joined to an Nsight Compute export's launches.
#include <gtest/gtest.h>

#include <array>

#include "profiler/kernel_link.h"

using namespace fusebox;
using namespace fusebox::profiler;

namespace {

exec::DeviceActivity kernel(const std::string& name, int64_t start, int64_t dur, std::array<int32_t, 3> grid,
                            std::array<int32_t, 3> block) {
  exec::DeviceActivity a;
  a.kind = exec::ActivityKind::Kernel;
  a.name = name;
  a.start_ns = start;
  a.end_ns = start + dur;
  for (size_t i = 0; i < 3; ++i) {
    a.grid[i] = grid[i];
    a.block[i] = block[i];
  }
  return a;
}

NcuKernel ncu_kernel(const std::string& id, const std::string& name, const std::string& grid, const std::string& block,
                     double sm_pct, double mem_pct) {
  NcuKernel k;
  k.id = id;
  k.name = name;
  k.grid = grid;
  k.block = block;
  k.file = "ncu.csv";
  k.metrics.push_back({"GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", std::to_string(sm_pct), sm_pct});
  k.metrics.push_back({"GPU Speed Of Light Throughput", "Memory Throughput", "%", std::to_string(mem_pct), mem_pct});
  return k;
}

}  // namespace

TEST(KernelLink, BaseNamesDropReturnTypeNamespacesTemplatesAndParameters) {
  EXPECT_EQ(kernel_base_name("void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, "
                             "float, float, at::native::binary_internal::MulFunctor<float> >, "
                             "at::detail::Array<char*, 2> >(int, F, T)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(kernel_base_name("enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, float, 0, 1>(T13)"), "kernel");
  EXPECT_EQ(kernel_base_name("void (anonymous namespace)::softmax_warp_forward<float, float, float, 5, false>(float*)"),
            "softmax_warp_forward");
  // ncu's own spelling of an anonymous namespace, as the shipped RTX 5090 exports have it.
  EXPECT_EQ(kernel_base_name("void vectorized_elementwise_kernel<4, unnamed>::silu_kernel(TensorIteratorBase &)::"
                             "[lambda() (instance 1)]::operator ()() const, array<char *, 2>>(int, T2, T3)"),
            "vectorized_elementwise_kernel");
  EXPECT_EQ(kernel_base_name("void unnamed>::CatArrayBatchedCopy_vectorized<unnamed>::OpaqueType<2>, unsigned int, "
                             "3, 128, 1, 16, 8>(char *, unsigned int)"),
            "CatArrayBatchedCopy_vectorized");
  EXPECT_EQ(kernel_base_name("void <unnamed>::fill_kernel<float>(float*)"), "fill_kernel");
  EXPECT_EQ(kernel_base_name("ampere_sgemm_128x64_tn"), "ampere_sgemm_128x64_tn");
  EXPECT_EQ(kernel_full_name("void  f<int>(int)"), "f<int>(int)");
  EXPECT_EQ(kernel_full_name("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float> >(int)"),
            kernel_full_name("void vectorized_elementwise_kernel<4, BinaryFunctor<float>>(int)"));
}

// Each kind of match (kernel_link.h), the first that fits winning; groups by GPU time; counts.
TEST(KernelLink, EachProfiledLaunchFindsItsKernelByNameAndLaunch) {
  std::vector<exec::DeviceActivity> device = {
      kernel("void at::native::gemv<float>(float*)", 0, 100, {80, 1, 1}, {128, 1, 1}),
      kernel("void at::native::gemv<float>(float*)", 200, 100, {80, 1, 1}, {128, 1, 1}),
      kernel("void at::native::gemv<float>(float*)", 400, 50, {40, 1, 1}, {128, 1, 1}),
      kernel("void softmax<float>(float*)", 500, 400, {8, 1, 1}, {256, 1, 1}),
      kernel("ampere_sgemm_128x64_tn", 1000, 300, {12, 1, 1}, {128, 1, 1}),
      kernel("never_profiled", 2000, 50, {1, 1, 1}, {32, 1, 1}),
  };
  exec::DeviceActivity copy;
  copy.kind = exec::ActivityKind::Memcpy;
  copy.name = "HtoD";
  copy.end_ns = 10000;  // not a kernel: no group, no kernel time
  device.push_back(copy);
  NcuReport ncu;
  ncu.kernels = {ncu_kernel("0", "softmax<float>(float*)", "(8, 1, 1)", "(256, 1, 1)", 20, 90),  // exact
                 ncu_kernel("1", "gemv<float, 4>(float *)", "(40, 1, 1)", "(128, 1, 1)", 10, 80),  // name and launch
                 ncu_kernel("2", "ampere_sgemm_128x64_tn", "(24, 1, 1)", "(128, 1, 1)", 85, 30),  // name only
                 ncu_kernel("3", "flash_fwd_kernel<int>(Params)", "(1, 1, 1)", "(128, 1, 1)", 50, 50)};  // none
  const KernelLinks links = link_kernels(device, ncu);
  ASSERT_EQ(links.groups.size(), 5u);
  EXPECT_EQ(links.trace_kernel_ns, 1000);
  EXPECT_EQ(links.groups[0].name, "void softmax<float>(float*)");
  EXPECT_EQ(links.groups[0].match, "exact");
  EXPECT_EQ(links.groups[0].ncu, std::vector<size_t>{0});
  EXPECT_DOUBLE_EQ(links.groups[0].share, 0.4);
  EXPECT_EQ(links.groups[1].name, "ampere_sgemm_128x64_tn");
  EXPECT_EQ(links.groups[1].match, "name");
  EXPECT_EQ(links.groups[2].grid, "(80, 1, 1)");
  EXPECT_EQ(links.groups[2].launches, 2);
  EXPECT_EQ(links.groups[2].match, "") << "profiled at (40, 1, 1): the other group has that launch";
  EXPECT_EQ(links.groups[3].grid, "(40, 1, 1)");
  EXPECT_EQ(links.groups[3].match, "name and launch");
  EXPECT_EQ(links.groups[4].name, "never_profiled");
  EXPECT_EQ(links.ncu_launches, 4u);
  EXPECT_EQ(links.ncu_matched, 3u);
  EXPECT_EQ(links.unmatched, std::vector<std::string>{"flash_fwd_kernel<int>(Params)"});
  EXPECT_EQ(links.linked_ns, 400 + 300 + 50);
  const std::string text = kernel_links_text(links, ncu);
  EXPECT_NE(text.find("3 of 4 profiled launches matched"), std::string::npos) << text;
  EXPECT_NE(text.find("1 matched none (flash_fwd_kernel)"), std::string::npos) << text;
  EXPECT_NE(text.find("75.0% of the trace's kernel time"), std::string::npos) << text;
  EXPECT_NE(text.find("ncu (name, 1 launch, profiled at grid (24, 1, 1), block (128, 1, 1))"), std::string::npos)
      << text;
  EXPECT_NE(text.find("no profiled launch of this kernel"), std::string::npos) << text;
  const nlohmann::json j = kernel_links_json(links, ncu);
  EXPECT_EQ(j.at("ncu_matched"), 3);
  EXPECT_EQ(j.at("groups")[0].at("match"), "exact");
  EXPECT_EQ(j.at("groups")[0].at("memory_throughput_pct"), 90.0);
  EXPECT_EQ(j.at("groups")[0].at("limiter"), kernel_figures(ncu.kernels[0]).limiter);
}

TEST(KernelLink, NoKernelsOrNoLaunchesAreCountedNotCrashed) {
  const KernelLinks none = link_kernels({}, NcuReport{});
  EXPECT_TRUE(none.groups.empty());
  EXPECT_NE(kernel_links_text(none, NcuReport{}).find("0 of 0 profiled launches"), std::string::npos);
  NcuReport ncu;
  ncu.kernels = {ncu_kernel("0", "k", "(1, 1, 1)", "(32, 1, 1)", 1, 1)};
  const KernelLinks lone = link_kernels({}, ncu);
  EXPECT_EQ(lone.ncu_matched, 0u);
  EXPECT_EQ(lone.unmatched.size(), 1u);
}
