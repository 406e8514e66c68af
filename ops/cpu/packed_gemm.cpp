// Packed-B sgemm with AVX-512 and AVX2 + FMA micro-kernels (Goto/BLIS structure, B packed once):
// one micro-kernel, gemm_micro-inl.h, written over Highway and instantiated for each level with
// the block shapes its registers allow (below).
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
//  * The micro-kernel is kMr x 32: 14 rows x 2 zmm = 28 accumulators + 2 B registers + 1 A
//    broadcast (a vbroadcastss from L1 that both of the row's FMAs read): 31 of the 32 zmm. Fewer
//    rows (edges, small m) use the same template with fewer rows; when that leaves fewer than 8
//    independent accumulators (4-cycle FMA latency x 2 FMA ports) the K loop is split over several
//    accumulator sets, summed at the end, so a GEMV still issues two FMAs per cycle.
//
// The AVX2 path (16 ymm registers) reads the same panels. Its micro-kernel is 6 x 16: 6 rows x 2
// ymm = 12 accumulators + 2 B registers + 1 A broadcast, run on each 16-column half of a panel
// (B row stride = the panel width). Blocks of 1 or 2 rows (a GEMV) take the whole 32-column panel
// at once (4 ymm per row), so B streams sequentially, and split K over accumulator sets to keep 8
// FMA chains in flight (Zen 3: 4-cycle FMA latency, 2 FMA pipes). Its A block is at most 6 x 512
// floats (12 KiB, in the 32 KiB L1d), and the panels one row block sweeps take up to 256 KiB of
// the 512 KiB per-core L2 of a Zen 3.
#include "ops/cpu/packed_gemm.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <utility>

#include "ops/cpu/avx512.h"
#include "ops/cpu/gemm_micro.h"  // first of the Highway headers
#include "ops/cpu/blas.h"
#include "ops/cpu/kernel_util.h"
#include "ops/cpu/math.h"
#include "ops/cpu/parallel.h"
#include "ops/cpu/transpose.h"
#include "ops/cpu/vector_math.h"

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
// Rows per thread from which C is split by rows rather than by columns.
constexpr int64_t kRowsPerThreadForRowSplit = 32;

// The AVX2 path: rows per micro-kernel, its A buffer (6 rows of up to 512 columns, padded as
// above) and its L2 share (Zen 3: 512 KiB per core).
constexpr int kMr2 = 6;
constexpr int64_t kABufFloats2 = kMr2 * (512 + 16);
constexpr int64_t kL2BudgetBytes2 = 256 << 10;
static_assert(kABufFloats2 <= kABufFloats, "one stack buffer serves both paths");

// Row stride (floats) of an A buffer of buf floats for an R-row block: a multiple of 16 plus 16.
constexpr int64_t a_stride(int rows, int64_t buf = kABufFloats) {
  return (buf / rows - 16) / 16 * 16 + 16;
}
// Longest kc an R-row block takes.
constexpr int64_t max_kc(int rows, int64_t buf = kABufFloats) {
  return a_stride(rows, buf) - 16;
}

// ---------------------------------------------------------------------------------------------
// The micro-kernels: gemm_micro-inl.h's one template, instantiated per level for the block
// shapes that level's register budget allows (its header says what the arguments are).
using KernelFn = void (*)(int64_t kc, const float* a, int64_t a_stride, const float* b,
                          int64_t ldb, float* c, int64_t ldc, float beta, int last,
                          const float* bias);

// AVX-512: R rows (1..kMr) times one panel of NV zmm (NV = 2, or 1 for a narrow last panel).
// The A block's row stride and the panel's width are compile-time constants.
struct Avx512Kernels {
  template <int R, int NV, GemmAct ACT>
  static constexpr KernelFn get() {
    return &N_AVX3::GemmMicroKernel<R, NV, ACT, a_stride(R), 16 * NV>;
  }
};
// AVX2: blocks of 1-2 rows run whole 32-column panels (NV up to 4), wider blocks 16-column halves
// (NV up to 2); the other combinations would not fit in 16 registers and are never called. The
// strides are arguments: the BLIS path and the panel path lay A out differently.
struct Avx2Kernels {
  template <int R, int NV, GemmAct ACT>
  static constexpr KernelFn get() {
    if constexpr (R <= 2 || NV <= 2)
      return &N_AVX2::GemmMicroKernel<R, NV, ACT, 0, 0>;
    else
      return nullptr;
  }
};

