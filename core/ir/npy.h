#pragma once
// NumPy .npy files (format version 1.0/2.0, little-endian, C order): how tensors leave and enter
// fusebox (--save-outputs, --input NAME=FILE.npy), readable by numpy.load and torch.
#include <string>

#include "core/ir/tensor.h"

namespace fusebox::ir {

// Writes atomically. Throws fusebox::Error naming the path.
void write_npy(const std::string& path, const Tensor& tensor);
// Reads f32 ('<f4') and i64 ('<i8') arrays; also converts f64 to f32 and i32 to i64.
// Throws fusebox::Error naming the path and what is wrong (not .npy, fortran order, dtype, size).
Tensor read_npy(const std::string& path);
// The shape a .npy file declares, from its header alone (what binds a model's dynamic dims
// before the data is read). Throws as read_npy does for a header it cannot use.
Shape read_npy_shape(const std::string& path);

}  // namespace fusebox::ir
