#pragma once
// sgemm: cblas_sgemm for row-major matrices, safe at the edges BLAS does not like: a zero m or
// n is a no-op, a zero k is C = beta C (no BLAS call, whose lda would be 0), and leading dims
// are at least 1 (BLAS rejects 0 and prints an error instead of computing). Sizes must fit a
// BLAS int: check with fits_blas_int() in prepare.
//
// sgemm_many: a batch of same-shaped sgemms threaded by us, not by OpenBLAS. OpenBLAS 0.3.21's
// own threaded driver mallocs its job table (512 KiB) on every call, and kernels must not
// allocate in run(). Called from inside an active OpenMP parallel region OpenBLAS runs
// single-threaded and allocates nothing after warm-up, so we split the work ourselves: whole
// matrices per thread when there are enough of them, else blocks of rows (or columns) of each.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ops/cpu/parallel.h"

namespace fusebox::cpu {

inline bool fits_blas_int(int64_t v) {
  return v >= 0 && v <= std::numeric_limits<blasint>::max();
}

// C[m,n] = alpha op(A)[m,k] op(B)[k,n] + beta C. lda/ldb/ldc are the row lengths of A, B, C as
// stored (before op).
inline void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                  const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                  int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      if (beta == 0.0f) {
        std::fill(row, row + n, 0.0f);
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] *= beta;
      }
    }
    return;
  }
  auto bi = [](int64_t v) { return static_cast<blasint>(std::max<int64_t>(v, 1)); };
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), alpha, a, bi(lda), b, bi(ldb), beta, c, bi(ldc));
}

struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  int64_t lda = 0, ldb = 0, ldc = 0;
};

// One core's sgemm rate, in FLOPs per microsecond, for sizing teams (threads_for): about what
// model-sized products reach here (`fusebox machine` measures the 512 x 512 one at ~200 GFLOP/s).
inline constexpr double kGemmFlopsPerUs = 150000;
// One core's rate streaming a weight it cannot keep in cache, in bytes per microsecond: about the
// roofline's memory bandwidth here (`fusebox machine`: ~40 GB/s). What bounds a GEMV.
inline constexpr double kWeightBytesPerUs = 40000;

// For i in [0, count): C_i = alpha op(A_i) op(B_i) + beta C_i, with A_i = a_of(i) etc.
template <typename AOf, typename BOf, typename COf>
void sgemm_many(const GemmShape& g, int64_t count, float beta, AOf&& a_of, BOf&& b_of, COf&& c_of) {
  if (count <= 0 || g.m == 0 || g.n == 0) return;
  // One block of output rows [r0, r1) x columns [c0, c1) of matrix i.
  auto block = [&](int64_t i, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const float* a = a_of(i) + (g.trans_a ? r0 : r0 * g.lda);
    const float* b = b_of(i) + (g.trans_b ? c0 * g.ldb : c0);
    float* c = c_of(i) + r0 * g.ldc + c0;
    sgemm(g.trans_a, g.trans_b, r1 - r0, c1 - c0, g.k, g.alpha, a, g.lda, b, g.ldb, beta, c, g.ldc);
  };
  const double mnk = static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k);
  const int threads = threads_for(2.0 * mnk * static_cast<double>(count) / kGemmFlopsPerUs);
  if (threads == 1) {
    // A team of one. Outside a parallel region OpenBLAS would thread a large product itself (and
    // malloc): the calling thread's thread count is 1 for these calls.
    const int saved = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (saved > 1) omp_set_num_threads(1);
    run_inline(count, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) block(i, 0, g.m, 0, g.n);
    });
    if (saved > 1) omp_set_num_threads(saved);
    return;
  }
  // Enough pieces for every thread: each matrix in `parts` blocks along its longer output side.
  const bool by_rows = g.m >= g.n;
  const int64_t extent = by_rows ? g.m : g.n;
  int64_t parts = count >= threads ? 1 : std::min<int64_t>(extent, (threads + count - 1) / count);
  const int64_t size = (extent + parts - 1) / parts;
  parts = (extent + size - 1) / size;
  parallel_for_team(count * parts, threads, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t i = u / parts, lo = (u % parts) * size, hi = std::min(extent, lo + size);
      if (by_rows) {
        block(i, lo, hi, 0, g.n);
      } else {
        block(i, 0, g.m, lo, hi);
      }
    }
  });
}

}  // namespace fusebox::cpu
