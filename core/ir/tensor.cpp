#include "core/ir/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/base/error.h"

namespace fusebox::ir {

namespace {
// Tensors larger than this are refused rather than attempted (a corrupt file asking for 2^60
// elements should be an error, not an OOM kill).
constexpr size_t kMaxTensorBytes = size_t{16} << 30;
}  // namespace

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = ir::numel(shape_);
  size_t n = nbytes();
  if (static_cast<size_t>(numel_) > kMaxTensorBytes / dtype_size(dtype_))
    throw Error("tensor of shape " + shape_str(shape_) + " is too large (limit 16 GiB)");
  size_t padded = (n + kAlignment - 1) / kAlignment * kAlignment;
  if (padded == 0) padded = kAlignment;
  void* p = std::aligned_alloc(kAlignment, padded);
  if (!p) throw Error("out of memory allocating " + std::to_string(n) + " bytes");
  std::memset(p, 0, padded);
  owner_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  data_ = static_cast<std::byte*>(p);
}

Tensor Tensor::view(DType dtype, Shape shape, std::shared_ptr<const void> owner,
                    const std::byte* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = ir::numel(t.shape_);
  t.owner_ = std::move(owner);
  t.data_ = const_cast<std::byte*>(data);
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (ir::numel(shape) != numel_)
    throw Error("cannot reshape " + shape_str(shape_) + " to " + shape_str(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(dtype_, shape_);
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

}  // namespace fusebox::ir
