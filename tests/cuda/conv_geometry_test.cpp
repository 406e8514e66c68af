// The CUDA conv family's host-side decisions (ops/cuda/host/conv_geometry.h,
// ops/cuda/conv_types.h), without a GPU: the path and GEMM plan of each kind of Conv, checked
// numerically by running the plan's GEMMs as cuBLAS defines them (column-major, strided batches)
// over an im2col written here, against a double-precision convolution straight from ONNX's
// definition; the window taps the pools read against counting every tap; the fused activations
// against their formulas in double.
#include "ops/cuda/host/conv_geometry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/ir/conv_params.h"
#include "ops/cuda/conv_types.h"
#include "tests/ops/op_test_util.h"

using namespace fusebox;
using namespace fusebox::cuda;
using namespace fusebox::optest;

namespace {

using Ints = std::vector<int64_t>;

ir::ConvShape conv_of(const Shape& x, const Shape& w, const ir::Attributes& attrs,
                      bool bias = false) {
  const ir::Node node = make_node("Conv", bias ? 3 : 2, 1, attrs);
  const Shape b{w[0]};
  return ir::conv_shape(node, x, w, bias ? &b : nullptr);
}

// ---- which path, which GEMMs ------------------------------------------------------------------

TEST(CudaConvPlan, DepthwiseTakesTheDirectKernelAndNoScratch) {
  const ir::ConvShape c = conv_of({2, 8, 10, 10}, {8, 1, 3, 3}, attrs_of({{"group", int64_t{8}}}));
  const ConvGemmPlan p = conv_gemm_plan(c);
  EXPECT_EQ(conv_path_name(p.path), "depthwise");
  EXPECT_EQ(p.scratch_floats, 0);
  EXPECT_EQ(conv_scratch_bytes_cuda(c), 0u);
  // A channel multiplier of 2 (C_out = 2 * C_in) is still one input channel per group.
  EXPECT_EQ(
      conv_gemm_plan(conv_of({1, 4, 6, 6}, {8, 1, 3, 3}, attrs_of({{"group", int64_t{4}}}))).path,
      ConvPath::kDepthwise);
}

TEST(CudaConvPlan, PointwiseWithOneGroupIsOneCallOverTheImages) {
  const ir::ConvShape c = conv_of({3, 16, 7, 5}, {24, 16, 1, 1}, {});
  const ConvGemmPlan p = conv_gemm_plan(c);
  EXPECT_EQ(p.path, ConvPath::kPointwise);
  EXPECT_EQ(p.calls, 1);
  EXPECT_EQ(p.batch, 3);
  EXPECT_EQ(p.m, 24);
  EXPECT_EQ(p.n, 35);
  EXPECT_EQ(p.k, 16);
  EXPECT_EQ(p.x_batch, 16 * 35);
  EXPECT_EQ(p.w_batch, 0);  // every image against the same weight
  EXPECT_EQ(p.y_batch, 24 * 35);
  EXPECT_EQ(conv_scratch_bytes_cuda(c), 0u);
}

TEST(CudaConvPlan, GroupedAndStridedConvsGoThroughIm2col) {
  // 1x1 but strided or padded: not pointwise.
  EXPECT_EQ(
      conv_gemm_plan(conv_of({1, 4, 8, 8}, {4, 4, 1, 1}, attrs_of({{"strides", Ints{2, 2}}}))).path,
      ConvPath::kIm2col);
  EXPECT_EQ(
      conv_gemm_plan(conv_of({1, 4, 8, 8}, {4, 4, 1, 1}, attrs_of({{"pads", Ints{1, 0, 0, 0}}})))
          .path,
      ConvPath::kIm2col);
  // Two groups of 3 input channels: one call per image, batched over the groups.
  const ir::ConvShape c = conv_of({2, 6, 9, 9}, {10, 3, 3, 3}, attrs_of({{"group", int64_t{2}}}));
  const ConvGemmPlan p = conv_gemm_plan(c);
  EXPECT_EQ(p.path, ConvPath::kIm2col);
  EXPECT_EQ(p.calls, 2);
  EXPECT_EQ(p.batch, 2);
  EXPECT_EQ(p.k, 27);
  EXPECT_EQ(p.n, 49);
  EXPECT_EQ(p.im2col_rows, 54);
  EXPECT_EQ(conv_scratch_bytes_cuda(c), 54u * 49u * sizeof(float));
}

// ---- the plan, run as cuBLAS would run it ------------------------------------------------------

// cublasGemmStridedBatchedEx(N, N, m, n, k) with lda = m, ldb = k, ldc = m, column-major:
// C[i + j m] = sum_l A[i + l m] B[l + j k], for each batch b at its strides.
void cublas_like_gemms(const ConvGemmPlan& p, const float* a, const float* w, float* y) {
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t j = 0; j < p.m; ++j)
      for (int64_t i = 0; i < p.n; ++i) {
        double s = 0;
        for (int64_t l = 0; l < p.k; ++l)
          s += static_cast<double>(a[b * p.x_batch + i + l * p.n]) * w[b * p.w_batch + l + j * p.k];
        y[b * p.y_batch + i + j * p.n] = static_cast<float>(s);
      }
}

