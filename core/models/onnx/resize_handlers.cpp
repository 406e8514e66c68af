// ONNX Resize (opsets 10 to 19+) and the deprecated Upsample (opsets 7 and 9) -> our Resize.
// fusebox plans shapes at load time, so the scales and sizes inputs (and the roi that
// tf_crop_and_resize reads) must be known then: they become full-rank attributes here, opset 18's
// axes and keep_aspect_ratio_policy resolved (core/ir/resize_params.h reads the result).
// Resize-10 and Upsample sample asymmetrically (x_original = x / scale) and take the floor for
// nearest, which is what later opsets spell coordinate_transformation_mode=asymmetric,
// nearest_mode=floor.
#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

// Whether optional input i is given: named, and not an empty tensor (opset 11-12 exporters pass
// an empty scales beside sizes; its shape says so even when it is fed at run time).
bool given(const ImportContext& ctx, const OnnxNode& node, int i) {
  const std::string name = node.input(i);
  return !name.empty() && ir::numel(ctx.type_of(name).shape) > 0;
}

std::vector<double> constant_floats(const ImportContext& ctx, const OnnxNode& node, int i, const char* what) {
  const ir::Tensor& t = ctx.constant(node.input(i), node, what);
  if (t.dtype() != ir::DType::f32)
    throw Error(node.where() + ": input '" + node.input(i) + "' (" + what + ") must be float");
  if (t.shape().size() != 1)
    throw Error(node.where() + ": input '" + node.input(i) + "' (" + what + ") must be 1-D, got " +
                ir::shape_str(t.shape()));
  return {t.data<float>(), t.data<float>() + t.numel()};
}

std::string mode_of(const OnnxNode& node) {
  std::string mode = node.get_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample-7's other spelling
  return mode;
}

// Upsample, and Resize-10 (the same op under the new name): X and scales only.
void convert_upsample(ImportContext& ctx, const OnnxNode& node, std::vector<double> scales) {
  const std::string mode = mode_of(node);
  if (mode != "nearest" && mode != "linear")
    throw Error(node.where() + ": mode '" + mode + "' is not one of nearest, linear");
  ctx.emit(node, "Resize", {node.input(0)},
           attrs_of({{"mode", mode},
                     {"coordinate_transformation_mode", std::string("asymmetric")},
                     {"nearest_mode", std::string("floor")},
                     {"scales", std::move(scales)}}),
           {node.output(0)});
}

