#pragma once
// The references the convolution tests check against, written here from the ONNX definitions
// (not by core/ir/conv_params.h): the window geometry, Conv and the pools as double-precision
// direct loops over the window taps that fall inside the input, and the cases both the
// channels-first (conv_test.cpp) and the channels-last (conv_nhwc_test.cpp) kernels run.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tests/ops/op_test_util.h"

namespace fusebox::optest {

// The window geometry, computed here from the ONNX formulas (not by core/ir/conv_params.h).
struct RefWindow {
  std::vector<int64_t> in, k, s, dil, pb, pe, out;
};

inline RefWindow ref_window(const Shape& x, const std::vector<int64_t>& kernel, const ir::Attributes& a,
                     bool ceil_mode = false) {
  RefWindow w;
  const size_t r = x.size() - 2;
  w.in.assign(x.begin() + 2, x.end());
  w.k = kernel;
  w.s = a.get_ints("strides", std::vector<int64_t>(r, 1));
  w.dil = a.get_ints("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = a.get_ints("pads", std::vector<int64_t>(2 * r, 0));
  const std::string auto_pad = a.get_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < r; ++i) {
    const int64_t ext = (w.k[i] - 1) * w.dil[i] + 1;
    int64_t pb = pads[i], pe = pads[i + r], out;
    if (auto_pad == "VALID") {
      pb = pe = 0;
      out = (w.in[i] - ext + w.s[i]) / w.s[i];  // ceil((in - ext + 1) / s)
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (w.in[i] + w.s[i] - 1) / w.s[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * w.s[i] + ext - w.in[i]);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
      pe = total - pb;
    } else {
      const double o = static_cast<double>(w.in[i] + pb + pe - ext) / static_cast<double>(w.s[i]) + 1;
      out = static_cast<int64_t>(ceil_mode ? std::ceil(o) : std::floor(o));
      if (ceil_mode && (out - 1) * w.s[i] >= w.in[i] + pb) --out;
    }
    w.pb.push_back(pb);
    w.pe.push_back(pe);
    w.out.push_back(out);
  }
  return w;
}

inline Shape out_shape(const Shape& x, int64_t channels, const RefWindow& w) {
  Shape s{x[0], channels};
  s.insert(s.end(), w.out.begin(), w.out.end());
  return s;
}

// Calls fn(input index or -1 for padding, whether inside the padded input) for every tap of the
// window at spatial output position `o` (row-major over out).
template <typename Fn>
void for_taps(const RefWindow& w, int64_t o, Fn&& fn) {
  const size_t r = w.in.size();  // at most 3 in these tests
  int64_t pos[3] = {0, 0, 0}, j[3] = {0, 0, 0};
  for (size_t i = r; i-- > 0;) {
    pos[i] = o % w.out[i];
    o /= w.out[i];
  }
  const int64_t taps = ir::numel(w.k);
  for (int64_t t = 0; t < taps; ++t) {
    int64_t rem = t, flat = 0;
    bool inside = true, in_padded = true;
    for (size_t i = r; i-- > 0;) {
      j[i] = rem % w.k[i];
      rem /= w.k[i];
    }
    for (size_t i = 0; i < r; ++i) {
      const int64_t idx = pos[i] * w.s[i] - w.pb[i] + j[i] * w.dil[i];
      inside = inside && idx >= 0 && idx < w.in[i];
      in_padded = in_padded && idx >= -w.pb[i] && idx < w.in[i] + w.pe[i];
      flat = flat * w.in[i] + idx;
    }
    fn(inside ? flat : -1, t, in_padded);
  }
}

inline std::vector<double> ref_conv(const Tensor& x, const Tensor& wt, const Tensor* bias, const ir::Attributes& a) {
  const Shape& xs = x.shape();
  const Shape& ws = wt.shape();
  const int64_t group = a.get_int("group", 1);
  const RefWindow w = ref_window(xs, Shape(ws.begin() + 2, ws.end()), a);
  const int64_t n = xs[0], cin = xs[1], cout = ws[0], cig = cin / group, cog = cout / group;
  const int64_t in_size = ir::numel(w.in), out_size = ir::numel(w.out), taps = ir::numel(w.k);
  std::vector<double> y(static_cast<size_t>(n * cout * out_size));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < cout; ++co)
      for (int64_t o = 0; o < out_size; ++o) {
        double acc = bias ? at(*bias, co) : 0.0;
        const int64_t g = co / cog;
        for (int64_t ci = 0; ci < cig; ++ci) {
          const int64_t xc = (b * cin + g * cig + ci) * in_size;
          const int64_t wc = (co * cig + ci) * taps;
          for_taps(w, o, [&](int64_t idx, int64_t t, bool) {
            if (idx >= 0) acc += at(x, xc + idx) * at(wt, wc + t);
          });
        }
        y[static_cast<size_t>((b * cout + co) * out_size + o)] = acc;
      }
  return y;
}