// ONNX's Conv in double, one output at a time (no bias).
std::vector<double> reference_conv(const ir::ConvShape& c, const Tensor& x, const Tensor& w) {
  const Window3 g = window3(c.g, "Conv");
  std::vector<double> y(static_cast<size_t>(c.g.batch * c.c_out * g.out_size()));
  size_t at = 0;
  for (int64_t n = 0; n < c.g.batch; ++n)
    for (int64_t co = 0; co < c.c_out; ++co)
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            double s = 0;
            const int64_t grp = co / c.c_out_per_group;
            for (int64_t ci = 0; ci < c.c_in_per_group; ++ci)
              for (int64_t j0 = 0; j0 < g.k[0]; ++j0)
                for (int64_t j1 = 0; j1 < g.k[1]; ++j1)
                  for (int64_t j2 = 0; j2 < g.k[2]; ++j2) {
                    const int64_t i0 = o0 * g.s[0] - g.pb[0] + j0 * g.dil[0];
                    const int64_t i1 = o1 * g.s[1] - g.pb[1] + j1 * g.dil[1];
                    const int64_t i2 = o2 * g.s[2] - g.pb[2] + j2 * g.dil[2];
                    if (i0 < 0 || i0 >= g.in[0] || i1 < 0 || i1 >= g.in[1] || i2 < 0 ||
                        i2 >= g.in[2])
                      continue;
                    const int64_t xc = grp * c.c_in_per_group + ci;
                    s +=
                        static_cast<double>(
                            x.data<float>()[((n * c.c_in + xc) * g.in[0] + i0) * g.in[1] * g.in[2] +
                                            i1 * g.in[2] + i2]) *
                        w.data<float>()[((co * c.c_in_per_group + ci) * g.k[0] + j0) * g.k[1] *
                                            g.k[2] +
                                        j1 * g.k[2] + j2];
                  }
            y[at++] = s;
          }
  return y;
}

// One image's im2col as conv_kernels.cu's im2col_kernel defines it: row (ci, tap), column p.
std::vector<float> im2col(const Window3& g, int64_t c_in, const float* x) {
  std::vector<float> col(static_cast<size_t>(c_in * g.kernel_size() * g.out_size()));
  size_t at = 0;
  for (int64_t ci = 0; ci < c_in; ++ci)
    for (int64_t j0 = 0; j0 < g.k[0]; ++j0)
      for (int64_t j1 = 0; j1 < g.k[1]; ++j1)
        for (int64_t j2 = 0; j2 < g.k[2]; ++j2)
          for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
            for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
              for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
                const int64_t i0 = o0 * g.s[0] - g.pb[0] + j0 * g.dil[0];
                const int64_t i1 = o1 * g.s[1] - g.pb[1] + j1 * g.dil[1];
                const int64_t i2 = o2 * g.s[2] - g.pb[2] + j2 * g.dil[2];
                const bool in =
                    i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1] && i2 >= 0 && i2 < g.in[2];
                col[at++] = in ? x[ci * g.in_size() + (i0 * g.in[1] + i1) * g.in[2] + i2] : 0.0f;
              }
  return col;
}

