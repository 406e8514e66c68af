#pragma once
// packed_sgemm: single-precision GEMM against a constant B ("the weight") packed once, at prepare
// time, into the layout our micro-kernels stream. Why not OpenBLAS: on this fleet
// OPENBLAS_CORETYPE=Haswell is forced (older OpenBLAS misbehaves on Sapphire Rapids), so BLAS
// runs its AVX2 kernels, and it repacks B on every call. These paths pack B only once and fuse
// the bias and activation into the store.
//
// Every entry point takes the Isa (isa.h) the kernel fixed in prepare; a PanelsView carries the
// Isa it was packed for and the GEMM runs that path:
//   kAvx512    14 x 32 micro-kernel on zmm registers
//   kAvx2      6 x 16 micro-kernel on ymm registers (AVX2 + FMA), over the same panels
//   kPortable  a plain row-major copy of op(B), multiplied by OpenBLAS (sgemm_many, blas.h)
// so callers never need two code paths.
//
// packed_sgemm never allocates: A is packed into a fixed-size buffer on the stack. Kernels whose
// B changes every call (attention) pack it into their planned scratch with pack_b_into and call
// sgemm_panels on the view.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ops/cpu/isa.h"
#include "ops/cpu/vector_math.h"

namespace fusebox::cpu {

// Inside the CPU GEMM: how op(B) (k x n) is laid out.
//  kPanels: (kAvx512, kAvx2) ceil(n / 32) panels of 32 columns (the last one 16 wide when n % 32 is in 1..16),
//           each holding `k_stride` rows of its width contiguously, zero-padded past n. A panel
//           slot is always 32 * k_stride floats.
//  kPlain:  (kPortable) row-major rows of length k_stride, handed to OpenBLAS.
// Both panel ISAs share one packing, so a scratch sized for one fits the other.
enum class PanelLayout { kPanels, kPlain };

// op(B) in memory someone else owns: a PackedB's, or a kernel's scratch packed every call with
// pack_b_into (attention's K and V change each call). Sub-views select rows or whole panels.
struct PanelsView {
  const float* data = nullptr;
  int64_t k = 0, n = 0;  // op(B) is k x n
  int64_t k_stride = 0;  // kPanels: rows per panel in memory; kPlain: row length
  int64_t k0 = 0;        // first row of the view inside each panel (kPlain: row index)
  PanelLayout layout = PanelLayout::kPanels;
  Isa isa = Isa::kAvx512;  // the path it was packed for (kPortable: layout kPlain)

  // op(B) rows [p0, p0 + count).
  PanelsView rows(int64_t p0, int64_t count) const;
  // Columns [j0, j0 + count): whole panels, so j0 % 32 == 0 and the view either ends on a panel
  // boundary (count % 32 == 0) or where this view ends.
  PanelsView cols(int64_t j0, int64_t count) const;
};

// The layout `isa` packs into: kPanels for kAvx512 and kAvx2, kPlain for kPortable.
PanelLayout panel_layout(Isa isa);
// Floats pack_b_into writes for a k x n op(B) for `isa`.
size_t packed_b_floats(Isa isa, int64_t k, int64_t n);
// Packs op(B)[p][j] = b[p * row_stride + j * col_stride] (p < k, j < n) for `isa` into dst, which
// holds packed_b_floats(isa, k, n) floats and is 64-byte aligned. Never allocates.
PanelsView pack_b_into(Isa isa, float* dst, const float* b, int64_t k, int64_t n,
                       int64_t row_stride, int64_t col_stride);
// The view pack_b_into returns for isa, dst, k, n, without packing (for threads that read panels
// another thread packed).
PanelsView panels_view(Isa isa, const float* dst, int64_t k, int64_t n);

// A weight packed once and owned. op(B) is K x N. trans_b = false: B stored K x N row-major;
// trans_b = true: B stored N x K row-major (an nn.Linear weight [out, in]).
class PackedB {
 public:
  PackedB() = default;
  PackedB(const PackedB& other);
  PackedB& operator=(const PackedB& other);
  PackedB(PackedB&& other) noexcept;  // leaves other empty
  PackedB& operator=(PackedB&& other) noexcept;
  ~PackedB() = default;

  // Allocates and fills the panels for `isa`. b may be null only when k * n == 0.
  static PackedB pack(Isa isa, const float* b, int64_t k, int64_t n, bool trans_b);

  int64_t k() const { return view_.k; }
  int64_t n() const { return view_.n; }
  Isa isa() const { return view_.isa; }
  // True when nothing was packed (default-constructed or moved-from).
  bool empty() const { return !packed_; }
  const PanelsView& view() const { return view_; }
  size_t size() const { return size_; }  // floats held

 private:
  struct FreeAligned {
    void operator()(float* p) const;
  };
  static std::unique_ptr<float[], FreeAligned> allocate(size_t floats);

  bool packed_ = false;
  PanelsView view_;
  size_t size_ = 0;
  std::unique_ptr<float[], FreeAligned> data_;  // 64-byte aligned
};

// What the GEMM applies to each result in registers before storing it, so that a bias and an
// activation cost no pass over C: C = act(alpha op(A) B + beta C + bias) (GemmAct: vector_math.h).
struct GemmEpilogue {
  const float* bias = nullptr;  // n floats added to every row; null: none
  GemmAct act = GemmAct::kNone;
};


// C[m x n] = alpha op(A)[m x k] B + beta C, with k and n those of b, then the epilogue. A row-major with leading
// dim lda (trans_a: A stored k x m); C row-major with leading dim ldc. beta == 0 never reads C.
// The path is the one b was packed for (b.isa()).
// Inside an OpenMP parallel region it runs on the calling thread only; otherwise it splits the
// work over parallel_for: by rows of C when every thread gets at least 32 (whole rows per thread,
// as the ops after it read them), else by column panels of B (each thread streams its own share
// of the weight, which also makes m == 1 use both cores).
void packed_sgemm(int64_t m, float alpha, const float* a, int64_t lda, bool trans_a,
                  const PackedB& b, float beta, float* c, int64_t ldc,
                  const GemmEpilogue& epilogue = {});

// The same on the calling thread, for kernels that do their own threading, with op(A)[i][p] =
// a[i * a_row_stride + p * a_col_stride] (any strides; unit ones are fastest).
void sgemm_panels(int64_t m, float alpha, const float* a, int64_t a_row_stride,
                  int64_t a_col_stride, const PanelsView& b, float beta, float* c, int64_t ldc,
                  const GemmEpilogue& epilogue = {});

}  // namespace fusebox::cpu
