// Resize against a double-precision reference written here the way ONNX's own reference
// (onnx/backend/test/case/node/resize.py) computes it: one dim at a time, recursively, each 1-D
// sample taking the n nearest entries of the edge-padded row (found by sorting on distance, not
// by the floor arithmetic the kernel's tables use) and their coefficients. Every mode x
// coordinate transformation mode x nearest mode, up- and down-sampling at non-integer scales and
// to sizes, over 2 of 4 dims, 3 of 5 and a leading one; cubic_coeff_a, exclude_outside and
// tf_crop_and_resize's extrapolation. Where ONNX's spec and its reference differ (an output
// length of 1 under pytorch_half_pixel or tf_crop_and_resize), the reference here follows the
// spec.
#include <algorithm>
#include <numeric>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {
namespace {

struct Ref {
  std::string mode = "nearest", coord = "half_pixel", nearest = "round_prefer_floor";
  double a = -0.75;
  bool exclude = false;
  double extrapolation = 0;
  std::vector<double> scales, roi;
  Shape out;
};

std::vector<double> coeffs(const Ref& r, double ratio) {
  if (r.mode == "nearest") {
    if (ratio == 1.0) return {0, 1};
    if (r.nearest == "round_prefer_floor") return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (r.nearest == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (r.nearest == "floor") return {1, 0};
    return {0, 1};
  }
  if (r.mode == "linear") return {1 - ratio, ratio};
  // Keys' kernel at distances 1 + ratio, ratio, 1 - ratio, 2 - ratio.
  auto k = [&](double d) {
    d = std::abs(d);
    if (d <= 1) return (r.a + 2) * d * d * d - (r.a + 3) * d * d + 1;
    if (d < 2) return r.a * d * d * d - 5 * r.a * d * d + 8 * r.a * d - 4 * r.a;
    return 0.0;
  };
  return {k(1 + ratio), k(ratio), k(1 - ratio), k(2 - ratio)};
}

double interp_1d(const Ref& r, const std::vector<double>& data, size_t axis, int64_t x) {
  const double in = static_cast<double>(data.size()), scale = r.scales[axis];
  const double length = scale * in, xr = static_cast<double>(x);
  const int64_t out = r.out[axis];
  const size_t rank = r.out.size();
  double xo;
  if (r.coord == "align_corners") xo = out == 1 ? 0 : xr * (in - 1) / (length - 1);
  else if (r.coord == "asymmetric") xo = xr / scale;
  else if (r.coord == "tf_half_pixel_for_nn") xo = (xr + 0.5) / scale;
  else if (r.coord == "pytorch_half_pixel") xo = out == 1 ? 0 : (xr + 0.5) / scale - 0.5;
  else if (r.coord == "half_pixel_symmetric") {
    const double adj = static_cast<double>(out) / length, center = in / 2;
    xo = center * (1 - adj) + (xr + 0.5) / scale - 0.5;
  } else if (r.coord == "tf_crop_and_resize") {
    const double s = r.roi[axis], e = r.roi[axis + rank];
    xo = out == 1 ? 0.5 * (s + e) * (in - 1) : s * (in - 1) + xr * (e - s) * (in - 1) / static_cast<double>(out - 1);
    if (xo < 0 || xo > in - 1) return r.extrapolation;
  } else {
    xo = (xr + 0.5) / scale - 0.5;
  }
  const double fl = std::floor(xo);
  std::vector<double> c = coeffs(r, xo == fl ? 1.0 : xo - fl);
  const int n = static_cast<int>(c.size()), pad = (n + 1) / 2;
  std::vector<double> padded;
  for (int i = 0; i < pad; ++i) padded.push_back(data.front());
  padded.insert(padded.end(), data.begin(), data.end());
  for (int i = 0; i < pad; ++i) padded.push_back(data.back());
  // Distances in the unpadded coordinates: onnx adds the pad to xo first, which can round a
  // point just past an integer onto it (1 + 2^-52 + 1 == 2) and flip a tie.
  std::vector<int64_t> idx(padded.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
    return std::abs(xo - static_cast<double>(p - pad)) < std::abs(xo - static_cast<double>(q - pad));
  });
  idx.resize(static_cast<size_t>(n));
  std::sort(idx.begin(), idx.end());
  if (r.exclude && r.mode != "nearest") {
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      const int64_t orig = idx[static_cast<size_t>(i)] - pad;
      if (orig < 0 || orig >= static_cast<int64_t>(data.size())) c[static_cast<size_t>(i)] = 0;
      sum += c[static_cast<size_t>(i)];
    }
    for (double& v : c) v /= sum;
  }
  double v = 0;
  for (int i = 0; i < n; ++i) v += c[static_cast<size_t>(i)] * padded[static_cast<size_t>(idx[static_cast<size_t>(i)])];
  return v;
}

