// Packed-B sgemm with an AVX-512 micro-kernel (Goto/BLIS structure, B packed once).
//
// Layout and blocking:
//  * B (the weight) is packed at prepare time into panels of kNr = 32 columns (two zmm
//    registers per row of the panel), each panel K rows deep and contiguous, so the micro-kernel
//    reads B as one sequential stream that the hardware prefetcher follows from L2 (or memory for
//    m == 1, where the product is a GEMV bound by how fast the weight streams in).
//  * A is copied per call, a block of at most kMr rows by kc columns at a time, into a buffer on
//    the stack (no allocation), scaled by alpha. Its rows are a compile-time distance apart, so the
//    kernel addresses all of them from one pointer with constant displacements: no per-row
//    pointer registers, and the copy is a plain vectorised row copy (cheap next to the packing
//    transpose BLIS does, which would cost ~10% here because each A block is only reused across
//    the few panels one thread owns).
//  * The kc block (up to ~512 columns for 14 rows, ~29 KiB) stays in L1 while the kernel sweeps the
//    thread's panels, so per fused multiply-add only B comes from L2.
//  * The micro-kernel is kMr x 32: 14 rows x 2 zmm = 28 accumulators + 2 B registers, with the A
//    element folded into the FMA as an embedded broadcast: 30 of the 32 zmm registers. Fewer rows
//    (edges, small m) use the same template with fewer rows; when that leaves fewer than 8
//    independent accumulators (4-cycle FMA latency x 2 FMA ports) the K loop is split over several
//    accumulator sets, summed at the end, so a GEMV still issues two FMAs per cycle.
#include "ops/cpu/packed_gemm.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <utility>

#include "ops/cpu/blas.h"
#include "ops/cpu/parallel.h"

#define FUSEBOX_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

namespace fusebox::cpu {
namespace {

constexpr int64_t kNr = 32;  // panel width: 2 zmm
constexpr int kMr = 14;      // rows per micro-kernel: 2 * 14 accumulators + 2 for B = 30 zmm
// The A block buffer: kMr rows of up to 512 columns plus one cache line of padding per row, so
// rows 2 KiB apart do not all land in the same L1 sets. Fewer rows get proportionally longer
// rows (a GEMV takes K up to ~7000 in one block).
constexpr int64_t kABufFloats = kMr * (512 + 16);
// Share of the 2 MiB per-core L2 the panels one row block sweeps may take (the rest: A, C,
// whatever else the core touches).
constexpr int64_t kL2BudgetBytes = 1 << 20;
// Work below this many FLOPs per thread is not worth a fork/join (~1-2 us).
constexpr double kGrainFlops = 1 << 17;

bool g_force_portable = false;

bool cpu_has_avx512() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512dq") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
  return has;
}

// Row stride (floats) of the A buffer for an R-row block: a multiple of 16 plus 16.
constexpr int64_t a_stride(int rows) { return (kABufFloats / rows - 16) / 16 * 16 + 16; }
// Longest kc an R-row block takes.
constexpr int64_t max_kc(int rows) { return a_stride(rows) - 16; }

// ---------------------------------------------------------------------------------------------
// Micro-kernel: C[R x 16 NV] (+)= Abuf[R x kc] * Bpanel[kc x 16 NV].
// a: A block, row r at a + r * a_stride(R). b: panel rows of 16 NV floats, 64-byte aligned.
// beta == 0: C is written without being read. last_mask: valid columns of the last vector.
template <int R, int NV>
FUSEBOX_AVX512 void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                                 float* __restrict c, int64_t ldc, float beta,
                                 __mmask16 last_mask) {
  constexpr int64_t kW = 16 * NV;
  constexpr int64_t kAs = a_stride(R);
  // Independent accumulator sets over K, enough for 8 chains in flight.
  constexpr int kU = std::max(1, (8 + R * NV - 1) / (R * NV));
  __m512 acc[kU][R][NV];
#pragma GCC unroll 64
  for (int u = 0; u < kU; ++u)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[u][r][v] = _mm512_setzero_ps();

  int64_t p = 0;
  for (; p + kU <= kc; p += kU) {
#pragma GCC unroll 8
    for (int u = 0; u < kU; ++u) {
      const float* bp = b + (p + u) * kW;
      __m512 bv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(bp + 16 * v);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const __m512 av = _mm512_set1_ps(a[r * kAs + p + u]);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[u][r][v] = _mm512_fmadd_ps(av, bv[v], acc[u][r][v]);
      }
    }
  }
  for (; p < kc; ++p) {
    const float* bp = b + p * kW;
    __m512 bv[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(bp + 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * kAs + p]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[0][r][v] = _mm512_fmadd_ps(av, bv[v], acc[0][r][v]);
    }
  }

