// packed_sgemm against a double-precision reference loop: many shapes (edges of the 14 x 32
// micro-kernel, K blocking, the model shapes), trans_a / trans_b, alpha != 1, beta 0 over a C
// full of NaN (must not leak) and beta != 0, leading dims longer than the rows (the padding of A
// holds NaN, that of C a sentinel that must survive), at 1 and 2 threads, on every Isa this CPU
// runs (AVX-512 14 x 32 and AVX2 6 x 16 micro-kernels over the same panels, portable OpenBLAS).
#include "ops/cpu/packed_gemm.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <tuple>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace fusebox::cpu {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kSentinel = 12345.0f;

Isa g_isa = Isa::kPortable;  // the path the current test runs (set by the fixture)

struct Case {
  int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 0.0f;
  int64_t pad_a = 0, pad_c = 0;  // extra elements per row of A (as stored) and of C
};

std::string describe(const Case& t) {
  std::ostringstream s;
  s << "m=" << t.m << " n=" << t.n << " k=" << t.k << " trans_a=" << t.trans_a
    << " trans_b=" << t.trans_b << " alpha=" << t.alpha << " beta=" << t.beta
    << " pad_a=" << t.pad_a << " pad_c=" << t.pad_c << " threads=" << omp_get_max_threads()
    << " isa=" << isa_name(g_isa);
  return s.str();
}

// Returns true when the case passes (reports the first few bad elements otherwise).
bool check(const Case& t, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // A as stored: m x k (or k x m when trans_a), rows padded with NaN that must never be read.
  const int64_t a_rows = t.trans_a ? t.k : t.m, a_cols = t.trans_a ? t.m : t.k;
  const int64_t lda = a_cols + t.pad_a;
  std::vector<float> a(static_cast<size_t>(std::max<int64_t>(1, a_rows * lda)), kNaN);
  for (int64_t r = 0; r < a_rows; ++r)
    for (int64_t c = 0; c < a_cols; ++c) a[r * lda + c] = dist(rng);
  // B as stored: k x n (or n x k when trans_b).
  std::vector<float> b(static_cast<size_t>(std::max<int64_t>(1, t.k * t.n)));
  for (float& v : b) v = dist(rng);
  const int64_t ldc = t.n + t.pad_c;
  std::vector<float> c(static_cast<size_t>(std::max<int64_t>(1, t.m * ldc)), kSentinel);
  for (int64_t i = 0; i < t.m; ++i)
    for (int64_t j = 0; j < t.n; ++j) c[i * ldc + j] = t.beta == 0.0f ? kNaN : dist(rng);
  const std::vector<float> c0 = c;

  const PackedB packed = PackedB::pack(g_isa, b.data(), t.k, t.n, t.trans_b);
  EXPECT_EQ(packed.isa(), g_isa);
  EXPECT_EQ(packed.k(), t.k);
  EXPECT_EQ(packed.n(), t.n);
  EXPECT_FALSE(packed.empty());
  packed_sgemm(t.m, t.alpha, a.data(), lda, t.trans_a, packed, t.beta, c.data(), ldc);

  int bad = 0;
  for (int64_t i = 0; i < t.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= t.n) {  // padding of C: untouched
        if (got != kSentinel && bad++ < 3)
          ADD_FAILURE() << describe(t) << ": C padding (" << i << "," << j << ") = " << got;
        continue;
      }
      double sum = 0.0, mag = 0.0;
      for (int64_t p = 0; p < t.k; ++p) {
        const double av = t.trans_a ? a[p * lda + i] : a[i * lda + p];
        const double bv = t.trans_b ? b[j * t.k + p] : b[p * t.n + j];
        sum += av * bv;
        mag += std::abs(av * bv);
      }
      double want = t.alpha * sum;
      mag = std::abs(t.alpha) * mag;
      if (t.beta != 0.0f) {
        want += static_cast<double>(t.beta) * c0[i * ldc + j];
        mag += std::abs(static_cast<double>(t.beta) * c0[i * ldc + j]);
      }
      const double tol =
          1e-5 * std::sqrt(static_cast<double>(std::max<int64_t>(t.k, 1))) * mag + 1e-6;
      if (!(std::abs(got - want) <= tol) && bad++ < 3)
        ADD_FAILURE() << describe(t) << ": C(" << i << "," << j << ") = " << got << ", want "
                      << want << " (tol " << tol << ")";
    }
  }
  return bad == 0;
}

