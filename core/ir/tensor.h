#pragma once
// Tensor: a host value (dtype, shape, 64-byte aligned bytes) used for weights, inputs and outputs.
// Copies share storage; a tensor can also be a view into someone else's buffer (e.g. the bytes of
// a loaded .onnx file), kept alive by a shared owner.
// TensorInfo: what the graph knows about a named tensor.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "core/ir/dtype.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

inline constexpr size_t kAlignment = 64;

class Tensor {
 public:
  Tensor() = default;
  // Allocates zeroed, 64-byte aligned storage. Throws fusebox::Error for absurd sizes.
  Tensor(DType dtype, Shape shape);
  // A view of bytes owned elsewhere; `owner` keeps them alive. `data` must hold nbytes.
  static Tensor view(DType dtype, Shape shape, std::shared_ptr<const void> owner,
                     const std::byte* data);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }
  bool empty() const { return data_ == nullptr && numel_ == 0; }

  std::byte* bytes() { return data_; }
  const std::byte* bytes() const { return data_; }
  template <typename T>
  T* data() {
    return reinterpret_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    return reinterpret_cast<const T*>(data_);
  }
  // Same bytes, new shape (element counts must match).
  Tensor reshaped(Shape shape) const;
  // A deep copy with its own storage.
  Tensor clone() const;

 private:
  DType dtype_ = DType::f32;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<const void> owner_;
  std::byte* data_ = nullptr;
};

enum class TensorKind : uint8_t {
  Input,         // fed by the caller each run
  Weight,        // constant data known at load time (initializers, folded constants)
  Intermediate,  // produced by a node (graph outputs are intermediates listed in Graph::outputs)
};

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  Shape shape;
  TensorKind kind = TensorKind::Intermediate;
  std::optional<Tensor> value;  // set for Weight

  size_t nbytes() const { return nbytes_of(shape, dtype_size(dtype)); }
};

}  // namespace fusebox::ir