#pragma GCC unroll 8
  for (int u = 1; u < kU; ++u)
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[0][r][v] = _mm512_add_ps(acc[0][r][v], acc[u][r][v]);

  // Interior vectors store all 16 lanes; the last one of the panel may be partial (n % 32).
  const __m512 vbeta = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      const __mmask16 mask = v == NV - 1 ? last_mask : static_cast<__mmask16>(0xFFFF);
      __m512 x = acc[0][r][v];
      if (beta != 0.0f) x = _mm512_fmadd_ps(vbeta, _mm512_maskz_loadu_ps(mask, cr + 16 * v), x);
      _mm512_mask_storeu_ps(cr + 16 * v, mask, x);
    }
  }
}

using KernelFn = void (*)(int64_t, const float*, const float*, float*, int64_t, float, __mmask16);

template <size_t... I>
constexpr std::array<std::array<KernelFn, 2>, sizeof...(I)> make_kernels(
    std::index_sequence<I...>) {
  return {{{&micro_kernel<static_cast<int>(I) + 1, 1>,
            &micro_kernel<static_cast<int>(I) + 1, 2>}...}};
}
// kKernels[R - 1][NV - 1]
constexpr auto kKernels = make_kernels(std::make_index_sequence<kMr>{});

// Copies rows [i0, i0 + rows) x columns [p0, p0 + kc) of op(A), times alpha, into buf (row r at
// buf + r * a_stride(rows)).
void pack_a(const float* a, int64_t lda, bool trans_a, int64_t i0, int rows, int64_t p0,
            int64_t kc, float alpha, float* __restrict buf) {
  const int64_t stride = a_stride(rows);
  if (!trans_a) {
    for (int r = 0; r < rows; ++r) {
      const float* __restrict src = a + (i0 + r) * lda + p0;
      float* __restrict dst = buf + r * stride;
      for (int64_t p = 0; p < kc; ++p) dst[p] = alpha * src[p];
    }
  } else {
    // A stored k x m: each row of storage holds one column of op(A) for all rows of the block.
    for (int64_t p = 0; p < kc; ++p) {
      const float* __restrict src = a + (p0 + p) * lda + i0;
      for (int r = 0; r < rows; ++r) buf[r * stride + p] = alpha * src[r];
    }
  }
}

int64_t panel_count(int64_t n) { return (n + kNr - 1) / kNr; }

void gemm_chunk(int64_t m0, int64_t m1, int64_t j0, int64_t j1, float alpha, const float* a,
                int64_t lda, bool trans_a, const PackedB& b, float beta, float* c, int64_t ldc,
                float* abuf);

// Rows [m0, m1) x panels [j0, j1) of C, on the calling thread.
void gemm_block(int64_t m0, int64_t m1, int64_t j0, int64_t j1, float alpha, const float* a,
                int64_t lda, bool trans_a, const PackedB& b, float beta, float* c, int64_t ldc) {
  alignas(64) float abuf[kABufFloats];
  const int64_t k = b.k();
  // Every row block streams all the panels it multiplies from L2, so take them in chunks that
  // fit there (the A block is re-copied per chunk, a small cost next to the FLOPs it feeds).
  const int64_t panel_bytes = std::max<int64_t>(1, k * kNr * static_cast<int64_t>(sizeof(float)));
  const int64_t chunk_max = std::max<int64_t>(1, kL2BudgetBytes / panel_bytes);
  const int64_t chunks = (j1 - j0 + chunk_max - 1) / chunk_max;
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int64_t cj0 = j0 + (j1 - j0) * ch / chunks, cj1 = j0 + (j1 - j0) * (ch + 1) / chunks;
    gemm_chunk(m0, m1, cj0, cj1, alpha, a, lda, trans_a, b, beta, c, ldc, abuf);
  }
}