const std::vector<int64_t> kSizes = {1, 2, 3, 7, 15, 16, 17, 31, 33, 64, 100, 255, 257, 784};

// Every (m, n, k) from kSizes whose reference is cheap enough, each with a variant (transposes,
// alpha, beta, padding) picked from its index so all variants meet all kinds of shapes; plus the
// model shapes with every variant.
std::vector<Case> cases() {
  std::vector<Case> out;
  uint64_t idx = 0;
  for (int64_t m : kSizes) {
    for (int64_t n : kSizes) {
      for (int64_t k : kSizes) {
        if (m * n * k > 2'000'000) continue;
        Case t{m, n, k};
        const uint64_t h = idx++ * 2654435761u;
        t.trans_a = (h >> 3) & 1;
        t.trans_b = (h >> 5) & 1;
        t.beta = ((h >> 7) & 1) ? 0.0f : ((h >> 8) & 1 ? 1.0f : -0.5f);
        t.alpha = ((h >> 9) & 1) ? 1.0f : 0.75f;
        t.pad_a = ((h >> 11) & 1) ? 0 : 5;
        t.pad_c = ((h >> 12) & 1) ? 0 : 3;
        out.push_back(t);
      }
    }
  }
  const int64_t models[][3] = {{1, 512, 784},   {1, 10, 512},    {64, 512, 784},  {64, 10, 512},
                               {64, 256, 256},  {64, 1024, 256}, {64, 256, 1024}, {128, 256, 256},
                               {1, 1024, 1100}, {3, 40, 2000}};
  for (const auto& s : models) {
    for (int v = 0; v < 8; ++v) {
      Case t{s[0], s[1], s[2]};
      t.trans_a = v & 1;
      t.trans_b = (v >> 1) & 1;
      t.beta = (v >> 2) & 1 ? 1.0f : 0.0f;
      t.alpha = v == 5 ? -2.0f : 1.0f;
      t.pad_a = v == 6 ? 7 : 0;
      t.pad_c = v == 7 ? 16 : 0;
      out.push_back(t);
    }
  }
  return out;
}

// (threads, Isa): every Isa is instantiated; the ones this CPU does not run are skipped.
class PackedGemmTest : public ::testing::TestWithParam<std::tuple<int, Isa>> {
 protected:
  void SetUp() override {
    g_isa = std::get<1>(GetParam());
    if (!cpu_runs(g_isa)) GTEST_SKIP() << "this CPU does not run " << isa_name(g_isa);
    saved_threads_ = omp_get_max_threads();
    omp_set_num_threads(std::get<0>(GetParam()));
  }
  void TearDown() override { omp_set_num_threads(saved_threads_); }
  int saved_threads_ = 1;
};

TEST_P(PackedGemmTest, MatchesReference) {
  std::mt19937 rng(42);
  int failures = 0;
  for (const Case& t : cases()) {
    if (!check(t, rng) && ++failures >= 10) FAIL() << "too many failing cases";
  }
}

// A few awkward cases with fixed seeds (the panel paths also run them through MatchesReference).
TEST_P(PackedGemmTest, SelectedCasesMatchReference) {
  std::mt19937 rng(7);
  for (const Case& t : {Case{1, 10, 512}, Case{17, 33, 100, true, false, 0.5f, 0.0f, 3, 2},
                        Case{64, 256, 257, false, true, 1.0f, 1.0f, 0, 5}, Case{3, 7, 0},
                        Case{64, 512, 784, true, true, -1.0f, -0.5f, 1, 1}}) {
    EXPECT_TRUE(check(t, rng));
  }
}