// table[act][R - 1][NV - 1] of one level's kernels, in GemmAct order.
template <class K, GemmAct ACT, int R, size_t... V>
constexpr auto kernel_row(std::index_sequence<V...>) {
  return std::array<KernelFn, sizeof...(V)>{K::template get<R, static_cast<int>(V) + 1, ACT>()...};
}
template <class K, GemmAct ACT, int kNv, size_t... I>
constexpr auto kernel_rows(std::index_sequence<I...>) {
  return std::array<std::array<KernelFn, kNv>, sizeof...(I)>{
      kernel_row<K, ACT, static_cast<int>(I) + 1>(std::make_index_sequence<kNv>{})...};
}
template <class K, int kRows, int kNv>
constexpr auto kernel_table() {
  constexpr auto rows = std::make_index_sequence<kRows>{};
  return std::array{kernel_rows<K, GemmAct::kNone, kNv>(rows),
                    kernel_rows<K, GemmAct::kRelu, kNv>(rows),
                    kernel_rows<K, GemmAct::kGelu, kNv>(rows),
                    kernel_rows<K, GemmAct::kGeluTanh, kNv>(rows),
                    kernel_rows<K, GemmAct::kTanh, kNv>(rows),
                    kernel_rows<K, GemmAct::kSigmoid, kNv>(rows)};
}
constexpr auto kKernels = kernel_table<Avx512Kernels, kMr, 2>();
constexpr auto kKernels2 = kernel_table<Avx2Kernels, kMr2, 4>();

// One R-row block times one panel (`width` floats per row, `valid` columns used) on AVX2.
void panel_avx2(GemmAct act, int r, int64_t kc, const float* abuf, const float* panel,
                int64_t width, int64_t valid, float* c, int64_t ldc, float beta,
                const float* bias) {
  const auto& table = kKernels2[static_cast<int>(act)][r - 1];
  const int64_t step = r <= 2 ? width : 16;  // whole panel, or its 16-column halves
  for (int64_t h = 0; h < valid; h += step) {
    const int64_t cols = std::min(step, valid - h);
    const int64_t nv = (cols + 7) / 8;
    table[nv - 1](kc, abuf, a_stride(r, kABufFloats2), panel + h, width, c + h, ldc, beta,
                  static_cast<int>(cols - 8 * (nv - 1)), bias ? bias + h : nullptr);
  }
}

// Copies rows [i0, i0 + rows) x columns [p0, p0 + kc) of op(A), op(A)[i][p] = a[i * rs + p * cs],
// times alpha, into buf (row r at buf + r * stride). Only the panel paths pack A: isa is a vector
// level. The k-major case (A stored k x m: a conv's im2col tile, a pointwise conv's input) goes
// in 8 x 8 in-register transposes; the rows and columns past the last whole block one float at a
// time.
void pack_a(Isa isa, const float* a, int64_t rs, int64_t cs, int64_t i0, int rows, int64_t p0,
            int64_t kc, float alpha, float* __restrict buf, int64_t stride) {
  if (cs == 1) {
    for (int r = 0; r < rows; ++r) {
      const float* __restrict src = a + (i0 + r) * rs + p0;
      float* __restrict dst = buf + r * stride;
      for (int64_t p = 0; p < kc; ++p) dst[p] = alpha * src[p];
    }
  } else if (rs == 1 && rows >= 8 && kc >= 8) {
    transpose_blocks8(isa, a + p0 * cs + i0, cs, kc, rows, alpha, buf, stride);
    const int r8 = rows / 8 * 8;
    const int64_t k8 = kc / 8 * 8;
    for (int64_t p = 0; p < kc; ++p) {
      const float* __restrict src = a + (p0 + p) * cs + i0;
      for (int r = p < k8 ? r8 : 0; r < rows; ++r) buf[r * stride + p] = alpha * src[r];
    }
  } else if (rs == 1) {
    // A stored k x m: each row of storage holds one column of op(A) for all rows of the block.
    for (int64_t p = 0; p < kc; ++p) {
      const float* __restrict src = a + (p0 + p) * cs + i0;
      for (int r = 0; r < rows; ++r) buf[r * stride + p] = alpha * src[r];
    }
  } else {
    for (int r = 0; r < rows; ++r)
      for (int64_t p = 0; p < kc; ++p)
        buf[r * stride + p] = alpha * a[(i0 + r) * rs + (p0 + p) * cs];
  }
}

