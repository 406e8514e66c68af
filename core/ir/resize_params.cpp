#include "core/ir/resize_params.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/base/error.h"

namespace fusebox::ir {

namespace {

template <typename E>
E pick(const std::string& attr, const std::string& value,
       std::initializer_list<std::pair<const char*, E>> choices) {
  std::string names;
  for (const auto& [name, e] : choices) {
    if (value == name) return e;
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  throw Error(attr + " '" + value + "' is not one of " + names);
}

// Keys' cubic convolution weights for the four taps around a point `ratio` in (0, 1] past the
// second one (onnx's cubic_coeffs).
void cubic_weights(double r, double a, double* w) {
  const double s = 1 - r;
  w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
  w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
  w[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
  w[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
}

}  // namespace

ResizeParams resize_params(const Node& node, const Shape& in) {
  ResizeParams p;
  const size_t rank = in.size();
  if (rank == 0) throw Error("input must have rank >= 1");
  const Attributes& a = node.attrs;
  p.mode = pick<ResizeMode>("mode", a.get_string("mode", "nearest"),
                            {{"nearest", ResizeMode::kNearest}, {"linear", ResizeMode::kLinear},
                             {"cubic", ResizeMode::kCubic}});
  p.coord = pick<ResizeCoord>("coordinate_transformation_mode",
                              a.get_string("coordinate_transformation_mode", "half_pixel"),
                              {{"half_pixel", ResizeCoord::kHalfPixel},
                               {"half_pixel_symmetric", ResizeCoord::kHalfPixelSymmetric},
                               {"pytorch_half_pixel", ResizeCoord::kPytorchHalfPixel},
                               {"align_corners", ResizeCoord::kAlignCorners},
                               {"asymmetric", ResizeCoord::kAsymmetric},
                               {"tf_half_pixel_for_nn", ResizeCoord::kTfHalfPixelForNn},
                               {"tf_crop_and_resize", ResizeCoord::kTfCropAndResize}});
  p.nearest = pick<ResizeNearest>("nearest_mode", a.get_string("nearest_mode", "round_prefer_floor"),
                                  {{"round_prefer_floor", ResizeNearest::kRoundPreferFloor},
                                   {"round_prefer_ceil", ResizeNearest::kRoundPreferCeil},
                                   {"floor", ResizeNearest::kFloor},
                                   {"ceil", ResizeNearest::kCeil}});
  p.cubic_a = a.get_float("cubic_coeff_a", -0.75);
  p.exclude_outside = a.get_int("exclude_outside", 0) != 0;
  p.extrapolation = static_cast<float>(a.get_float("extrapolation_value", 0.0));
  p.in = in;

  p.roi = a.get_floats("roi");
  if (p.roi.empty()) {
    p.roi.assign(rank, 0.0);
    p.roi.resize(2 * rank, 1.0);
  }
  if (p.roi.size() != 2 * rank)
    throw Error("roi has " + std::to_string(p.roi.size()) + " values, expected 2 x rank = " +
                std::to_string(2 * rank));

  const std::vector<double> scales = a.get_floats("scales");
  const std::vector<int64_t> sizes = a.get_ints("sizes");
  if (scales.empty() && sizes.empty()) throw Error("needs scales or sizes");
  if (!scales.empty() && scales.size() != rank)
    throw Error("scales has " + std::to_string(scales.size()) + " values for an input of rank " + std::to_string(rank));
  if (!sizes.empty() && sizes.size() != rank)
    throw Error("sizes has " + std::to_string(sizes.size()) + " values for an input of rank " + std::to_string(rank));
  for (size_t d = 0; d < rank; ++d) {
    if (!scales.empty() && !(scales[d] > 0 && std::isfinite(scales[d])))
      throw Error("scale " + std::to_string(scales[d]) + " of dim " + std::to_string(d) + " must be > 0");
    int64_t out;
    if (!sizes.empty()) {
      out = sizes[d];
      if (out < 0) throw Error("sizes has negative dim " + std::to_string(out));
    } else {
      // floor(in * (roi_end - roi_start) * scale): the roi only narrows tf_crop_and_resize.
      double extent = p.coord == ResizeCoord::kTfCropAndResize ? p.roi[d + rank] - p.roi[d] : 1.0;
      double o = std::floor(static_cast<double>(in[d]) * extent * scales[d]);
      if (!(o >= 0) || o > 4e15)
        throw Error("dim " + std::to_string(d) + " of size " + std::to_string(in[d]) + " scaled by " +
                    std::to_string(scales[d]) + " gives no valid output size");
      out = static_cast<int64_t>(o);
    }
    if (in[d] == 0 && out > 0)
      throw Error("dim " + std::to_string(d) + " is empty and cannot be resized to " + std::to_string(out));
    p.out.push_back(out);
    p.scales.push_back(!scales.empty() ? scales[d]
                       : in[d] > 0     ? static_cast<double>(out) / static_cast<double>(in[d])
                                       : 1.0);
  }
  numel(p.out);  // throws on overflow
  return p;
}

ResizeAxis resize_axis(const ResizeParams& p, size_t axis) {
  const size_t rank = p.in.size();
  const int64_t in = p.in[axis], out = p.out[axis];
  const double in_f = static_cast<double>(in), scale = p.scales[axis];
  // The resized length the formulas divide by: in * scale, not rounded (as onnx's reference
  // computes it: align_corners downsampling 4 by 0.6 maps over 2.4, not 2).
  const double length = in_f * scale;
  ResizeAxis r;
  r.taps = p.taps();
  r.index.resize(static_cast<size_t>(out * r.taps));
  r.weight.resize(static_cast<size_t>(out * r.taps));
  r.outside.assign(static_cast<size_t>(out), false);
  r.identity = in == out;
  for (int64_t x = 0; x < out; ++x) {
    const double xr = static_cast<double>(x);
    double xo = 0;
    switch (p.coord) {
      case ResizeCoord::kHalfPixel: xo = (xr + 0.5) / scale - 0.5; break;
      case ResizeCoord::kHalfPixelSymmetric: {
        const double adjustment = static_cast<double>(out) / length;
        xo = in_f / 2 * (1 - adjustment) + (xr + 0.5) / scale - 0.5;
        break;
      }
      case ResizeCoord::kPytorchHalfPixel: xo = out > 1 ? (xr + 0.5) / scale - 0.5 : 0.0; break;
      case ResizeCoord::kAlignCorners: xo = out > 1 ? xr * (in_f - 1) / (length - 1) : 0.0; break;
      case ResizeCoord::kAsymmetric: xo = xr / scale; break;
      case ResizeCoord::kTfHalfPixelForNn: xo = (xr + 0.5) / scale; break;
      case ResizeCoord::kTfCropAndResize: {
        const double start = p.roi[axis], end = p.roi[axis + rank];
        xo = out > 1 ? start * (in_f - 1) + xr * (end - start) * (in_f - 1) / static_cast<double>(out - 1)
                     : 0.5 * (start + end) * (in_f - 1);
        r.outside[static_cast<size_t>(x)] = xo < 0 || xo > in_f - 1;
        break;
      }
    }
    if (xo != xr || r.outside[static_cast<size_t>(x)]) r.identity = false;
    // The taps sit around xo with the nearest one at or below it second: an integer xo is taken
    // as 1 past `base` (ratio 1), so every mode reads input xo itself there.
    const double fl = std::floor(xo);
    const double ratio = xo == fl ? 1.0 : xo - fl;
    const int64_t base = static_cast<int64_t>(xo == fl ? fl - 1 : fl);
    int64_t* idx = &r.index[static_cast<size_t>(x * r.taps)];
    double* w = &r.weight[static_cast<size_t>(x * r.taps)];
    switch (p.mode) {
      case ResizeMode::kNearest: {
        bool upper = true;  // ratio 1: xo is an integer
        if (ratio < 1) {
          switch (p.nearest) {
            case ResizeNearest::kRoundPreferFloor: upper = ratio > 0.5; break;
            case ResizeNearest::kRoundPreferCeil: upper = ratio >= 0.5; break;
            case ResizeNearest::kFloor: upper = false; break;
            case ResizeNearest::kCeil: upper = true; break;
          }
        }
        idx[0] = base + (upper ? 1 : 0);
        w[0] = 1;
        break;
      }
      case ResizeMode::kLinear:
        idx[0] = base, idx[1] = base + 1;
        w[0] = 1 - ratio, w[1] = ratio;
        break;
      case ResizeMode::kCubic:
        for (int t = 0; t < 4; ++t) idx[t] = base - 1 + t;
        cubic_weights(ratio, p.cubic_a, w);
        break;
    }
    if (p.exclude_outside && p.mode != ResizeMode::kNearest) {
      double sum = 0;
      for (int t = 0; t < r.taps; ++t) {
        if (idx[t] < 0 || idx[t] >= in) w[t] = 0;
        sum += w[t];
      }
      if (sum != 0)
        for (int t = 0; t < r.taps; ++t) w[t] /= sum;
    }
    for (int t = 0; t < r.taps; ++t) idx[t] = std::clamp<int64_t>(idx[t], 0, std::max<int64_t>(0, in - 1));
  }
  return r;
}

}  // namespace fusebox::ir