// pack_b_into + sgemm_panels, as attention uses them: B packed from arbitrary strides into
// caller memory, multiplied through row and column sub-views, with A read at arbitrary strides
// (unit column stride, unit row stride, neither). C is checked against a double loop over the
// same sub-block; its padding keeps a sentinel.
bool check_views(int64_t m, int64_t k, int64_t n, int64_t b_rs, int64_t b_cs, int64_t a_rs,
                 int64_t a_cs, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float beta,
                 std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> b(static_cast<size_t>((k - 1) * b_rs + (n - 1) * b_cs + 1));
  for (float& v : b) v = dist(rng);
  std::vector<float> a(static_cast<size_t>((m - 1) * a_rs + (kc - 1) * a_cs + 1));
  for (float& v : a) v = dist(rng);
  std::vector<float, std::allocator<float>> store(packed_b_floats(g_isa, k, n) + 16);
  float* dst =
      reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(store.data()) + 63) & ~uintptr_t{63});
  const PanelsView full = pack_b_into(g_isa, dst, b.data(), k, n, b_rs, b_cs);
  EXPECT_EQ(full.isa, g_isa);
  EXPECT_EQ(full.layout, g_isa == Isa::kPortable ? PanelLayout::kPlain : PanelLayout::kPanels);
  const PanelsView view = full.rows(p0, kc).cols(j0, nc);
  const int64_t ldc = nc + 3;
  std::vector<float> c(static_cast<size_t>(m * ldc), kSentinel);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < nc; ++j) c[i * ldc + j] = beta == 0.0f ? kNaN : dist(rng);
  const std::vector<float> c0 = c;
  sgemm_panels(m, 0.5f, a.data(), a_rs, a_cs, view, beta, c.data(), ldc);
  int bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      double want = kSentinel;
      if (j < nc) {
        want = beta == 0.0f ? 0.0 : static_cast<double>(beta) * c0[i * ldc + j];
        for (int64_t p = 0; p < kc; ++p)
          want += 0.5 * static_cast<double>(a[i * a_rs + p * a_cs]) *
                  static_cast<double>(b[(p0 + p) * b_rs + (j0 + j) * b_cs]);
      }
      const double got = c[i * ldc + j];
      if (!(std::abs(got - want) <= 1e-4 + 1e-4 * std::abs(want)) && bad++ < 3)
        ADD_FAILURE() << "views m=" << m << " k=" << k << " n=" << n << " rows " << p0 << "+" << kc
                      << " cols " << j0 << "+" << nc << " a strides " << a_rs << "," << a_cs
                      << " b strides " << b_rs << "," << b_cs << ": C[" << i << "][" << j
                      << "] = " << got << ", want " << want;
    }
  return bad == 0;
}

TEST_P(PackedGemmTest, PackedViewsMatchReference) {
  {
    std::mt19937 rng(11);
    // K^T as attention packs it: K [n keys, k dims] with row stride 96 read transposed.
    EXPECT_TRUE(check_views(14, 64, 128, 1, 96, 64, 1, 0, 64, 32, 64, 0.0f, rng));
    // V: rows of 40 columns at stride 100; a row window and the last, partial panel.
    EXPECT_TRUE(check_views(9, 300, 40, 100, 1, 300, 1, 256, 44, 32, 8, 1.0f, rng));
    // A read transposed (unit row stride) and with no unit stride at all.
    EXPECT_TRUE(check_views(5, 20, 50, 50, 1, 1, 7, 3, 17, 0, 50, 0.5f, rng));
    EXPECT_TRUE(check_views(6, 20, 33, 1, 20, 40, 2, 0, 20, 0, 33, 0.0f, rng));
    // One and two rows (the AVX2 whole-panel kernels) and 12 rows (two 6-row blocks) against a
    // narrow last panel and a window of rows.
    EXPECT_TRUE(check_views(1, 70, 45, 45, 1, 70, 1, 5, 60, 0, 45, 0.0f, rng));
    EXPECT_TRUE(check_views(2, 33, 80, 1, 33, 33, 1, 0, 33, 32, 48, 1.0f, rng));
    EXPECT_TRUE(check_views(12, 64, 100, 1, 64, 64, 1, 0, 64, 0, 100, 0.0f, rng));
  }
}