// The value at output coordinate x[axis...] of the sub-tensor `flat` (dims axis.. of `in`).
double interp_nd(const Ref& r, const Shape& in, const std::vector<double>& flat, size_t axis,
                 const std::vector<int64_t>& x) {
  if (axis + 1 == in.size()) return interp_1d(r, flat, axis, x[axis]);
  const int64_t inner = static_cast<int64_t>(flat.size()) / in[axis];
  std::vector<double> line;
  for (int64_t i = 0; i < in[axis]; ++i) {
    std::vector<double> sub(flat.begin() + i * inner, flat.begin() + (i + 1) * inner);
    line.push_back(interp_nd(r, in, sub, axis + 1, x));
  }
  return interp_1d(r, line, axis, x[axis]);
}

std::vector<double> reference(const Ref& r, const Tensor& x) {
  std::vector<double> flat(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) flat[static_cast<size_t>(i)] = x.data<float>()[i];
  std::vector<double> out;
  for (int64_t i = 0; i < ir::numel(r.out); ++i) out.push_back(interp_nd(r, x.shape(), flat, 0, unravel(i, r.out)));
  return out;
}

// The case's attributes and its expected shape, from scales (floor(in * scale)) or sizes.
ir::Attributes case_attrs(Ref& r, const Shape& in, bool by_sizes, const std::vector<double>& scales,
                          const std::vector<int64_t>& sizes) {
  ir::Attributes a = attrs_of({{"mode", r.mode}, {"coordinate_transformation_mode", r.coord},
                               {"nearest_mode", r.nearest}, {"cubic_coeff_a", r.a},
                               {"exclude_outside", int64_t{r.exclude}}, {"extrapolation_value", r.extrapolation}});
  const size_t rank = in.size();
  if (r.roi.empty()) {
    r.roi.assign(rank, 0.0);
    r.roi.resize(2 * rank, 1.0);
  } else {
    a.set("roi", r.roi);
  }
  r.out.clear();
  r.scales.clear();
  for (size_t d = 0; d < rank; ++d) {
    if (by_sizes) {
      r.out.push_back(sizes[d]);
      r.scales.push_back(static_cast<double>(sizes[d]) / static_cast<double>(in[d]));
    } else {
      const double extent = r.coord == "tf_crop_and_resize" ? r.roi[d + rank] - r.roi[d] : 1.0;
      r.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * extent * scales[d])));
      r.scales.push_back(scales[d]);
    }
  }
  if (by_sizes) a.set("sizes", sizes);
  else a.set("scales", scales);
  return a;
}

void check(Ref r, const Shape& in, bool by_sizes, const std::vector<double>& scales,
           const std::vector<int64_t>& sizes, int threads = 1) {
  std::mt19937 rng(7);
  Tensor x = random_f32(in, rng);
  ir::Attributes a = case_attrs(r, in, by_sizes, scales, sizes);
  const std::string what = r.mode + " " + r.coord + " " + r.nearest + (by_sizes ? " sizes " : " scales ") +
                           shape_str(in) + " -> " + shape_str(r.out) + " a=" + std::to_string(r.a) +
                           (r.exclude ? " exclude_outside" : "");
  Tensor y = run1("Resize", {x}, a, threads);
  expect_close(y, r.out, reference(r, x), 1e-5, 1e-5, what);
}

const char* kCoords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                         "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

void check_all_sizes(const Ref& r) {
  const Shape in{2, 3, 5, 7};
  check(r, in, false, {1, 1, 1.7, 2.3}, {});       // up, non-integer
  check(r, in, false, {1, 1, 0.6, 0.45}, {});      // down, non-integer
  check(r, in, false, {1, 1, 2, 0.5}, {});         // integer up and down
  check(r, in, true, {}, {2, 3, 9, 4});            // sizes
  check(r, in, true, {}, {2, 3, 1, 1});            // to one sample
  check(r, {1, 2, 3, 4, 5}, false, {1, 1, 1.5, 0.75, 1.4}, {});  // 3 spatial dims
  check(r, {6, 4}, true, {}, {4, 9});              // the leading dim too
}