int64_t panel_count(int64_t n) {
  return (n + kNr - 1) / kNr;
}

// Where a panel's row p0 starts: panels are 32 wide except a last one of <= 16 columns.
const float* panel_at(const PanelsView& b, int64_t j, int64_t p0) {
  const int64_t width = b.n - j * kNr > 16 ? kNr : 16;
  return b.data + j * kNr * b.k_stride + (b.k0 + p0) * width;
}

// AVX2 with 3 rows or more: the loop order of BLIS, not the one above. With 16 ymm registers the
// 6 x 16 tile reads two B vectors per six broadcasts, so streaming B from L2 for every 6-row block
// (as the AVX-512 order does) left the FMAs waiting on B: 67 GFLOP/s at 512^3 on a Zen 3 whose
// FMA peak is 95. Here a K block of kKc2 is packed for up to kMc2 rows of A at once (96 KiB: it
// stays in L2), and each 16-column half panel of B (kKc2 x 16 floats, 16 KiB: it stays in L1)
// is multiplied by every 6-row block of them in turn, so B comes from L1 and only the 6 A
// elements per step come from L2.
constexpr int64_t kKc2 = 256;
constexpr int64_t kMc2 = 96;
constexpr int64_t kAStride2 = kKc2 + 16;  // floats between the packed rows (+16: no L1 set aliasing)
constexpr int64_t kABufFloatsBlis = kMc2 * kAStride2;

void gemm_chunk_avx2(int64_t m0, int64_t m1, int64_t j0, int64_t j1, float alpha, const float* a,
                     int64_t rs, int64_t cs, const PanelsView& b, float beta, float* c, int64_t ldc,
                     const GemmEpilogue& ep, float* abuf) {
  const int64_t k = b.k, n = b.n;
  const int64_t kblocks = (k + kKc2 - 1) / kKc2;
  const int64_t kc_even = (k + kblocks - 1) / kblocks;
  for (int64_t i0 = m0; i0 < m1; i0 += kMc2) {
    const int64_t mc = std::min(kMc2, m1 - i0);
    const int64_t blocks = (mc + kMr2 - 1) / kMr2;  // 6-row blocks of nearly equal size
    for (int64_t p0 = 0; p0 < k; p0 += kc_even) {
      const int64_t kc = std::min(kc_even, k - p0);
      pack_a(Isa::kAvx2, a, rs, cs, i0, static_cast<int>(mc), p0, kc, alpha, abuf, kAStride2);
      // The first K block applies beta; the later ones accumulate onto it; the last one applies
      // the epilogue.
      const float blk_beta = p0 == 0 ? beta : 1.0f;
      const bool last = p0 + kc >= k;
      const auto& kernels = kKernels2[static_cast<int>(last ? ep.act : GemmAct::kNone)];
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t col = j * kNr;
        const int64_t valid = std::min(kNr, n - col);
        const int64_t width = valid > 16 ? kNr : 16;
        const float* panel = panel_at(b, j, p0);
        for (int64_t h = 0; h < valid; h += 16) {
          const int64_t cols = std::min<int64_t>(16, valid - h);
          const int64_t nv = (cols + 7) / 8;
          const float* bias = last && ep.bias ? ep.bias + col + h : nullptr;
          int64_t r0 = 0;
          for (int64_t blk = 0; blk < blocks; ++blk) {
            const int r = static_cast<int>(mc / blocks + (blk < mc % blocks ? 1 : 0));
            kernels[r - 1][nv - 1](kc, abuf + r0 * kAStride2, kAStride2, panel + h, width,
                                   c + (i0 + r0) * ldc + col + h, ldc, blk_beta,
                                   static_cast<int>(cols - 8 * (nv - 1)), bias);
            r0 += r;
          }
        }
      }
    }
  }
}