// The packing itself, element by element: op(B) read transposed (unit row stride, as attention
// packs K^T; the AVX-512 path transposes 16 x 16 blocks in registers, the AVX2 path 8 x 8, the
// rest element by element) and read by rows, must land exactly (bit for bit) where the layout
// says: panels of 32 columns (16 for a narrow last one), k rows each, zero past n; or plain
// rows for the portable level. Sizes straddle the 8 and 16 blocks in both dims.
TEST_P(PackedGemmTest, PackingIsExact) {
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const bool transposed : {true, false})
    for (const int64_t k : {1, 7, 8, 9, 16, 17, 24, 33, 64, 70})
      for (const int64_t n : {1, 5, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 48, 57, 64, 100}) {
        // transposed: op(B)[p][j] = b[j * cs + p] with cs > k (rows of K with padding).
        const int64_t rs = transposed ? 1 : n + 3, cs = transposed ? k + 3 : 1;
        std::vector<float> b(static_cast<size_t>((k - 1) * rs + (n - 1) * cs + 1));
        for (float& v : b) v = dist(rng);
        std::vector<float> store(packed_b_floats(g_isa, k, n) + 16, kSentinel);
        float* dst = reinterpret_cast<float*>(
            (reinterpret_cast<uintptr_t>(store.data()) + 63) & ~uintptr_t{63});
        pack_b_into(g_isa, dst, b.data(), k, n, rs, cs);
        int bad = 0;
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) {
            const float want = b[static_cast<size_t>(p * rs + j * cs)];
            size_t at = static_cast<size_t>(p * n + j);
            if (g_isa != Isa::kPortable) {
              const int64_t panel = j / 32, col = panel * 32;
              const int64_t width = n - col > 16 ? 32 : 16;
              at = static_cast<size_t>(panel * 32 * k + p * width + (j - col));
            }
            if (!(dst[at] == want) && bad++ < 3)
              ADD_FAILURE() << (transposed ? "transposed" : "rows") << " k=" << k << " n=" << n
                            << ": packed[" << p << "][" << j << "] = " << dst[at] << ", want "
                            << want;
          }
        if (g_isa != Isa::kPortable)  // the padding columns of the last panel are zeros
          for (int64_t col = n / 32 * 32, p = 0; col < n && p < k; ++p) {
            const int64_t width = n - col > 16 ? 32 : 16;
            for (int64_t c = n - col; c < width; ++c)
              if (dst[(col / 32) * 32 * k + p * width + c] != 0.0f && bad++ < 3)
                ADD_FAILURE() << "k=" << k << " n=" << n << ": padding [" << p << "][" << c
                              << "] not zero";
          }
      }
}

