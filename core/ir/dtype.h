#pragma once
// Element types. f32 is what kernels compute in; i64 carries token ids and the shape arithmetic
// that the ONNX importer and constant folding resolve at load time.
#include <cstddef>
#include <cstdint>
#include <string>

namespace fusebox::ir {

enum class DType : uint8_t { f32, i64 };

inline size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 8; }
inline const char* dtype_name(DType t) { return t == DType::f32 ? "f32" : "i64"; }
// Parses "f32"/"float32"/"i64"/"int64"; throws fusebox::Error otherwise.
DType parse_dtype(const std::string& name);

}  // namespace fusebox::ir