// run_op with the weight (input 1) handed to prepare as a constant, as a compiled plan does for a
// weight: the kernel packs it once there, and its scratch is what the backend asks for then (no
// room to pack the weight at run time), as the planner places it.
inline Tensor run_with_constant_weight(const std::vector<Tensor>& inputs, const ir::Attributes& attrs, int threads,
                                 const std::string& op = "Conv") {
  ir::Node node = make_node(op, inputs.size(), 1, attrs);
  std::vector<ir::TensorType> in_types;
  for (const auto& t : inputs) in_types.push_back({t.dtype(), t.shape()});
  std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
  const exec::KernelDef* kernel = cpu_backend().kernels().find(op);
  std::vector<const Tensor*> constants(inputs.size(), nullptr);
  constants[1] = &inputs[1];
  const size_t scratch_bytes = cpu_backend().scratch_bytes(exec::KernelContext{node, in_types, out_types, 0, &constants});
  exec::KernelContext ctx{node, in_types, out_types, scratch_bytes, &constants};
  exec::CompileOptions options;
  apply_test_isa(ctx, options);
  std::shared_ptr<const void> state = kernel->prepare(ctx);
  Tensor out(DType::f32, out_types[0].shape);
  fill_marker(out);
  Tensor scratch(DType::f32, {static_cast<int64_t>((scratch_bytes + 3) / 4)});
  fill_marker(scratch);
  std::vector<const void*> in_ptrs;
  for (const auto& t : inputs) in_ptrs.push_back(t.bytes());
  std::vector<void*> out_ptrs{out.bytes()};
  exec::KernelArgs args{in_ptrs.data(), out_ptrs.data(), scratch_bytes ? scratch.bytes() : nullptr, state.get()};
  cpu_backend().bind_threads(threads);
  kernel->run(args);
  cpu_backend().bind_threads(1);
  return out;
}

struct ConvCase {
  std::string what;
  Shape x, w;
  ir::Attributes attrs;
  bool bias = true;
};

inline ir::Attributes A(std::initializer_list<std::pair<const char*, ir::AttrValue>> v) { return attrs_of(v); }