// The epilogue (bias row + activation in registers) against a double loop, on shapes that split
// by rows and by columns over threads, with partial panels and K blocking (only the last K block
// may apply it), beta != 0, on both paths.
TEST_P(PackedGemmTest, EpilogueMatchesReference) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  {
    std::mt19937 rng(13);
    for (GemmAct act : {GemmAct::kNone, GemmAct::kRelu, GemmAct::kGelu, GemmAct::kGeluTanh,
                        GemmAct::kTanh, GemmAct::kSigmoid}) {
      for (auto [m, n, k] : {std::array<int64_t, 3>{128, 768, 256}, {1, 10, 784}, {70, 45, 1300},
                             {5, 33, 0}, {2, 70, 100}, {7, 19, 33}}) {
        for (float beta : {0.0f, 0.5f}) {
          std::vector<float> a(static_cast<size_t>(std::max<int64_t>(1, m * k)));
          std::vector<float> b(static_cast<size_t>(std::max<int64_t>(1, k * n)));
          std::vector<float> bias(static_cast<size_t>(n)), c(static_cast<size_t>(m * n));
          for (auto* v : {&a, &b, &bias, &c})
            for (float& x : *v) x = dist(rng);
          const std::vector<float> c0 = c;
          const PackedB packed = PackedB::pack(g_isa, b.data(), k, n, false);
          packed_sgemm(m, 1.0f, a.data(), k, false, packed, beta, c.data(), n,
                       {bias.data(), act});
          int bad = 0;
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double v = beta * static_cast<double>(c0[i * n + j]) + bias[j];
              for (int64_t p = 0; p < k; ++p)
                v += static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
              if (act == GemmAct::kRelu) v = std::max(v, 0.0);
              if (act == GemmAct::kGelu) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
              if (act == GemmAct::kGeluTanh)
                v = 0.5 * v *
                    (1.0 + std::tanh(std::sqrt(2.0 / 3.14159265358979323846) *
                                     (v + 0.044715 * v * v * v)));
              if (act == GemmAct::kTanh) v = std::tanh(v);
              if (act == GemmAct::kSigmoid) v = 1.0 / (1.0 + std::exp(-v));
              const double got = c[i * n + j];
              if (!(std::abs(got - v) <= 1e-4 + 1e-4 * std::abs(v)) && bad++ < 3)
                ADD_FAILURE() << "epilogue act " << static_cast<int>(act) << " m=" << m
                              << " n=" << n << " k=" << k << " beta=" << beta
                              << " isa=" << isa_name(g_isa) << ": C[" << i << "][" << j
                              << "] = " << got << ", want " << v;
            }
        }
      }
    }
  }
}

// NaN through the epilogue: ReLU keeps it (max(x, 0) would make it 0), and so does every other
// activation; +-inf saturate where the function does (the scalar functions of math.h agree).
TEST_P(PackedGemmTest, EpilogueKeepsNaN) {
  const int64_t m = 3, n = 20, k = 4;
  std::vector<float> a(m * k, 1.0f), b(k * n, 0.25f), bias(n, 0.0f);
  bias[0] = kNaN;
  bias[1] = std::numeric_limits<float>::infinity();
  bias[2] = -std::numeric_limits<float>::infinity();
  bias[3] = -3.0f;  // 1 - 3 = -2
  const PackedB packed = PackedB::pack(g_isa, b.data(), k, n, false);
  for (GemmAct act : {GemmAct::kRelu, GemmAct::kGelu, GemmAct::kGeluTanh, GemmAct::kTanh,
                      GemmAct::kSigmoid}) {
    std::vector<float> c(m * n, kSentinel);
    packed_sgemm(m, 1.0f, a.data(), k, false, packed, 0.0f, c.data(), n, {bias.data(), act});
    for (int64_t i = 0; i < m; ++i) {
      EXPECT_TRUE(std::isnan(c[i * n])) << static_cast<int>(act) << " " << c[i * n];
      const float pos = c[i * n + 1], neg = c[i * n + 2], minus2 = c[i * n + 3];
      if (act == GemmAct::kRelu) {
        EXPECT_EQ(pos, std::numeric_limits<float>::infinity());
        EXPECT_EQ(neg, 0.0f);
        EXPECT_EQ(minus2, 0.0f);
      } else if (act == GemmAct::kTanh) {
        EXPECT_EQ(pos, 1.0f);
        EXPECT_EQ(neg, -1.0f);
      } else if (act == GemmAct::kSigmoid) {
        EXPECT_EQ(pos, 1.0f);
        EXPECT_EQ(neg, 0.0f);
      } else {  // Gelu forms: x for +inf (-inf gives NaN, as in math.h: -inf * 0)
        EXPECT_EQ(pos, std::numeric_limits<float>::infinity());
        EXPECT_NEAR(minus2, act == GemmAct::kGelu ? -0.0455003f : -0.0454023f, 1e-5f);
      }
      EXPECT_EQ(c[i * n + 4], c[4]);  // every row the same
    }
  }
}