void convert_resize(ImportContext& ctx, const OnnxNode& node) {
  if (node.input(0).empty()) throw Error(node.where() + ": missing input X");
  if (ctx.opset() < 11) {
    if (node.input(1).empty()) throw Error(node.where() + ": missing input scales");
    convert_upsample(ctx, node, constant_floats(ctx, node, 1, "scales"));
    return;
  }
  const ir::Shape x = ctx.type_of(node.input(0)).shape;
  const size_t rank = x.size();
  if (node.get_int("antialias", 0) != 0)
    throw Error(node.where() + ": antialias=1 is not supported (fusebox samples without the antialiasing filter)");

  std::vector<int64_t> axes = node.get_ints("axes");
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  std::vector<bool> seen(rank, false);
  for (int64_t& a : axes) {
    if (a < -static_cast<int64_t>(rank) || a >= static_cast<int64_t>(rank))
      throw Error(node.where() + ": axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (a < 0) a += static_cast<int64_t>(rank);
    if (seen[static_cast<size_t>(a)]) throw Error(node.where() + ": axis " + std::to_string(a) + " is repeated");
    seen[static_cast<size_t>(a)] = true;
  }
  const size_t n = axes.size();
  auto check_count = [&](size_t got, size_t want, const char* what) {
    if (got != want)
      throw Error(node.where() + ": " + what + " has " + std::to_string(got) + " values, expected " +
                  std::to_string(want) + (n == rank ? " (the input's rank)" : " (one per axis)"));
  };

  const std::string mode = mode_of(node);
  const std::string coord = node.get_string("coordinate_transformation_mode", "half_pixel");
  ir::Attributes a = attrs_of({{"mode", mode},
                               {"coordinate_transformation_mode", coord},
                               {"nearest_mode", node.get_string("nearest_mode", "round_prefer_floor")},
                               {"cubic_coeff_a", node.get_float("cubic_coeff_a", -0.75)},
                               {"exclude_outside", node.get_int("exclude_outside", 0)},
                               {"extrapolation_value", node.get_float("extrapolation_value", 0.0)}});
  if (coord == "tf_crop_and_resize") {
    if (!given(ctx, node, 1)) throw Error(node.where() + ": tf_crop_and_resize needs the roi input");
    std::vector<double> r = constant_floats(ctx, node, 1, "roi");
    check_count(r.size(), 2 * n, "roi");
    std::vector<double> roi(rank, 0.0);
    roi.resize(2 * rank, 1.0);
    for (size_t i = 0; i < n; ++i) roi[axes[i]] = r[i], roi[axes[i] + rank] = r[i + n];
    a.set("roi", roi);
  }

  const bool has_scales = given(ctx, node, 2), has_sizes = given(ctx, node, 3);
  if (has_scales == has_sizes)
    throw Error(node.where() + (has_scales ? ": has both scales and sizes (give one)" : ": needs scales or sizes"));
  if (has_scales) {
    std::vector<double> s = constant_floats(ctx, node, 2, "scales");
    check_count(s.size(), n, "scales");
    std::vector<double> scales(rank, 1.0);
    for (size_t i = 0; i < n; ++i) scales[axes[i]] = s[i];
    a.set("scales", scales);
  } else {
    std::vector<int64_t> s = ctx.constant_ints(node.input(3), node, "sizes");
    check_count(s.size(), n, "sizes");
    std::vector<int64_t> sizes(x.begin(), x.end());
    for (size_t i = 0; i < n; ++i) sizes[axes[i]] = s[i];
    const std::string policy = node.get_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "not_larger" || policy == "not_smaller") {
      // One scale for every axis (the smallest or largest asked for), sizes rounded from it.
      double scale = policy == "not_larger" ? 1e300 : 0.0;
      for (int64_t ax : axes) {
        if (x[ax] == 0) throw Error(node.where() + ": keep_aspect_ratio_policy over an empty dim " + std::to_string(ax));
        double r = static_cast<double>(sizes[ax]) / static_cast<double>(x[ax]);
        scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
      }
      std::vector<double> scales(rank, 1.0);
      for (int64_t ax : axes) {
        scales[ax] = scale;
        sizes[ax] = static_cast<int64_t>(std::floor(scale * static_cast<double>(x[ax]) + 0.5));
      }
      a.set("scales", scales);
    } else if (policy != "stretch") {
      throw Error(node.where() + ": keep_aspect_ratio_policy '" + policy + "' is not one of stretch, not_larger, not_smaller");
    }
    a.set("sizes", sizes);
  }
  ctx.emit(node, "Resize", {node.input(0)}, std::move(a), {node.output(0)});
}

}  // namespace

void add_resize_handlers(HandlerRegistry& r) {
  r.add({"Resize", 10, 21,
         {"antialias", "axes", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
          "extrapolation_value", "keep_aspect_ratio_policy", "mode", "nearest_mode"},
         convert_resize});
  r.add({"Upsample", 7, 9, {"mode", "scales"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input X");
           if (ctx.opset() < 9) {  // Upsample-7: scales is an attribute
             if (!node.has("scales")) throw Error(node.where() + ": missing attribute scales");
             convert_upsample(ctx, node, node.get_floats("scales"));
           } else {
             if (node.input(1).empty()) throw Error(node.where() + ": missing input scales");
             convert_upsample(ctx, node, constant_floats(ctx, node, 1, "scales"));
           }
         }});
}

}  // namespace fusebox::models::onnx_import