// Rows [m0, m1) x panels [j0, j1), the panels small enough to stay in L2, on b.isa's kernels.
void gemm_chunk(int64_t m0, int64_t m1, int64_t j0, int64_t j1, float alpha, const float* a,
                int64_t rs, int64_t cs, const PanelsView& b, float beta, float* c, int64_t ldc,
                const GemmEpilogue& ep, float* abuf) {
  const bool avx2 = b.isa == Isa::kAvx2;
  const int mr = avx2 ? kMr2 : kMr;
  const int64_t buf = avx2 ? kABufFloats2 : kABufFloats;
  const int64_t k = b.k, n = b.n;
  // Row blocks of nearly equal size (64 rows -> 13,13,13,13,12 rather than 14,14,14,14,8).
  const int64_t rows = m1 - m0;
  const int64_t blocks = (rows + mr - 1) / mr;
  int64_t i0 = m0;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int r = static_cast<int>(rows / blocks + (blk < rows % blocks ? 1 : 0));
    const int64_t kc_max = max_kc(r, buf);
    const int64_t kblocks = (k + kc_max - 1) / kc_max;
    const int64_t kc_even = (k + kblocks - 1) / kblocks;
    for (int64_t p0 = 0; p0 < k; p0 += kc_even) {
      const int64_t kc = std::min(kc_even, k - p0);
      pack_a(b.isa, a, rs, cs, i0, r, p0, kc, alpha, abuf, a_stride(r, buf));
      // The first K block applies beta; the later ones accumulate onto it; the last one applies
      // the epilogue.
      const float blk_beta = p0 == 0 ? beta : 1.0f;
      const bool last = p0 + kc >= k;
      const GemmAct act = last ? ep.act : GemmAct::kNone;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t col = j * kNr;
        const int64_t valid = std::min(kNr, n - col);
        const float* bias = last && ep.bias ? ep.bias + col : nullptr;
        if (avx2) {
          panel_avx2(act, r, kc, abuf, panel_at(b, j, p0), valid > 16 ? kNr : 16, valid,
                     c + i0 * ldc + col, ldc, blk_beta, bias);
          continue;
        }
        const int nv = valid > 16 ? 2 : 1;
        kKernels[static_cast<int>(act)][r - 1][nv - 1](
            kc, abuf, a_stride(r), panel_at(b, j, p0), 16 * nv, c + i0 * ldc + col, ldc, blk_beta,
            static_cast<int>(valid - 16 * (nv - 1)), bias);
      }
    }
    i0 += r;
  }
}

// Rows [m0, m1) x panels [j0, j1) of C, on the calling thread.
void gemm_block(int64_t m0, int64_t m1, int64_t j0, int64_t j1, float alpha, const float* a,
                int64_t rs, int64_t cs, const PanelsView& b, float beta, float* c, int64_t ldc,
                const GemmEpilogue& ep) {
  if (b.isa == Isa::kAvx2 && m1 - m0 > 2) {
    alignas(64) float abuf2[kABufFloatsBlis];
    gemm_chunk_avx2(m0, m1, j0, j1, alpha, a, rs, cs, b, beta, c, ldc, ep, abuf2);
    return;
  }
  alignas(64) float abuf[kABufFloats];
  // Every row block streams all the panels it multiplies from L2, so take them in chunks that
  // fit there (the A block is re-copied per chunk, a small cost next to the FLOPs it feeds).
  const int64_t budget = b.isa == Isa::kAvx2 ? kL2BudgetBytes2 : kL2BudgetBytes;
  const int64_t panel_bytes = std::max<int64_t>(1, b.k * kNr * static_cast<int64_t>(sizeof(float)));
  const int64_t chunk_max = std::max<int64_t>(1, budget / panel_bytes);
  const int64_t chunks = (j1 - j0 + chunk_max - 1) / chunk_max;
  for (int64_t ch = 0; ch < chunks; ++ch) {
    const int64_t cj0 = j0 + (j1 - j0) * ch / chunks, cj1 = j0 + (j1 - j0) * (ch + 1) / chunks;
    gemm_chunk(m0, m1, cj0, cj1, alpha, a, rs, cs, b, beta, c, ldc, ep, abuf);
  }
}

