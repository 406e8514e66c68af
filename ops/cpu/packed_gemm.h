#pragma once
// packed_sgemm: single-precision GEMM against a constant B ("the weight") packed once, at prepare
// time, into the layout our AVX-512 micro-kernel streams. Why not OpenBLAS: on this fleet
// OPENBLAS_CORETYPE=Haswell is forced (older OpenBLAS misbehaves on Sapphire Rapids), so BLAS
// runs its AVX2 kernels, and it repacks B on every call. This path uses zmm registers and packs B
// only once.
//
// When the CPU has no AVX-512 (or the build is portable and runs elsewhere) PackedB keeps a plain
// row-major copy of op(B) and packed_sgemm calls OpenBLAS through sgemm_many (blas.h), so callers
// never need two code paths.
//
// packed_sgemm never allocates: A is packed into a fixed-size buffer on the stack.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace fusebox::cpu {

// op(B) is K x N. trans_b = false: B stored K x N row-major; trans_b = true: B stored N x K
// row-major (an nn.Linear weight [out, in]).
class PackedB {
 public:
  PackedB() = default;
  PackedB(const PackedB& other);
  PackedB& operator=(const PackedB& other);
  PackedB(PackedB&& other) noexcept;  // leaves other empty
  PackedB& operator=(PackedB&& other) noexcept;
  ~PackedB() = default;

  // Allocates and fills the panels. b may be null only when k * n == 0.
  static PackedB pack(const float* b, int64_t k, int64_t n, bool trans_b);

  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // True when nothing was packed (default-constructed or moved-from).
  bool empty() const { return !packed_; }

  // Layout details, for packed_sgemm.
  // kPanels: ceil(n / 32) panels of 32 columns (the last one 16 wide when n % 32 is in 1..16),
  // each k rows of its width, contiguous, zero-padded past n. kPlain: op(B) row-major, k x n.
  enum class Layout { kPanels, kPlain };
  Layout layout() const { return layout_; }
  const float* data() const { return data_.get(); }
  size_t size() const { return size_; }  // floats held

 private:
  struct FreeAligned {
    void operator()(float* p) const;
  };
  static std::unique_ptr<float[], FreeAligned> allocate(size_t floats);

  int64_t k_ = 0, n_ = 0;
  bool packed_ = false;
  Layout layout_ = Layout::kPlain;
  size_t size_ = 0;
  std::unique_ptr<float[], FreeAligned> data_;  // 64-byte aligned
};

// C[m x n] = alpha op(A)[m x k] B + beta C, with k and n those of b. A row-major with leading
// dim lda (trans_a: A stored k x m); C row-major with leading dim ldc. beta == 0 never reads C.
// Inside an OpenMP parallel region it runs on the calling thread only; otherwise it splits the
// work over parallel_for: by column panels of B (each thread streams its own share of the
// weight, which also makes m == 1 use both cores) and by rows of A when there are too few panels.
void packed_sgemm(int64_t m, float alpha, const float* a, int64_t lda, bool trans_a,
                  const PackedB& b, float beta, float* c, int64_t ldc);

// True when the AVX-512 path runs on this CPU.
bool packed_gemm_available();

namespace detail {
// Tests only: pretend the CPU lacks AVX-512 (affects packs made afterwards) so the portable path
// can be exercised on this machine. Not thread-safe; never call it outside tests.
void force_portable_gemm(bool on);
}  // namespace detail

}  // namespace fusebox::cpu