TEST(CudaConvPlan, GemmPlansComputeTheConvolution) {
  struct Case {
    const char* what;
    Shape x, w;
    ir::Attributes attrs;
  };
  const std::vector<Case> cases = {
      {"2-D, padded", {2, 3, 9, 11}, {5, 3, 3, 3}, attrs_of({{"pads", Ints{1, 1, 1, 1}}})},
      {"1-D, stride 2, dilation 2",
       {2, 4, 17},
       {6, 4, 3},
       attrs_of({{"strides", Ints{2}}, {"dilations", Ints{2}}})},
      {"2-D, asymmetric pads", {1, 2, 6, 7}, {3, 2, 2, 3}, attrs_of({{"pads", Ints{0, 2, 1, 0}}})},
      {"3 groups, stride 2",
       {2, 6, 8, 8},
       {9, 2, 3, 3},
       attrs_of({{"group", int64_t{3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}})},
      {"3-D", {1, 2, 4, 5, 5}, {3, 2, 2, 3, 3}, attrs_of({{"pads", Ints{0, 1, 1, 1, 1, 0}}})},
      {"pointwise, one group", {3, 8, 4, 5}, {6, 8, 1, 1}, {}},
      {"pointwise, two groups", {2, 8, 4, 5}, {6, 4, 1, 1}, attrs_of({{"group", int64_t{2}}})},
      {"SAME_UPPER",
       {1, 3, 7, 7},
       {4, 3, 4, 4},
       attrs_of({{"auto_pad", std::string("SAME_UPPER")}})},
  };
  std::mt19937 rng(7);
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const ir::ConvShape c = conv_of(k.x, k.w, k.attrs);
    const ConvGemmPlan p = conv_gemm_plan(c);
    ASSERT_NE(p.path, ConvPath::kDepthwise);
    const Window3 g = window3(c.g, "Conv");
    const Tensor x = random_f32(k.x, rng), w = random_f32(k.w, rng);
    std::vector<float> y(static_cast<size_t>(c.g.batch * c.c_out * p.n),
                         std::numeric_limits<float>::quiet_NaN());
    std::vector<float> scratch(static_cast<size_t>(p.scratch_floats));
    for (int64_t call = 0; call < p.calls; ++call) {
      const float* a = x.data<float>() + call * p.x_call;
      if (p.path == ConvPath::kIm2col) {
        scratch = im2col(g, c.c_in, x.data<float>() + call * c.c_in * g.in_size());
        ASSERT_EQ(static_cast<int64_t>(scratch.size()), p.scratch_floats);
        a = scratch.data();
      }
      cublas_like_gemms(p, a, w.data<float>(), y.data() + call * p.y_call);
    }
    const std::vector<double> want = reference_conv(c, x, w);
    ASSERT_EQ(want.size(), y.size());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "output " << i;
  }
}

TEST(CudaConvPlan, WindowIsRightAlignedAndAtMostThreeDims) {
  const ir::ConvShape c =
      conv_of({1, 2, 17}, {3, 2, 5}, attrs_of({{"strides", Ints{3}}, {"pads", Ints{2, 1}}}));
  const Window3 w = window3(c.g, "Conv");
  EXPECT_EQ(w.in[0], 1);
  EXPECT_EQ(w.in[1], 1);
  EXPECT_EQ(w.in[2], 17);
  EXPECT_EQ(w.k[2], 5);
  EXPECT_EQ(w.s[2], 3);
  EXPECT_EQ(w.pb[2], 2);
  EXPECT_EQ(w.pe[2], 1);
  EXPECT_EQ(w.out[2], (17 + 3 - 5) / 3 + 1);
  ir::WindowGeometry four = c.g;
  four.in = {2, 2, 2, 2};
  four.kernel = four.out = {1, 1, 1, 1};
  four.strides = four.dilations = {1, 1, 1, 1};
  four.pad_begin = four.pad_end = {0, 0, 0, 0};
  try {
    (void)window3(four, "MaxPool");
    ADD_FAILURE() << "a 4-D window was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MaxPool: 4 spatial dims"), std::string::npos) << e.what();
  }
}

// ---- ConvTranspose: the GEMM (second operand transposed) and the col2im gather ---------------

// ONNX's ConvTranspose in double, as the scatter its definition is (no bias).
std::vector<double> reference_conv_transpose(const ConvTransposeParams& p, const Tensor& x,
                                             const Tensor& w) {
  const Window3& g = p.w;
  std::vector<double> y(static_cast<size_t>(p.batch * p.c_out * g.out_size()), 0.0);
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t ci = 0; ci < p.c_in; ++ci) {
      const int64_t grp = ci / p.c_in_per_group;
      for (int64_t c = 0; c < p.c_out_per_group; ++c) {
        const int64_t co = grp * p.c_out_per_group + c;
        for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < g.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < g.in[2]; ++i2)
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    const int64_t o0 = i0 * g.s[0] - g.pb[0] + k0 * g.dil[0];
                    const int64_t o1 = i1 * g.s[1] - g.pb[1] + k1 * g.dil[1];
                    const int64_t o2 = i2 * g.s[2] - g.pb[2] + k2 * g.dil[2];
                    if (o0 < 0 || o0 >= g.out[0] || o1 < 0 || o1 >= g.out[1] || o2 < 0 ||
                        o2 >= g.out[2])
                      continue;
                    const double xv = x.data<float>()[(n * p.c_in + ci) * g.in_size() +
                                                      (i0 * g.in[1] + i1) * g.in[2] + i2];
                    const double wv = w.data<float>()[((ci * p.c_out_per_group + c) * g.k[0] + k0) *
                                                          g.k[1] * g.k[2] +
                                                      k1 * g.k[2] + k2];
                    y[static_cast<size_t>((n * p.c_out + co) * g.out_size() +
                                          (o0 * g.out[1] + o1) * g.out[2] + o2)] += xv * wv;
                  }
      }
    }
  return y;
}