inline std::vector<ConvCase> conv_cases() {
  using V = std::vector<int64_t>;
  return {
      {"1-D pads 1", {2, 3, 11}, {4, 3, 3}, A({{"pads", V{1, 1}}})},
      {"1-D stride 2 dilation 2", {1, 3, 16}, {5, 3, 2}, A({{"strides", V{2}}, {"dilations", V{2}}}), false},
      {"1-D depthwise", {1, 4, 30}, {4, 1, 5}, A({{"group", int64_t{4}}, {"pads", V{2, 2}}})},
      {"2-D 3x3 pads 1", {1, 3, 7, 9}, {8, 3, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      {"group 2, stride 2, asymmetric pads", {2, 4, 6, 5}, {6, 2, 3, 3},
       A({{"group", int64_t{2}}, {"strides", V{2, 2}}, {"pads", V{0, 1, 2, 0}}})},
      {"depthwise 3x3", {2, 8, 9, 13}, {8, 1, 3, 3}, A({{"group", int64_t{8}}, {"pads", V{1, 1, 1, 1}}})},
      {"depthwise wide rows", {1, 3, 5, 37}, {3, 1, 3, 3}, A({{"group", int64_t{3}}, {"pads", V{1, 1, 1, 1}}}), false},
      {"depthwise stride 2", {1, 6, 10, 11}, {6, 1, 3, 3},
       A({{"group", int64_t{6}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      {"depthwise multiplier 2, 5x5 dilation 2", {1, 3, 8, 20}, {6, 1, 5, 5},
       A({{"group", int64_t{3}}, {"dilations", V{2, 2}}, {"pads", V{2, 3, 4, 1}}})},
      {"dilation 2", {1, 3, 12, 12}, {4, 3, 3, 3}, A({{"dilations", V{2, 2}}})},
      {"1x1", {2, 16, 7, 7}, {24, 16, 1, 1}, {}},
      {"1x1 stride 2", {1, 8, 9, 9}, {4, 8, 1, 1}, A({{"strides", V{2, 2}}})},
      {"1x1 one position", {1, 4, 1, 1}, {3, 4, 1, 1}, {}},
      {"one output position", {1, 4, 3, 3}, {5, 4, 3, 3}, {}},
      {"SAME_UPPER", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("SAME_UPPER")}, {"strides", V{2, 2}}})},
      {"SAME_LOWER", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("SAME_LOWER")}, {"strides", V{2, 2}}})},
      {"VALID", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("VALID")}, {"strides", V{2, 1}}})},
      {"NOTSET", {1, 2, 7, 8}, {3, 2, 4, 3}, A({{"auto_pad", std::string("NOTSET")}})},
      {"odd sizes, several tiles", {1, 5, 17, 19}, {7, 5, 3, 3}, A({{"pads", V{1, 0, 0, 1}}})},
      // Stems: few input channels and a wide output row (the channels-last direct path's blocks of
      // 16 and 8 columns, its input channels unrolled).
      {"stem 3x3 stride 2, 3 channels, 23 columns", {1, 3, 9, 45}, {16, 3, 3, 3},
       A({{"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      {"stem 3x3, 2 channels, 40 columns", {1, 2, 5, 40}, {5, 2, 3, 3}, A({{"pads", V{1, 1, 1, 1}}}), false},
      {"several weight panels", {1, 40, 10, 10}, {70, 40, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      // K = 97 * 9 = 873: more than one of the AVX2 GEMM's K blocks (256).
      {"deep K", {1, 97, 5, 6}, {40, 97, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      {"3-D", {2, 3, 4, 5, 6}, {4, 3, 2, 3, 2}, A({{"pads", V{1, 0, 1, 0, 1, 0}}, {"strides", V{1, 2, 1}}})},
      {"3-D 1x1x1 kernel, stride 2", {1, 4, 5, 5, 5}, {3, 4, 1, 1, 1}, A({{"strides", V{2, 2, 2}}})},
      {"3-D depthwise", {1, 4, 3, 6, 12}, {4, 1, 2, 3, 3},
       A({{"group", int64_t{4}}, {"pads", V{1, 1, 1, 0, 1, 1}}, {"dilations", V{2, 1, 1}}})},
      // The depthwise loop's phases (stride 3, dilation 2 across phases), its 4-row blocks with 16-
      // and 8-wide vectors and a masked tail, rows wholly in the padding, a kernel wider than 16.
      {"depthwise stride 3, dilation 2", {1, 3, 14, 29}, {3, 1, 3, 5},
       A({{"group", int64_t{3}}, {"strides", V{3, 3}}, {"dilations", V{1, 2}}, {"pads", V{1, 2, 0, 3}}})},
      {"depthwise 5x5 stride 2, 29 columns", {1, 2, 21, 61}, {2, 1, 5, 5},
       A({{"group", int64_t{2}}, {"strides", V{2, 2}}, {"pads", V{2, 2, 2, 2}}})},
      {"depthwise, pads beyond the kernel", {1, 2, 3, 4}, {2, 1, 3, 3}, A({{"group", int64_t{2}}, {"pads", V{4, 4, 4, 4}}})},
      {"depthwise 1x17", {1, 2, 3, 40}, {2, 1, 1, 17}, A({{"group", int64_t{2}}, {"pads", V{0, 8, 0, 8}}})},
      {"depthwise, 65 kernel rows (grouped GEMM path)", {1, 2, 70, 3}, {2, 1, 65, 1}, A({{"group", int64_t{2}}})},
      // Few input channels (NhwcConv's direct path): 24 output channels (one panel, two vectors, the
      // second partial) and 40 (a full panel and a partial one), a stem's 7x7/2 with pads 3.
      {"3 channels in, 24 out", {1, 3, 9, 10}, {24, 3, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      {"stem 7x7/2, 3 channels in, 40 out", {2, 3, 23, 21}, {40, 3, 7, 7},
       A({{"pads", V{3, 3, 3, 3}}, {"strides", V{2, 2}}})},
      // 12 and 44 out: AVX2 takes 16 columns at a time, 12 of them the second vector partial; one
      // input channel and four (the unrolled channel loops at both ends).
      {"1 channel in, 12 out", {1, 1, 7, 20}, {12, 1, 3, 3}, A({{"pads", V{1, 1, 1, 1}}})},
      {"4 channels in, 44 out", {1, 4, 6, 19}, {44, 4, 3, 3}, A({{"pads", V{0, 1, 2, 1}}})},
      {"grouped, several tiles", {2, 12, 14, 15}, {9, 4, 3, 3},
       A({{"group", int64_t{3}}, {"pads", V{1, 1, 1, 1}}, {"strides", V{1, 2}}})},
  };
}

inline std::vector<double> ref_pool(const Tensor& x, const ir::Attributes& a, bool max) {
  const Shape& xs = x.shape();
  const RefWindow w = ref_window(xs, a.get_ints("kernel_shape"), a, a.get_int("ceil_mode", 0) != 0);
  const bool include_pad = a.get_int("count_include_pad", 0) != 0;
  const int64_t planes = xs[0] * xs[1], in_size = ir::numel(w.in), out_size = ir::numel(w.out);
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t o = 0; o < out_size; ++o) {
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t count = 0, padded = 0;
      for_taps(w, o, [&](int64_t idx, int64_t, bool in_padded) {
        padded += in_padded;
        if (idx < 0) return;
        mx = std::max(mx, at(x, p * in_size + idx));
        sum += at(x, p * in_size + idx);
        ++count;
      });
      y.push_back(max ? mx : sum / static_cast<double>(include_pad ? padded : count));
    }
  return y;
}

// GlobalMaxPool (max) or GlobalAveragePool of x [N, C, spatial...]: one value per (image, channel).
inline std::vector<double> ref_global_pool(const Tensor& x, bool max) {
  const Shape& s = x.shape();
  const int64_t planes = s[0] * s[1], size = x.numel() / planes;
  std::vector<double> y;
  for (int64_t p = 0; p < planes; ++p) {
    double sum = 0, m = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < size; ++i) {
      sum += at(x, p * size + i);
      m = std::max(m, at(x, p * size + i));
    }
    y.push_back(max ? m : sum / static_cast<double>(size));
  }
  return y;
}

struct PoolCase {
  Shape x;
  ir::Attributes a;
};

inline std::vector<PoolCase> pool_cases() {
  using V = std::vector<int64_t>;
  return {
      {{1, 2, 13}, A({{"kernel_shape", V{3}}, {"strides", V{2}}})},
      {{2, 3, 8, 9}, A({{"kernel_shape", V{3, 3}}})},
      {{2, 3, 8, 9}, A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      {{1, 2, 7, 10}, A({{"kernel_shape", V{3, 2}}, {"strides", V{2, 3}}, {"pads", V{0, 1, 2, 0}}})},
      {{1, 2, 7, 10}, A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"ceil_mode", int64_t{1}}})},
      {{1, 2, 6, 6},
       A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}, {"ceil_mode", int64_t{1}}})},
      {{1, 2, 9, 9}, A({{"kernel_shape", V{2, 2}}, {"dilations", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      {{1, 3, 7, 8}, A({{"kernel_shape", V{4, 3}}, {"strides", V{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}})},
      {{1, 3, 7, 8}, A({{"kernel_shape", V{4, 3}}, {"strides", V{2, 2}}, {"auto_pad", std::string("SAME_LOWER")}})},
      {{1, 3, 7, 8}, A({{"kernel_shape", V{4, 3}}, {"auto_pad", std::string("VALID")}})},
      {{1, 2, 5, 6, 7}, A({{"kernel_shape", V{2, 3, 2}}, {"pads", V{1, 0, 1, 0, 1, 1}}})},
      {{1, 16, 56, 56}, A({{"kernel_shape", V{3, 3}}, {"strides", V{2, 2}}, {"pads", V{1, 1, 1, 1}}})},
      // MaxPool's vector path: three phases with a dilation across them, 16- and 8-wide columns
      // and a masked tail, and a window wider than its tap table (the plain loop).
      {{1, 2, 11, 70}, A({{"kernel_shape", V{2, 3}}, {"strides", V{1, 3}}, {"dilations", V{1, 2}}, {"pads", V{0, 2, 1, 1}}})},
      {{1, 2, 4, 40}, A({{"kernel_shape", V{1, 17}}, {"pads", V{0, 8, 0, 8}}})},
  };
}

}  // namespace fusebox::optest