// The portable path: op(B) row-major, through OpenBLAS (or plain loops when op(A) has no unit
// stride, which BLAS cannot describe).
void plain_gemm(int64_t m, float alpha, const float* a, int64_t rs, int64_t cs, const PanelsView& b,
                float beta, float* c, int64_t ldc) {
  const float* bp = b.data + b.k0 * b.k_stride;
  if (cs == 1 || rs == 1) {
    sgemm(rs == 1 && cs != 1, false, m, b.n, b.k, alpha, a, cs == 1 ? rs : cs, bp, b.k_stride, beta,
          c, ldc);
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    float* crow = c + i * ldc;
    for (int64_t j = 0; j < b.n; ++j) crow[j] = beta == 0.0f ? 0.0f : beta * crow[j];
    for (int64_t p = 0; p < b.k; ++p) {
      const float av = alpha * a[i * rs + p * cs];
      const float* brow = bp + p * b.k_stride;
      for (int64_t j = 0; j < b.n; ++j) crow[j] += av * brow[j];
    }
  }
}

// panel[p * width + c] = src[c * cs + p] for the whole 16 x 16 blocks of c < valid, p < k.
FUSEBOX_AVX512 void transpose_into_panel(const float* src, int64_t cs, int64_t k, int64_t valid,
                                         int64_t width, float* panel) {
  __m512 r[16];
  for (int64_t c0 = 0; c0 + 16 <= valid; c0 += 16) {
    for (int64_t p0 = 0; p0 + 16 <= k; p0 += 16) {
      for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + (c0 + i) * cs + p0);
      transpose16x16(r);
      for (int i = 0; i < 16; ++i) _mm512_storeu_ps(panel + (p0 + i) * width + c0, r[i]);
    }
  }
}