TEST(CudaConvTransposePlan, GemmAndCol2imComputeTheTransposedConvolution) {
  struct Case {
    const char* what;
    Shape x, w;
    ir::Attributes attrs;
  };
  const std::vector<Case> cases = {
      {"stride 2", {1, 4, 5, 6}, {4, 3, 3, 3}, attrs_of({{"strides", Ints{2, 2}}})},
      {"pads, output_padding",
       {2, 3, 4, 4},
       {3, 2, 3, 3},
       attrs_of(
           {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}})},
      {"1-D, dilation 2",
       {2, 2, 7},
       {2, 3, 3},
       attrs_of({{"dilations", Ints{2}}, {"strides", Ints{3}}})},
      {"2 groups",
       {1, 4, 5, 5},
       {4, 3, 2, 2},
       attrs_of({{"group", int64_t{2}}, {"strides", Ints{2, 2}}})},
  };
  std::mt19937 rng(13);
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const ir::Node node = make_node("ConvTranspose", 2, 1, k.attrs);
    const ConvTransposeParams p =
        conv_transpose_params(ir::conv_transpose_shape(node, k.x, k.w, nullptr));
    const Window3& g = p.w;
    const int64_t in_size = g.in_size(), taps = g.kernel_size();
    EXPECT_EQ(p.scratch_floats, p.c_out * taps * in_size);
    const Tensor x = random_f32(k.x, rng), w = random_f32(k.w, rng);
    std::vector<float> y(static_cast<size_t>(p.batch * p.c_out * g.out_size()));
    for (int64_t n = 0; n < p.batch; ++n) {
      // cuBLAS (N, T), m = P_in, n = rows, k = C_in/group: C[i + r m] = sum_l A[i + l m] B[r + l
      // rows].
      std::vector<float> col(static_cast<size_t>(p.scratch_floats));
      const float* xn = x.data<float>() + n * p.c_in * in_size;
      for (int64_t b = 0; b < p.group; ++b)
        for (int64_t r = 0; r < p.rows; ++r)
          for (int64_t i = 0; i < in_size; ++i) {
            double s = 0;
            for (int64_t l = 0; l < p.c_in_per_group; ++l)
              s += static_cast<double>(xn[b * p.c_in_per_group * in_size + i + l * in_size]) *
                   w.data<float>()[b * p.c_in_per_group * p.rows + r + l * p.rows];
            col[static_cast<size_t>(b * p.rows * in_size + i + r * in_size)] =
                static_cast<float>(s);
          }
      // col2im_kernel's gather.
      for (int64_t co = 0; co < p.c_out; ++co)
        for (int64_t o = 0; o < g.out_size(); ++o) {
          const int64_t o0 = o / (g.out[1] * g.out[2]), o1 = o / g.out[2] % g.out[1],
                        o2 = o % g.out[2];
          double acc = 0;
          for (int64_t k0 = 0; k0 < g.k[0]; ++k0)
            for (int64_t k1 = 0; k1 < g.k[1]; ++k1)
              for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                const int64_t i0 = transpose_source(g, 0, o0, k0),
                              i1 = transpose_source(g, 1, o1, k1),
                              i2 = transpose_source(g, 2, o2, k2);
                if (i0 < 0 || i1 < 0 || i2 < 0) continue;
                acc += col[static_cast<size_t>((co * taps + (k0 * g.k[1] + k1) * g.k[2] + k2) *
                                                   in_size +
                                               (i0 * g.in[1] + i1) * g.in[2] + i2)];
              }
          y[static_cast<size_t>((n * p.c_out + co) * g.out_size() + o)] = static_cast<float>(acc);
        }
    }
    const std::vector<double> want = reference_conv_transpose(p, x, w);
    ASSERT_EQ(want.size(), y.size());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "output " << i;
  }
}

