#pragma once
// How Resize reads its attributes against its input shape: one reading shared by the op schema
// (core/ir/ops/resize.cpp) and the kernels (ops/cpu/resize.cpp). The ONNX importer resolves
// ONNX's roi / scales / sizes inputs (and opset 18's axes and keep_aspect_ratio_policy) into
// full-rank attributes, so this sees one form:
//   mode                            nearest | linear | cubic            (default nearest)
//   coordinate_transformation_mode  half_pixel (default) | half_pixel_symmetric |
//                                   pytorch_half_pixel | align_corners | asymmetric |
//                                   tf_half_pixel_for_nn | tf_crop_and_resize
//   nearest_mode                    round_prefer_floor (default) | round_prefer_ceil | floor | ceil
//   cubic_coeff_a (-0.75), exclude_outside (0), extrapolation_value (0)
//   scales   floats, one per dim: output dim = floor(in * scale) when sizes is absent
//   sizes    ints, one per dim: the output shape (scale = size / in when scales is absent)
//   roi      floats [start..., end...], 2 x rank, read by tf_crop_and_resize only
// Errors are fusebox::Error naming the attribute at fault.
#include <cstdint>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace fusebox::ir {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class ResizeCoord {
  kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class ResizeNearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeParams {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeCoord coord = ResizeCoord::kHalfPixel;
  ResizeNearest nearest = ResizeNearest::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
  Shape in, out;
  std::vector<double> scales;  // per dim, what the coordinate formulas divide by
  std::vector<double> roi;     // [start..., end...], 2 x rank
  // Input taps each output coordinate reads along one dim: 1 (nearest), 2 (linear), 4 (cubic).
  int taps() const { return mode == ResizeMode::kNearest ? 1 : mode == ResizeMode::kLinear ? 2 : 4; }
};

ResizeParams resize_params(const Node& node, const Shape& in);

// Along dim `axis`, output coordinate x reads input indices index[x * taps + t] (clamped to the
// input: the edge repeats) weighted by weight[x * taps + t]; outside[x] is true when
// tf_crop_and_resize maps x outside the input (the output is extrapolation_value there).
// Computed in double from the ONNX definitions (onnx/backend/test/case/node/resize.py).
struct ResizeAxis {
  int taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<bool> outside;
  // Output coordinate x reads exactly input x with weight 1 (a dim the resize leaves as it is).
  bool identity = false;
};
ResizeAxis resize_axis(const ResizeParams& p, size_t axis);

}  // namespace fusebox::ir