// The epilogue as a pass over rows [m0, m1) of C, for the paths that do not run the micro-kernel.
void apply_epilogue(int64_t m0, int64_t m1, int64_t n, float* c, int64_t ldc,
                    const GemmEpilogue& ep) {
  if (!ep.bias && ep.act == GemmAct::kNone) return;
  for (int64_t i = m0; i < m1; ++i) {
    float* row = c + i * ldc;
    if (ep.bias)
      for (int64_t j = 0; j < n; ++j) row[j] += ep.bias[j];
    gemm_act_span(Isa::kPortable, ep.act, row, row, n);
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
  ::operator delete (p, std::align_val_t{64});
}

std::unique_ptr<float[], PackedB::FreeAligned> PackedB::allocate(size_t floats) {
  if (floats == 0) return {};
  return std::unique_ptr<float[], FreeAligned>(
      static_cast<float*>(::operator new (floats * sizeof(float), std::align_val_t{64})));
}

PackedB::PackedB(const PackedB& other)
    : packed_(other.packed_), view_(other.view_), size_(other.size_), data_(allocate(other.size_)) {
  if (size_) std::memcpy(data_.get(), other.data_.get(), size_ * sizeof(float));
  view_.data = data_.get();
}

PackedB::PackedB(PackedB&& other) noexcept
    : packed_(std::exchange(other.packed_, false)),
      view_(std::exchange(other.view_, {})),
      size_(std::exchange(other.size_, 0)),
      data_(std::move(other.data_)) {}

PackedB& PackedB::operator=(PackedB&& other) noexcept {
  packed_ = std::exchange(other.packed_, false);
  view_ = std::exchange(other.view_, {});
  size_ = std::exchange(other.size_, 0);
  data_ = std::move(other.data_);
  return *this;
}

PackedB& PackedB::operator=(const PackedB& other) {
  if (this != &other) *this = PackedB(other);
  return *this;
}

PackedB PackedB::pack(Isa isa, const float* b, int64_t k, int64_t n, bool trans_b) {
  PackedB out;
  k = std::max<int64_t>(k, 0);
  n = std::max<int64_t>(n, 0);
  out.packed_ = true;
  out.size_ = packed_b_floats(isa, k, n);
  out.data_ = allocate(out.size_);
  out.view_ = pack_b_into(isa, out.data_.get(), b, k, n, trans_b ? 1 : n, trans_b ? k : 1);
  return out;
}

PanelLayout panel_layout(Isa isa) {
  return isa == Isa::kPortable ? PanelLayout::kPlain : PanelLayout::kPanels;
}

size_t packed_b_floats(Isa isa, int64_t k, int64_t n) {
  if (k <= 0 || n <= 0) return 0;
  // Every panel is reserved 32 wide; a narrow last panel (<= 16 columns) uses half of its slot.
  if (panel_layout(isa) == PanelLayout::kPanels)
    return static_cast<size_t>(panel_count(n) * kNr * k);
  return static_cast<size_t>(k * n);
}

PanelsView panels_view(Isa isa, const float* dst, int64_t k, int64_t n) {
  PanelsView v;
  v.data = dst;
  v.k = std::max<int64_t>(k, 0);
  v.n = std::max<int64_t>(n, 0);
  v.isa = isa;
  v.layout = panel_layout(isa);
  v.k_stride = v.layout == PanelLayout::kPanels ? v.k : v.n;
  return v;
}

PanelsView pack_b_into(Isa isa, float* dst, const float* b, int64_t k, int64_t n,
                       int64_t row_stride, int64_t col_stride) {
  const PanelsView v = panels_view(isa, dst, k, n);
  k = v.k;
  n = v.n;
  if (v.layout == PanelLayout::kPlain) {
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) dst[p * n + j] = b[p * row_stride + j * col_stride];
    return v;
  }
  const int64_t panels = panel_count(n);
  for (int64_t j = 0; j < panels; ++j) {
    const int64_t col = j * kNr;
    const int64_t width = n - col > 16 ? kNr : 16;
    const int64_t valid = std::min(width, n - col);
    float* __restrict panel = dst + j * kNr * k;
    if (col_stride == 1) {  // rows of op(B) are contiguous: copy them
      for (int64_t p = 0; p < k; ++p) {
        const float* __restrict src = b + p * row_stride + col;
        float* __restrict out = panel + p * width;
        for (int64_t c = 0; c < valid; ++c) out[c] = src[c];
        for (int64_t c = valid; c < width; ++c) out[c] = 0.0f;
      }
    } else {  // columns of op(B) are its rows in memory (K read as K^T): transpose
      int64_t done_cols = 0, done_rows = 0;
      if (row_stride == 1 && isa == Isa::kAvx512) {
        transpose_into_panel(b + col * col_stride, col_stride, k, valid, width, panel);
        done_cols = valid / 16 * 16;
        done_rows = k / 16 * 16;
      } else if (row_stride == 1 && isa == Isa::kAvx2) {
        transpose_blocks8(isa, b + col * col_stride, col_stride, valid, k, 1.0f, panel, width);
        done_cols = valid / 8 * 8;
        done_rows = k / 8 * 8;
      }
      for (int64_t c = 0; c < valid; ++c) {  // what the 16 x 16 / 8 x 8 blocks did not cover
        const float* __restrict src = b + (col + c) * col_stride;
        for (int64_t p = c < done_cols ? done_rows : 0; p < k; ++p)
          panel[p * width + c] = src[p * row_stride];
      }
      for (int64_t p = 0; p < k; ++p)
        for (int64_t c = valid; c < width; ++c) panel[p * width + c] = 0.0f;
    }
  }
  return v;
}

PanelsView PanelsView::rows(int64_t p0, int64_t count) const {
  PanelsView v = *this;
  v.k0 += p0;
  v.k = count;
  return v;
}

PanelsView PanelsView::cols(int64_t j0, int64_t count) const {
  PanelsView v = *this;
  v.data += layout == PanelLayout::kPanels ? j0 * k_stride : j0;  // j0 / 32 panels of 32 * k_stride
  v.n = count;
  return v;
}

