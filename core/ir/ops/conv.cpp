// Conv, ConvTranspose, BatchNorm and the pooling ops (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool)
// schemas. Their shapes are read by core/ir/conv_params.h, shared with the kernels.
#include <string>

#include "core/base/error.h"
#include "core/ir/conv_params.h"
#include "core/ir/ops/builtin_ops.h"

namespace fusebox::ir {

namespace {

ConvShape conv_of(const Node& n, const std::vector<TensorType>& in) {
  return conv_shape(n, in[0].shape, in[1].shape, in.size() > 2 ? &in[2].shape : nullptr);
}

ConvTransposeShape conv_transpose_of(const Node& n, const std::vector<TensorType>& in) {
  return conv_transpose_shape(n, in[0].shape, in[1].shape, in.size() > 2 ? &in[2].shape : nullptr);
}

// A pool's output: x's N and C, the window's output dims.
Shape pooled_shape(const WindowGeometry& g) {
  Shape out{g.batch, g.channels};
  out.insert(out.end(), g.out.begin(), g.out.end());
  return out;
}

OpSchema pool_schema(const char* name, const char* doc) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.infer = [name](const Node& n, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{{DType::f32, pooled_shape(pool_geometry(n, in[0].shape, name))}};
  };
  s.flops = [](const Node& n, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return static_cast<double>(numel(out[0].shape) * numel(n.attrs.get_ints("kernel_shape")));
  };
  if (std::string(name) == "MaxPool")
    s.scratch_bytes = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return max_pool_scratch_bytes(pool_geometry(n, in[0].shape, "MaxPool"));
    };
  return s;
}

OpSchema global_pool_schema(const char* name, const char* doc) {
  OpSchema s;
  s.name = name;
  s.doc = doc;
  s.infer = [name](const Node&, const std::vector<TensorType>& in) {
    const Shape& x = in[0].shape;
    if (x.size() < 3)
      throw Error(std::string(name) + ": input " + shape_str(x) + " must be [N, C, spatial...] (rank >= 3)");
    Shape out(x.size(), 1);
    out[0] = x[0];
    out[1] = x[1];
    return std::vector<TensorType>{{DType::f32, out}};
  };
  s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return static_cast<double>(numel(in[0].shape));
  };
  return s;
}