// Rows [m0, m1) x panels [j0, j1), the panels small enough to stay in L2.
void gemm_chunk(int64_t m0, int64_t m1, int64_t j0, int64_t j1, float alpha, const float* a,
                int64_t lda, bool trans_a, const PackedB& b, float beta, float* c, int64_t ldc,
                float* abuf) {
  const int64_t k = b.k(), n = b.n();
  const float* bdata = b.data();
  // Row blocks of nearly equal size (64 rows -> 13,13,13,13,12 rather than 14,14,14,14,8).
  const int64_t rows = m1 - m0;
  const int64_t blocks = (rows + kMr - 1) / kMr;
  int64_t i0 = m0;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int r = static_cast<int>(rows / blocks + (blk < rows % blocks ? 1 : 0));
    const int64_t kc_max = max_kc(r);
    const int64_t kblocks = (k + kc_max - 1) / kc_max;
    const int64_t kc_even = (k + kblocks - 1) / kblocks;
    for (int64_t p0 = 0; p0 < k; p0 += kc_even) {
      const int64_t kc = std::min(kc_even, k - p0);
      pack_a(a, lda, trans_a, i0, r, p0, kc, alpha, abuf);
      // The first K block applies beta; the later ones accumulate onto it.
      const float blk_beta = p0 == 0 ? beta : 1.0f;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t col = j * kNr;
        const int64_t valid = std::min(kNr, n - col);
        const int nv = valid > 16 ? 2 : 1;
        const int64_t tail = valid - 16 * (nv - 1);
        const auto mask = static_cast<__mmask16>(tail >= 16 ? 0xFFFF : (1u << tail) - 1);
        const float* panel = bdata + j * kNr * k + p0 * 16 * nv;
        kKernels[r - 1][nv - 1](kc, abuf, panel, c + i0 * ldc + col, ldc, blk_beta, mask);
      }
    }
    i0 += r;
  }
}