void sgemm_panels(int64_t m, float alpha, const float* a, int64_t a_row_stride,
                  int64_t a_col_stride, const PanelsView& b, float beta, float* c, int64_t ldc,
                  const GemmEpilogue& ep) {
  if (m <= 0 || b.n <= 0) return;
  if (b.k == 0 || alpha == 0.0f) {
    scale_c(m, b.n, beta, c, ldc);
    apply_epilogue(0, m, b.n, c, ldc, ep);
    return;
  }
  if (b.layout == PanelLayout::kPlain) {
    plain_gemm(m, alpha, a, a_row_stride, a_col_stride, b, beta, c, ldc);
    apply_epilogue(0, m, b.n, c, ldc, ep);
    return;
  }
  gemm_block(0, m, 0, panel_count(b.n), alpha, a, a_row_stride, a_col_stride, b, beta, c, ldc, ep);
}

void packed_sgemm(int64_t m, float alpha, const float* a, int64_t lda, bool trans_a,
                  const PackedB& packed, float beta, float* c, int64_t ldc,
                  const GemmEpilogue& ep) {
  const PanelsView& b = packed.view();
  const int64_t n = b.n, k = b.k;
  if (m <= 0 || n <= 0) return;
  if (k == 0 || alpha == 0.0f) {
    scale_c(m, n, beta, c, ldc);
    apply_epilogue(0, m, n, c, ldc, ep);
    return;
  }
  if (b.layout == PanelLayout::kPlain) {
    GemmShape g;
    g.trans_a = trans_a;
    g.m = m;
    g.n = n;
    g.k = k;
    g.alpha = alpha;
    g.lda = lda;
    g.ldb = n;
    g.ldc = ldc;
    sgemm_many(
        g, 1, beta, [&](int64_t) { return a; }, [&](int64_t) { return b.data; },
        [&](int64_t) { return c; });
    parallel_for(m, std::max<int64_t>(1, kGrainMath / std::max<int64_t>(n, 1)),
                 [&](int64_t i0, int64_t i1) { apply_epilogue(i0, i1, n, c, ldc, ep); });
    return;
  }
  const int64_t rs = trans_a ? 1 : lda, cs = trans_a ? lda : 1;

  // Threads: a grid of tn column groups x tm row groups. With enough rows for every thread, rows
  // are split: each thread writes whole rows of C, the rows the element-wise ops and
  // normalizations after it read on the same thread (they split by rows too), so their inputs are
  // in that core's cache, not the other's. With fewer rows (a GEMV), columns are split: each
  // thread streams its own share of the weight, which also makes m == 1 use both cores.
  const int64_t panels = panel_count(n);
  // Its one-core time: the FLOPs at the GEMM rate, or, with few rows (a GEMV), the packed weight
  // streamed at memory speed, whichever is longer.
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double weight_bytes = 4.0 * static_cast<double>(n) * static_cast<double>(k);
  int nt = threads_for(std::max(flops / kGemmFlopsPerUs, weight_bytes / kWeightBytesPerUs));
  int tn = static_cast<int>(std::min<int64_t>(nt, panels));
  if (m >= nt * kRowsPerThreadForRowSplit) tn = 1;
  while (nt % tn) --tn;
  const int tm = static_cast<int>(std::min<int64_t>(nt / tn, m));
  nt = tn * tm;
  auto task = [&](int64_t t) {
    const int64_t tj = t % tn, ti = t / tn;
    const int64_t j0 = panels * tj / tn, j1 = panels * (tj + 1) / tn;
    const int64_t m0 = m * ti / tm, m1 = m * (ti + 1) / tm;
    if (j0 < j1 && m0 < m1) gemm_block(m0, m1, j0, j1, alpha, a, rs, cs, b, beta, c, ldc, ep);
  };
  if (nt == 1) {
    run_inline(1, [&](int64_t, int64_t) { task(0); });  // noted as worker 0 while recording
    return;
  }
  parallel_for_team(nt, nt, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) task(t);
  });
}

}  // namespace fusebox::cpu