// ---- the pools' window taps ---------------------------------------------------------------------

TEST(CudaPoolTaps, EveryTapCountedInsideAndInThePaddedInput) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int64_t> small(1, 4), pad(0, 3), in(1, 9);
  for (int trial = 0; trial < 400; ++trial) {
    Window3 w;
    w.in[2] = in(rng), w.k[2] = small(rng), w.s[2] = small(rng), w.dil[2] = small(rng);
    w.pb[2] = pad(rng), w.pe[2] = pad(rng);
    for (int64_t o = 0; o < 6; ++o) {
      const Taps t = window_taps(w, 2, o);
      int64_t inside = 0, padded = 0;
      for (int64_t j = 0; j < w.k[2]; ++j) {
        const int64_t idx = o * w.s[2] - w.pb[2] + j * w.dil[2];
        const bool is_in = idx >= 0 && idx < w.in[2];
        inside += is_in;
        padded += idx >= -w.pb[2] && idx < w.in[2] + w.pe[2];
        if (is_in) {
          EXPECT_TRUE(j >= t.j0 && j < t.j1) << "tap " << j << " of output " << o;
        }
      }
      EXPECT_EQ(t.j1 - t.j0, inside) << "output " << o;
      EXPECT_EQ(t.padded, padded) << "output " << o;
    }
  }
}

// ---- the fused activations ----------------------------------------------------------------------

TEST(CudaConvActivation, MatchesTheFormulasInDouble) {
  const std::vector<float> xs = {-7.5f, -3.0f, -1.0f, -0.25f, 0.0f, 0.4f, 1.0f, 2.9f, 3.0f, 6.5f};
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    ConvActParams act;
    double (*f)(double, double, double);
  };
  const std::vector<Case> cases = {
      {{ConvAct::kNone, 0, 0}, [](double v, double, double) { return v; }},
      {{ConvAct::kRelu, 0, 0}, [](double v, double, double) { return v < 0 ? 0 : v; }},
      {{ConvAct::kSigmoid, 0, 0}, [](double v, double, double) { return 1 / (1 + std::exp(-v)); }},
      {{ConvAct::kClip, 0.0f, 6.0f},
       [](double v, double a, double b) { return std::min(std::max(v, a), b); }},
      {{ConvAct::kClip, -1.0f, static_cast<float>(inf)},
       [](double v, double a, double b) { return std::min(std::max(v, a), b); }},
      {{ConvAct::kHardSigmoid, 0.2f, 0.5f},
       [](double v, double a, double b) { return std::min(std::max(a * v + b, 0.0), 1.0); }},
      {{ConvAct::kHardSwish, 0, 0},
       [](double v, double, double) { return v * std::min(std::max(v / 6 + 0.5, 0.0), 1.0); }},
  };
  for (const Case& c : cases)
    for (float v : xs)
      EXPECT_NEAR(conv_activate(v, c.act), c.f(v, c.act.a, c.act.b), 1e-6)
          << "kind " << static_cast<int>(c.act.kind) << " at " << v;
  // ReLU and Clip keep NaN, as the standalone ops do.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(conv_activate(nan, {ConvAct::kRelu, 0, 0})));
  EXPECT_TRUE(std::isnan(conv_activate(nan, {ConvAct::kClip, 0.0f, 6.0f})));
}

TEST(CudaConvActivation, ReadFromTheNodesAttributes) {
  const ir::ConvActivation clip =
      ir::conv_activation(make_node("Conv", 2, 1,
                                    attrs_of({{"activation", std::string("clip")},
                                              {"activation_min", 0.0},
                                              {"activation_max", 6.0}})));
  const ConvActParams p = conv_act_params(clip);
  EXPECT_EQ(p.kind, ConvAct::kClip);
  EXPECT_EQ(p.a, 0.0f);
  EXPECT_EQ(p.b, 6.0f);
  const ir::Node hardswish =
      make_node("Conv", 2, 1, attrs_of({{"activation", std::string("hardswish")}}));
  EXPECT_EQ(conv_act_params(ir::conv_activation(hardswish)).kind, ConvAct::kHardSwish);
  EXPECT_EQ(conv_act_params(ir::conv_activation(make_node("Conv", 2, 1, {}))).kind, ConvAct::kNone);
}

}  // namespace