// C = beta C over m x n (k == 0 or alpha == 0); beta == 0 writes zeros without reading.
void scale_c(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (beta == 0.0f) {
      std::fill(row, row + n, 0.0f);
    } else if (beta != 1.0f) {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
void PackedB::FreeAligned::operator()(float* p) const {
  ::operator delete(p, std::align_val_t{64});
}

std::unique_ptr<float[], PackedB::FreeAligned> PackedB::allocate(size_t floats) {
  if (floats == 0) return {};
  return std::unique_ptr<float[], FreeAligned>(
      static_cast<float*>(::operator new(floats * sizeof(float), std::align_val_t{64})));
}

PackedB::PackedB(const PackedB& other)
    : k_(other.k_), n_(other.n_), packed_(other.packed_), layout_(other.layout_),
      size_(other.size_), data_(allocate(other.size_)) {
  if (size_) std::memcpy(data_.get(), other.data_.get(), size_ * sizeof(float));
}

PackedB::PackedB(PackedB&& other) noexcept
    : k_(std::exchange(other.k_, 0)), n_(std::exchange(other.n_, 0)),
      packed_(std::exchange(other.packed_, false)), layout_(other.layout_),
      size_(std::exchange(other.size_, 0)), data_(std::move(other.data_)) {}

PackedB& PackedB::operator=(PackedB&& other) noexcept {
  k_ = std::exchange(other.k_, 0);
  n_ = std::exchange(other.n_, 0);
  packed_ = std::exchange(other.packed_, false);
  layout_ = other.layout_;
  size_ = std::exchange(other.size_, 0);
  data_ = std::move(other.data_);
  return *this;
}

PackedB& PackedB::operator=(const PackedB& other) {
  if (this != &other) *this = PackedB(other);
  return *this;
}

PackedB PackedB::pack(const float* b, int64_t k, int64_t n, bool trans_b) {
  PackedB out;
  out.k_ = std::max<int64_t>(k, 0);
  out.n_ = std::max<int64_t>(n, 0);
  out.packed_ = true;
  k = out.k_;
  n = out.n_;
  // op(B)[p][j]
  auto at = [&](int64_t p, int64_t j) { return trans_b ? b[j * k + p] : b[p * n + j]; };
  if (packed_gemm_available()) {
    out.layout_ = Layout::kPanels;
    const int64_t panels = panel_count(n);
    // Every panel is reserved 32 wide; a narrow last panel (<= 16 columns) uses half of its slot.
    out.size_ = static_cast<size_t>(panels * kNr * k);
    out.data_ = allocate(out.size_);
    for (int64_t j = 0; j < panels; ++j) {
      const int64_t col = j * kNr;
      const int64_t width = n - col > 16 ? kNr : 16;
      float* dst = out.data_.get() + j * kNr * k;
      for (int64_t p = 0; p < k; ++p) {
        for (int64_t c = 0; c < width; ++c) {
          dst[p * width + c] = col + c < n ? at(p, col + c) : 0.0f;
        }
      }
      if (width < kNr) std::fill(dst + width * k, dst + kNr * k, 0.0f);
    }
  } else {
    out.layout_ = Layout::kPlain;
    out.size_ = static_cast<size_t>(k * n);
    out.data_ = allocate(out.size_);
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) out.data_[p * n + j] = at(p, j);
    }
  }
  return out;
}

bool packed_gemm_available() { return cpu_has_avx512() && !g_force_portable; }

namespace detail {
void force_portable_gemm(bool on) { g_force_portable = on; }
}  // namespace detail

void packed_sgemm(int64_t m, float alpha, const float* a, int64_t lda, bool trans_a,
                  const PackedB& b, float beta, float* c, int64_t ldc) {
  const int64_t n = b.n(), k = b.k();
  if (m <= 0 || n <= 0) return;
  if (k == 0 || alpha == 0.0f) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  if (b.layout() == PackedB::Layout::kPlain) {
    GemmShape g;
    g.trans_a = trans_a;
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = alpha;
    g.lda = lda;
    g.ldb = n;
    g.ldc = ldc;
    sgemm_many(g, 1, beta, [&](int64_t) { return a; }, [&](int64_t) { return b.data(); },
               [&](int64_t) { return c; });
    return;
  }

  // Threads: a grid of tn column groups x tm row groups. Splitting by columns first gives each
  // thread its own share of the weight (it stays in that core's L2, and a GEMV reads it twice as
  // fast); rows are split only when there are fewer panels than threads.
  const int64_t panels = panel_count(n);
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  int nt = 1;
  if (!omp_in_parallel()) {
    nt = static_cast<int>(std::min<double>(omp_get_max_threads(), std::max(1.0, flops / kGrainFlops)));
  }
  int tn = static_cast<int>(std::min<int64_t>(nt, panels));
  while (nt % tn) --tn;
  const int tm = static_cast<int>(std::min<int64_t>(nt / tn, m));
  nt = tn * tm;
  auto task = [&](int64_t t) {
    const int64_t tj = t % tn, ti = t / tn;
    const int64_t j0 = panels * tj / tn, j1 = panels * (tj + 1) / tn;
    const int64_t m0 = m * ti / tm, m1 = m * (ti + 1) / tm;
    if (j0 < j1 && m0 < m1) gemm_block(m0, m1, j0, j1, alpha, a, lda, trans_a, b, beta, c, ldc);
  };
  if (nt == 1) {
    task(0);
    return;
  }
  parallel_for(nt, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) task(t);
  });
}

}  // namespace fusebox::cpu