// Called from inside a parallel region it runs on the calling thread: each thread its own C.
// On the panel paths the result is bit-identical (the same kernel, blocking and summation order
// on every thread). On the portable path OpenBLAS may choose a different blocking (or threading)
// inside a region than outside, which changes the summation order, so there the copies must only
// agree with each other to rounding.
TEST_P(PackedGemmTest, InsideParallelRegion) {
  std::mt19937 rng(3);
  const int64_t m = 33, n = 100, k = 257;
  std::vector<float> a(m * k), b(k * n);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  const PackedB packed = PackedB::pack(g_isa, b.data(), k, n, false);
  std::vector<float> want(m * n, kNaN);
  packed_sgemm(m, 1.0f, a.data(), k, false, packed, 0.0f, want.data(), n);
  std::vector<std::vector<float>> got(4, std::vector<float>(m * n, kNaN));
#pragma omp parallel for num_threads(2)
  for (int t = 0; t < 4; ++t)
    packed_sgemm(m, 1.0f, a.data(), k, false, packed, 0.0f, got[t].data(), n);
  for (const auto& g : got) {
    if (g_isa != Isa::kPortable) {
      EXPECT_EQ(g, want);
      continue;
    }
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(g[i], want[i], 1e-4f) << i;
  }
  // And both against the double-precision reference.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double ref = 0.0;
      for (int64_t p = 0; p < k; ++p)
        ref += static_cast<double>(a[i * k + p]) * static_cast<double>(b[p * n + j]);
      EXPECT_NEAR(want[i * n + j], ref, 1e-4) << i << "," << j;
    }
}

TEST_P(PackedGemmTest, ZeroSizes) {
  // k == 0: C = beta C; beta == 0 writes zeros over NaN.
  const PackedB empty_k = PackedB::pack(g_isa, nullptr, 0, 5, false);
  EXPECT_FALSE(empty_k.empty());
  std::vector<float> c(10, kNaN);
  packed_sgemm(2, 1.0f, nullptr, 1, false, empty_k, 0.0f, c.data(), 5);
  for (float v : c) EXPECT_EQ(v, 0.0f);
  std::vector<float> d(10, 2.0f);
  packed_sgemm(2, 1.0f, nullptr, 1, false, empty_k, 0.5f, d.data(), 5);
  for (float v : d) EXPECT_EQ(v, 1.0f);
  // m == 0 and n == 0 touch nothing.
  const PackedB empty_n = PackedB::pack(g_isa, nullptr, 4, 0, true);
  packed_sgemm(3, 1.0f, nullptr, 4, false, empty_n, 0.0f, nullptr, 1);
  packed_sgemm(0, 1.0f, nullptr, 4, false, empty_k, 0.0f, nullptr, 5);
  EXPECT_TRUE(PackedB().empty());
}

TEST_P(PackedGemmTest, CopyAndMove) {
  std::vector<float> b(7 * 40);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) - 6.0f;
  PackedB p = PackedB::pack(g_isa, b.data(), 7, 40, false);
  PackedB copy = p;
  PackedB moved = std::move(p);
  EXPECT_TRUE(p.empty());  // NOLINT(bugprone-use-after-move): moved-from is documented empty
  std::vector<float> a(7, 1.0f), c1(40, kNaN), c2(40, kNaN);
  packed_sgemm(1, 1.0f, a.data(), 7, false, copy, 0.0f, c1.data(), 40);
  packed_sgemm(1, 1.0f, a.data(), 7, false, moved, 0.0f, c2.data(), 40);
  EXPECT_EQ(c1, c2);
  for (int j = 0; j < 40; ++j) {
    float want = 0.0f;
    for (int p2 = 0; p2 < 7; ++p2) want += b[p2 * 40 + j];
    EXPECT_EQ(c1[j], want) << j;
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, PackedGemmTest,
                         ::testing::Combine(::testing::Values(1, 2),
                                            ::testing::Values(Isa::kAvx512, Isa::kAvx2,
                                                              Isa::kPortable)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "threads_" +
                                  isa_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace fusebox::cpu
