#include "core/ir/shape.h"


#include "core/base/checked.h"
#include "core/base/error.h"
#include "core/ir/dtype.h"

namespace fusebox::ir {

DType parse_dtype(const std::string& name) {
  if (name == "f32" || name == "float32" || name == "float") return DType::f32;
  if (name == "i64" || name == "int64") return DType::i64;
  throw Error("unknown dtype '" + name + "' (expected f32 or i64)");
}

int64_t numel(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) throw Error("negative dimension in shape " + shape_str(shape));
  const auto n = checked_product(shape);
  if (!n) throw Error("shape " + shape_str(shape) + " has too many elements");
  return *n;
}

size_t nbytes_of(const Shape& shape, size_t element_size) {
  const auto n = checked_mul(numel(shape), static_cast<int64_t>(element_size));
  if (!n)
    throw Error("shape " + shape_str(shape) + " of " + std::to_string(element_size) +
                "-byte elements is past 2^63 bytes");
  return static_cast<size_t>(*n);
}

std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error("shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  if (in.size() > out.size() || broadcast_shapes(in, out) != out)
    throw Error("shape " + shape_str(in) + " does not broadcast to " + shape_str(out));
  std::vector<int64_t> res(out.size(), 0);
  std::vector<int64_t> own = strides_of(in);
  size_t pad = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) res[pad + i] = (in[i] == 1 && out[pad + i] != 1) ? 0 : own[i];
  return res;
}

std::vector<std::vector<int64_t>> broadcast_strides(const std::vector<Shape>& inputs,
                                                    const Shape& out) {
  std::vector<std::vector<int64_t>> strides;
  for (const Shape& s : inputs) {
    bool ok = s.size() <= out.size();
    for (size_t i = 0; ok && i < s.size(); ++i) {
      const int64_t o = out[out.size() - s.size() + i];
      ok = s[i] == o || s[i] == 1;
    }
    if (!ok) throw Error(shape_str(s) + " does not broadcast to " + shape_str(out));
    strides.push_back(broadcast_strides(s, out));
  }
  return strides;
}

int normalize_axis(int64_t axis, size_t rank, const std::string& what) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    throw Error(what + ": axis " + std::to_string(axis) + " out of range for rank " +
                std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

}  // namespace fusebox::ir
