// Resize (ONNX's Resize and the deprecated Upsample, imported as one op): nearest, N-linear or
// N-cubic sampling of every dim. The importer makes ONNX's roi / scales / sizes inputs
// attributes; core/ir/resize_params.h reads them, shared with the kernels.
#include "core/base/error.h"
#include "core/ir/ops/builtin_ops.h"
#include "core/ir/resize_params.h"

namespace fusebox::ir {

void register_resize_ops(OpRegistry& r) {
  OpSchema s;
  s.name = "Resize";
  s.doc = "samples every dim at scales or to sizes: mode nearest | linear | cubic, coordinate_transformation_mode, "
          "nearest_mode, roi (tf_crop_and_resize)";
  s.infer = [](const Node& n, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{{DType::f32, resize_params(n, in[0].shape).out}};
  };
  // A multiply-add per tap, taps^k of them for the k dims that change, per output; nearest only
  // copies.
  s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>& out) {
    ResizeParams p = resize_params(n, in[0].shape);
    if (p.mode == ResizeMode::kNearest) return 0.0;
    double taps = 1;
    for (size_t d = 0; d < p.in.size(); ++d)
      if (p.in[d] != p.out[d]) taps *= p.taps();
    return 2.0 * taps * static_cast<double>(numel(out[0].shape));
  };
  r.add(std::move(s));
  set_types(r, "F", {"Resize"});
  set_math(r, MathClass::Arithmetic, {"Resize"});  // interpolation: weighted sums of taps
  set_kind(r, OpKind::Layout, {"Resize"});         // but what it does to a tensor is reshape it
}

}  // namespace fusebox::ir
