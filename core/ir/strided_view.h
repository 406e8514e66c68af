#pragma once
// StridedView: where each element of a logical tensor sits in another tensor's storage. Element
// (i_0, ..., i_{r-1}) is at `offset + sum_k i_k * strides[k]` (in elements), as in numpy's and
// PyTorch's as_strided.
//
// Transpose, Slice and most Reshapes map a view to a view, so a chain of layout ops between a
// tensor and the op that reads it collapses, at load time, into one view the reader follows
// directly instead of a chain of copies (see the absorb_layout pass). The same algebra run
// backwards describes where a reader's output lands in a tensor a Transpose/Reshape chain makes
// of it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/shape.h"

namespace fusebox::ir {

struct StridedView {
  Shape shape;
  std::vector<int64_t> strides;  // one per dim, in elements, >= 0
  int64_t offset = 0;

  // A whole tensor of `shape`, row-major.
  static StridedView contiguous(const Shape& shape);

  // Output dim i is input dim perm[i] (ONNX Transpose; perm must be a permutation of the rank).
  StridedView transposed(const std::vector<int64_t>& perm) const;
  // `count` elements along `axis` starting at `start`, every `step` (>= 1). Bounds are the
  // caller's to check against shape[axis].
  StridedView sliced(size_t axis, int64_t start, int64_t count, int64_t step = 1) const;
  // The same elements, in row-major order, under `new_shape` (same element count) -- when strides
  // alone can express it (PyTorch's view() rule: merged dims must be contiguous with each other).
  // nullopt when a copy would be needed.
  std::optional<StridedView> reshaped(const Shape& new_shape) const;

  int64_t numel() const { return ir::numel(shape); }
  // One past the largest offset any element has (0 when empty): must not exceed the storage.
  // Throws fusebox::Error when that does not fit in int64 (attributes can say anything).
  int64_t extent() const;
  // Whether the view hits every element of a dense buffer of `storage_numel` elements exactly
  // once (it is a permutation of that buffer: what an op needs to write its output through it).
  bool covers_densely(int64_t storage_numel) const;
  // Offset of one element (tests, reference loops).
  int64_t offset_of(const std::vector<int64_t>& index) const;
  // Offsets of every index of the first `dims` dims, row-major, the others at 0: where each
  // matrix of a batch starts (e.g. each head of [B, H, S, D] with dims = 2).
  std::vector<int64_t> leading_offsets(size_t dims) const;
  // "[4,128,64] strides [64,768,1] + 256"
  std::string to_string() const;
};

}  // namespace fusebox::ir
