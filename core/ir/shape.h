#pragma once
// Shape: a list of dimensions (all >= 0). Helpers for element counts, printing and numpy-style
// broadcasting.
#include <cstdint>
#include <string>
#include <vector>

namespace fusebox::ir {

using Shape = std::vector<int64_t>;

// Product of dims (1 for a scalar). Throws fusebox::Error if it overflows or a dim is negative.
int64_t numel(const Shape& shape);
// A tensor's bytes: numel(shape) * element_size, checked (fusebox::Error naming the shape when it
// passes 2^63, where a plain product wraps to a small size and a plan would call it tiny).
size_t nbytes_of(const Shape& shape, size_t element_size);
std::string shape_str(const Shape& shape);  // "[1,64,256]"
// Numpy broadcasting of two shapes; throws fusebox::Error naming both shapes when incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);
// Row-major strides in elements; broadcast dims (size 1 against a larger output dim) get stride 0
// when `out` is given and has the same rank (left-padded with 1s otherwise).
std::vector<int64_t> strides_of(const Shape& shape);
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
// broadcast_strides of every input against one output (the operands of a broadcast walk, as every
// backend builds them); throws "[3,5] does not broadcast to [4,6]" for the first that does not.
std::vector<std::vector<int64_t>> broadcast_strides(const std::vector<Shape>& inputs,
                                                    const Shape& out);
// Normalizes a possibly negative axis against rank; throws naming `what` when out of range.
int normalize_axis(int64_t axis, size_t rank, const std::string& what);

}  // namespace fusebox::ir