// The channels-last form of `base` (conv_params.h): base's reading of the node on channels_first(x),
// its output stored channels_last(). Costs are base's; the scratch is the NHWC kernel's.
OpSchema nhwc_schema(const OpSchema& base, const std::string& name) {
  OpSchema s = base;
  s.name = name;
  s.doc = "channels-last " + base.name + " ([N, spatial..., C]), made by the channels_last pass";
  // The input as the NCHW schema reads it (NhwcConv may read a channels-first input as it is).
  auto first = [conv = base.name == "Conv"](const Node& n, std::vector<TensorType> in) {
    if (in.empty() || in[0].shape.size() < 3)
      throw Error("input " + (in.empty() ? std::string("(none)") : shape_str(in[0].shape)) +
                  " must be [N, spatial..., C] (rank >= 3)");
    in[0].shape = conv ? nhwc_conv_input_as_channels_first(n, in[0].shape) : channels_first(in[0].shape);
    return in;
  };
  auto last = [](std::vector<TensorType> out) {
    for (auto& t : out) t.shape = channels_last(t.shape);
    return out;
  };
  s.infer = [first, last, infer = base.infer](const Node& n, const std::vector<TensorType>& in) {
    return last(infer(n, first(n, in)));
  };
  if (base.flops)
    s.flops = [first, flops = base.flops, conv = base.name == "Conv"](const Node& n, const std::vector<TensorType>& in,
                                                                      const std::vector<TensorType>& out) {
      if (conv && wants_winograd(n)) {  // the arithmetic the Winograd kernel does, not the direct conv's
        const ConvShape c = conv_of(n, first(n, in));
        if (winograd_refusal(n, c).empty()) return winograd_flops(c);
      }
      std::vector<TensorType> o = out;
      for (auto& t : o) t.shape = channels_first(t.shape);
      return flops(n, first(n, in), o);
    };
  s.scratch_bytes = nullptr;
  if (base.name == "Conv")
    s.scratch_bytes = [first](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return nhwc_conv_scratch_bytes(conv_of(n, first(n, in)), reads_channels_first(n));
    };
  return s;
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  {
    OpSchema s;
    s.name = "Conv";
    s.doc = "N-C-spatial convolution (1-D to 3-D): group, strides, dilations, pads or auto_pad, optional bias, fused activation";
    s.min_inputs = 2;
    s.max_inputs = 3;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      conv_activation(n);  // a fused activation must be one the kernels apply
      return std::vector<TensorType>{{DType::f32, conv_of(n, in).output_shape()}};
    };
    // Multiply-adds of the direct convolution (what the output needs, not what im2col copies),
    // and the fused activation's per output.
    s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      ConvShape c = conv_of(n, in);
      const double outputs = static_cast<double>(c.g.batch * c.c_out) * static_cast<double>(c.g.out_size());
      return 2.0 * outputs * static_cast<double>(c.k()) + conv_activation(n).flops_per_output() * outputs;
    };
    s.scratch_bytes = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return conv_scratch_bytes(conv_of(n, in));
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "ConvTranspose";
    s.doc = "transposed convolution (1-D to 3-D): group, strides, dilations, pads, output_padding, output_shape";
    s.min_inputs = 2;
    s.max_inputs = 3;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      return std::vector<TensorType>{{DType::f32, conv_transpose_of(n, in).output_shape()}};
    };
    // Every input element times every kernel tap of its group's output channels.
    s.flops = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      ConvTransposeShape c = conv_transpose_of(n, in);
      return 2.0 * static_cast<double>(c.batch * c.c_in * numel(c.in)) *
             static_cast<double>(c.c_out_per_group * numel(c.kernel));
    };
    // The CPU kernel's column buffer: one image and group's GEMM result, [C_out/group * kernel, in].
    s.scratch_bytes = [](const Node& n, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      ConvTransposeShape c = conv_transpose_of(n, in);
      return static_cast<size_t>(c.c_out_per_group * numel(c.kernel) * numel(c.in)) * sizeof(float);
    };
    r.add(std::move(s));
  }
  {
    OpSchema s;
    s.name = "BatchNorm";
    s.doc = "inference BatchNormalization: (x - mean) / sqrt(var + epsilon) * scale + B per channel (dim 1)";
    s.min_inputs = 5;
    s.max_inputs = 5;
    s.infer = [](const Node& n, const std::vector<TensorType>& in) {
      batch_norm_shape(n, in[0].shape, {in[1].shape, in[2].shape, in[3].shape, in[4].shape});
      return std::vector<TensorType>{in[0]};
    };
    s.flops = [](const Node&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
      return 2.0 * static_cast<double>(numel(in[0].shape));
    };
    r.add(std::move(s));
  }
  r.add(pool_schema("MaxPool", "max over a sliding window: kernel_shape, strides, pads or auto_pad, dilations, ceil_mode"));
  r.add(pool_schema("AveragePool",
                    "mean over a sliding window: kernel_shape, strides, pads or auto_pad, dilations, ceil_mode, "
                    "count_include_pad"));
  r.add(global_pool_schema("GlobalAveragePool", "mean over all spatial dims: [N, C, ...] -> [N, C, 1, ...]"));
  r.add(global_pool_schema("GlobalMaxPool", "max over all spatial dims: [N, C, ...] -> [N, C, 1, ...]"));
  // Multiply-adds, compares and means; a Conv's fused sigmoid is its only transcendental. Set
  // before the channels-last copies below, which take it with the rest of the schema.
  set_math(r, MathClass::Arithmetic, {"Conv", "ConvTranspose"}, [](const Node& n) {
    return conv_activation(n).kind == ConvActKind::kSigmoid ? std::vector<std::string>{"sigmoid"}
                                                             : std::vector<std::string>{};
  });
  set_math(r, MathClass::Arithmetic, {"BatchNorm", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"});
  set_types(r, "F", {"Conv", "ConvTranspose", "BatchNorm", "MaxPool", "AveragePool", "GlobalAveragePool",
                     "GlobalMaxPool"});
  set_kind(r, OpKind::Conv, {"Conv", "ConvTranspose"});
  set_kind(r, OpKind::Normalization,
           {"BatchNorm", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"});
  for (const char* op : {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
    r.add(nhwc_schema(r.get(op), channels_last_op(op)));
}

}  // namespace fusebox::ir