TEST(Resize, NearestEveryCoordinateAndNearestMode) {
  for (const char* coord : kCoords)
    for (const char* nearest : kNearest) {
      Ref r;
      r.mode = "nearest", r.coord = coord, r.nearest = nearest;
      if (r.coord == "tf_crop_and_resize") r.roi = {0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7};
      if (r.coord == "tf_crop_and_resize") {
        check(r, {2, 3, 5, 7}, true, {}, {2, 3, 4, 6});
        check(r, {2, 3, 5, 7}, false, {1, 1, 1.5, 0.8}, {});
      } else {
        check_all_sizes(r);
      }
    }
}

TEST(Resize, LinearEveryCoordinateMode) {
  for (const char* coord : kCoords) {
    Ref r;
    r.mode = "linear", r.coord = coord;
    if (r.coord == "tf_crop_and_resize") {
      r.roi = {0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7};
      check(r, {2, 3, 5, 7}, true, {}, {2, 3, 4, 6});
      check(r, {2, 3, 5, 7}, false, {1, 1, 1.5, 0.8}, {});
    } else {
      check_all_sizes(r);
    }
  }
}

TEST(Resize, CubicEveryCoordinateModeCoefficientAndExcludeOutside) {
  for (const char* coord : kCoords)
    for (double a : {-0.75, -0.5})
      for (bool exclude : {false, true}) {
        Ref r;
        r.mode = "cubic", r.coord = coord, r.a = a, r.exclude = exclude;
        if (r.coord == "tf_crop_and_resize") {
          r.roi = {0, 0, 0.1, 0.2, 1, 1, 0.9, 0.7};
          check(r, {2, 3, 5, 7}, true, {}, {2, 3, 4, 6});
        } else {
          check_all_sizes(r);
        }
      }
}

// A roi reaching past the input: the samples outside take extrapolation_value, whole rows and
// single columns alike.
TEST(Resize, TfCropAndResizeExtrapolatesOutsideTheInput) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Ref r;
    r.mode = mode, r.coord = "tf_crop_and_resize", r.extrapolation = 10;
    r.roi = {0, 0, -0.3, 0.4, 1, 1, 1.2, 1.5};
    check(r, {1, 2, 4, 5}, true, {}, {1, 2, 6, 7});
  }
}

// Dims left as they are around resized ones: a resized channel dim with the last dim untouched
// (rows added whole), and a last dim resized alone.
TEST(Resize, UntouchedDimsAroundResizedOnes) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Ref r;
    r.mode = mode;
    check(r, {2, 3, 4, 5}, false, {1, 1.5, 1, 1}, {});
    check(r, {2, 3, 4, 5}, false, {1, 1, 1, 1.8}, {});
    check(r, {3, 4}, false, {1, 1}, {});  // nothing changes: a copy
  }
}

// Large enough to split over two threads; the same answer.
TEST(Resize, TwoThreads) {
  for (const char* mode : {"nearest", "linear", "cubic"}) {
    Ref r;
    r.mode = mode;
    check(r, {2, 4, 10, 12}, false, {1, 1, 1.9, 2.1}, {}, 2);
  }
}

std::string infer_error(const ir::Attributes& a, const Shape& in) {
  ir::Node n = make_node("Resize", 1, 1, a);
  n.name = "up_1";
  try {
    ir::infer_node(n, {{DType::f32, in}});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Resize, BadAttributesAreRefusedNamingTheNode) {
  const Shape x{1, 1, 4, 4};
  auto has = [](const std::string& e, const std::string& part) {
    EXPECT_NE(e.find("node 'up_1' (Resize)"), std::string::npos) << e;
    EXPECT_NE(e.find(part), std::string::npos) << e;
  };
  has(infer_error(attrs_of({{"mode", std::string("area")}, {"scales", std::vector<double>{1, 1, 2, 2}}}), x),
      "mode 'area' is not one of nearest, linear, cubic");
  has(infer_error(attrs_of({{"scales", std::vector<double>{2, 2}}}), x), "scales has 2 values for an input of rank 4");
  has(infer_error(attrs_of({{"scales", std::vector<double>{1, 1, 0, 2}}}), x), "must be > 0");
  has(infer_error(attrs_of({}), x), "needs scales or sizes");
  has(infer_error(attrs_of({{"sizes", std::vector<int64_t>{1, 1, 4, 4}},
                            {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                            {"roi", std::vector<double>{0, 1}}}),
                  x),
      "roi has 2 values, expected 2 x rank = 8");
}

}  // namespace
}  // namespace fusebox::optest
