// ONNX Softmax (opset < 13: 2-D coercion at axis; >= 13: one axis), LayerNormalization (with its
// optional Mean and InvStdDev outputs), ReduceMean/Max/Min (axes attribute < 18, input >= 18),
// ReduceSum (input from 13), ReduceProd and the composite reductions (ReduceL1, ReduceL2,
// ReduceSumSquare, ReduceLogSum, ReduceLogSumExp), ArgMax and ArgMin, CumSum; LogSoftmax and Hardmax like Softmax; InstanceNormalization,
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss built from simpler ops.
#include <utility>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

// One reduction of x into y (axes from the attribute or, from opset `input_since`, the input).
void reduce_core(ImportContext& ctx, const OnnxNode& node, const std::string& op, int64_t input_since,
                 const std::string& x, const std::string& y) {
  std::vector<int64_t> axes;
  if (ctx.opset() >= input_since) {
    if (node.has("axes"))
      throw Error(node.where() + ": opset " + std::to_string(input_since) +
                  " takes axes as an input, not an attribute");
    if (!node.input(1).empty()) axes = ctx.constant_ints(node.input(1), node, "axes");
    if (axes.empty() && node.get_int("noop_with_empty_axes", 0) != 0) {
      ctx.emit(node, "Identity", {x}, {}, {y}, "_" + op);
      return;
    }
  } else {
    if (node.has("noop_with_empty_axes"))
      throw Error(node.where() + ": noop_with_empty_axes needs opset >= " + std::to_string(input_since));
    axes = node.get_ints("axes");
  }
  ir::Attributes a = attrs_of({{"keepdims", node.get_int("keepdims", 1)}});
  if (!axes.empty()) a.set("axes", axes);
  ctx.emit(node, op, {x}, std::move(a), {y}, y == node.output(0) ? "" : "_" + op);
}

// ReduceMean/Sum/Max/Min: axes are an attribute before opset `input_since` and an optional input
// from it on, where noop_with_empty_axes makes "no axes" mean "reduce nothing" instead of all.
//
// The composite reductions are a reduction between an element-wise op before (`pre`: "Abs",
// "Exp", or "Square" for x * x) and one after (`post`: "Sqrt", "Log"), with `op` the reduction:
// ReduceL2 = Sqrt(ReduceSum(x * x)), ReduceLogSumExp = Log(ReduceSum(Exp(x))) (as ONNX's
// reference computes it, without subtracting the maximum), ...
void reduce(HandlerRegistry& r, const char* onnx_op, int64_t input_since, const char* our_op = nullptr,
            const char* pre = nullptr, const char* post = nullptr) {
  r.add({onnx_op, 1, 21, {"axes", "keepdims", "noop_with_empty_axes"},
         [op = std::string(our_op ? our_op : onnx_op), input_since, pre = std::string(pre ? pre : ""),
          post = std::string(post ? post : "")](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           std::string x = node.input(0), y = node.output(0);
           if (!pre.empty()) {
             std::string t = ctx.fresh(y + "_" + pre);
             if (pre == "Square") ctx.emit(node, "Mul", {x, x}, {}, {t}, "_Square");
             else ctx.emit(node, pre, {x}, {}, {t}, "_" + pre);
             x = t;
           }
           if (!post.empty()) y = ctx.fresh(node.output(0) + "_" + op);
           reduce_core(ctx, node, op, input_since, x, y);
           if (!post.empty()) ctx.emit(node, post, {y}, {}, {node.output(0)}, "_" + post);
         }});
}

// NegativeLogLikelihoodLoss of `log_prob` [N, C, ...]: loss[n, d] = -log_prob[n, target[n, d], d] *
// weight[target[n, d]], 0 where target is ignore_index; reduced by none, sum or mean (divided by
// the weights' sum) into `y`. The target holds class indices, known at load time (integer inputs
// are), so the gather indices and the ignore mask are constants and the loss is GatherElements,
// Gather (of a weight that may be computed at run time), Mul, Neg and ReduceSum.
void nll_loss(ImportContext& ctx, const OnnxNode& node, const std::string& log_prob, const std::string& target_value,
              const std::string& weight, const std::string& y) {
  const std::string reduction = node.get_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    throw Error(node.where() + ": reduction '" + reduction + "' is not none, sum or mean");
  const ir::Shape in = ctx.type_of(log_prob).shape;
  if (in.size() < 2) throw Error(node.where() + ": input must be [N, C, ...], got " + ir::shape_str(in));
  const ir::Tensor& target = ctx.constant(target_value, node, "target");
  ir::Shape ts = in;
  ts.erase(ts.begin() + 1);
  if (target.dtype() != ir::DType::i64 || target.shape() != ts)
    throw Error(node.where() + ": target " + ir::shape_str(target.shape()) + " must be integer class indices of shape " +
                ir::shape_str(ts));
  const bool has_ignore = node.has("ignore_index");
  const int64_t ignore = node.get_int("ignore_index", 0);
  ir::Shape idx_shape = ts;
  idx_shape.insert(idx_shape.begin() + 1, 1);
  ir::Tensor idx(ir::DType::i64, idx_shape), flat(ir::DType::i64, ts), mask(ir::DType::f32, ts);
  for (int64_t i = 0; i < target.numel(); ++i) {
    const int64_t c = target.data<int64_t>()[i];
    const bool skip = has_ignore && c == ignore;
    if (!skip && (c < 0 || c >= in[1]))
      throw Error(node.where() + ": target element " + std::to_string(i) + " is class " + std::to_string(c) +
                  ", out of range for " + std::to_string(in[1]) + " classes");
    idx.data<int64_t>()[i] = flat.data<int64_t>()[i] = skip ? 0 : c;
    mask.data<float>()[i] = skip ? 0.0f : 1.0f;
  }
  
  auto tmp = [&](const char* what) { return ctx.fresh(y + "_" + what); };
  std::string idx_v = tmp("index"), flat_v = tmp("class"), mask_v = tmp("mask");
  ctx.define_constant(idx_v, std::move(idx));
  ctx.define_constant(flat_v, std::move(flat));
  ctx.define_constant(mask_v, std::move(mask));
  std::string picked = tmp("picked"), per = tmp("per_element"), weights = mask_v;
  ctx.emit(node, "GatherElements", {log_prob, idx_v}, attrs_of({{"axis", int64_t{1}}}), {picked}, "_pick");
  ctx.emit(node, "Reshape", {picked}, attrs_of({{"shape", std::vector<int64_t>(ts)}}), {per}, "_squeeze");
  if (!weight.empty()) {
    if (ctx.type_of(weight).shape != ir::Shape{in[1]})
      throw Error(node.where() + ": weight " + ir::shape_str(ctx.type_of(weight).shape) + " must be [" +
                  std::to_string(in[1]) + "], one per class");
    std::string w = tmp("class_weight"), wm = tmp("weight");
    ctx.emit(node, "Gather", {weight, flat_v}, attrs_of({{"axis", int64_t{0}}}), {w}, "_weight");
    ctx.emit(node, "Mul", {w, mask_v}, {}, {wm}, "_mask");
    weights = wm;
  }
  std::string weighted = tmp("weighted");
  ctx.emit(node, "Mul", {per, weights}, {}, {weighted}, "_weigh");
  if (reduction == "none") {
    ctx.emit(node, "Neg", {weighted}, {}, {y}, "_neg");
    return;
  }
  std::string loss = tmp("loss"), total = tmp("total");
  ctx.emit(node, "Neg", {weighted}, {}, {loss}, "_neg");
  if (reduction == "sum") {
    ctx.emit(node, "ReduceSum", {loss}, attrs_of({{"keepdims", int64_t{0}}}), {y}, "_sum");
    return;
  }
  std::string wsum = tmp("weight_sum");
  ctx.emit(node, "ReduceSum", {loss}, attrs_of({{"keepdims", int64_t{0}}}), {total}, "_sum");
  ctx.emit(node, "ReduceSum", {weights}, attrs_of({{"keepdims", int64_t{0}}}), {wsum}, "_weight_sum");
  ctx.emit(node, "Div", {total, wsum}, {}, {y}, "_mean");

}

}  // namespace

void add_normalization_handlers(HandlerRegistry& r) {
  for (const char* softmax : {"Softmax", "LogSoftmax", "Hardmax"})
  r.add({softmax, 1, 21, {"axis"}, [op = std::string(softmax)](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           const std::string& x = node.input(0);
           ir::Shape shape = ctx.type_of(x).shape;
           auto rank = static_cast<int64_t>(shape.size());
           if (ctx.opset() >= 13) {
             ctx.emit(node, op, {x}, attrs_of({{"axis", node.get_int("axis", -1)}}), {node.output(0)});
             return;
           }
           // Before opset 13: the input is seen as 2-D [prod(dims < axis), prod(dims >= axis)] and
           // normalized over the second dim.
           int64_t axis = node.get_int("axis", 1);
           if (axis < 0) axis += rank;
           if (axis < 0 || axis > rank || (rank > 0 && axis == rank))
             throw Error(node.where() + ": axis " + std::to_string(node.get_int("axis", 1)) + " out of range for rank " +
                         std::to_string(rank));
           if (rank == 0 || axis == rank - 1) {
             ctx.emit(node, op, {x}, attrs_of({{"axis", int64_t{-1}}}), {node.output(0)});
             return;
           }
           std::string flat = ctx.fresh(node.output(0) + "_2d"), soft = ctx.fresh(node.output(0) + "_softmax");
           ctx.emit(node, "Flatten", {x}, attrs_of({{"axis", axis}}), {flat}, "_Flatten");
           ctx.emit(node, op, {flat}, attrs_of({{"axis", int64_t{-1}}}), {soft}, "_" + op);
           ctx.emit(node, "Reshape", {soft}, attrs_of({{"shape", std::vector<int64_t>(shape)}}), {node.output(0)},
                    "_Reshape");
         }});

  r.add({"LayerNormalization", 17, 21, {"axis", "epsilon", "stash_type"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects X and Scale");
           int64_t stash = node.get_int("stash_type", 1);
           if (stash != 1) throw Error(node.where() + ": stash_type " + std::to_string(stash) + " is not supported (only 1, float32)");
           std::vector<std::string> in{node.input(0), node.input(1)};
           if (!node.input(2).empty()) in.push_back(node.input(2));
           std::vector<std::string> out;
           int n = std::min(node.num_outputs(), 3);
           for (int i = 0; i < n; ++i) out.push_back(node.output(i));
           if (out.empty()) throw Error(node.where() + ": has no outputs");
           ir::Attributes a = attrs_of({{"axis", node.get_int("axis", -1)}, {"epsilon", node.get_float("epsilon", 1e-5)}});
           ctx.emit(node, "LayerNorm", in, std::move(a), out);
         }});

  for (auto [op, since] : {std::pair{"ReduceMean", 18}, {"ReduceSum", 13}, {"ReduceMax", 18}, {"ReduceMin", 18}})
    reduce(r, op, since);
  // Added for the ONNX conformance count (issue 25): ReduceProd, and the composite reductions.
  reduce(r, "ReduceProd", 18);
  reduce(r, "ReduceL1", 18, "ReduceSum", "Abs");
  reduce(r, "ReduceL2", 18, "ReduceSum", "Square", "Sqrt");
  reduce(r, "ReduceSumSquare", 18, "ReduceSum", "Square");
  reduce(r, "ReduceLogSum", 18, "ReduceSum", nullptr, "Log");
  reduce(r, "ReduceLogSumExp", 18, "ReduceSum", "Exp", "Log");

  r.add({"NegativeLogLikelihoodLoss", 12, 21, {"ignore_index", "reduction"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects input and target");
           nll_loss(ctx, node, node.input(0), node.input(1), node.input(2), node.output(0));
         }});

  // SoftmaxCrossEntropyLoss = NegativeLogLikelihoodLoss(LogSoftmax(scores) over the classes, dim 1),
  // its optional second output the log probabilities.
  r.add({"SoftmaxCrossEntropyLoss", 12, 21, {"ignore_index", "reduction"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": expects scores and labels");
           if (ctx.type_of(node.input(0)).shape.size() < 2)
             throw Error(node.where() + ": scores must be [N, C, ...], got " + ir::shape_str(ctx.type_of(node.input(0)).shape));
           std::string log_prob = node.output(1).empty() ? ctx.fresh(node.output(0) + "_log_prob") : node.output(1);
           ctx.emit(node, "LogSoftmax", {node.input(0)}, attrs_of({{"axis", int64_t{1}}}), {log_prob}, "_LogSoftmax");
           nll_loss(ctx, node, log_prob, node.input(1), node.input(2), node.output(0));
         }});

  // InstanceNormalization: each (n, c) plane normalized over its spatial dims, then scale[c] and
  // B[c]. Built from ReduceMean, Sub, Mul, Add, Sqrt, Div (the means accumulate in double).
  r.add({"InstanceNormalization", 6, 21, {"epsilon"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty() || node.input(2).empty())
             throw Error(node.where() + ": expects inputs input, scale and B");
           const std::string x = node.input(0), y = node.output(0);
           const ir::Shape shape = ctx.type_of(x).shape;
           if (shape.size() < 3)
             throw Error(node.where() + ": input must be [N, C, D1, ...], got " + ir::shape_str(shape));
           for (int i = 1; i <= 2; ++i)
             if (ctx.type_of(node.input(i)).shape != ir::Shape{shape[1]})
               throw Error(node.where() + ": " + (i == 1 ? "scale " : "B ") + ir::shape_str(ctx.type_of(node.input(i)).shape) +
                           " must be [" + std::to_string(shape[1]) + "], one per channel");
           std::vector<int64_t> axes, per_channel(shape.size() - 1, 1);
           for (size_t d = 2; d < shape.size(); ++d) axes.push_back(static_cast<int64_t>(d));
           per_channel[0] = shape[1];
           auto tmp = [&](const char* what) { return ctx.fresh(y + "_" + what); };
           const ir::Attributes mean_attrs = attrs_of({{"axes", axes}, {"keepdims", int64_t{1}}});
           std::string mean = tmp("mean"), d = tmp("centered"), sq = tmp("squared"), var = tmp("var"),
                       eps = tmp("epsilon"), ve = tmp("var_eps"), sd = tmp("std"), n = tmp("normalized"),
                       sc = tmp("scale"), bc = tmp("bias"), scaled = tmp("scaled");
           ctx.emit(node, "ReduceMean", {x}, mean_attrs, {mean}, "_mean");
           ctx.emit(node, "Sub", {x, mean}, {}, {d}, "_center");
           ctx.emit(node, "Mul", {d, d}, {}, {sq}, "_square");
           ctx.emit(node, "ReduceMean", {sq}, mean_attrs, {var}, "_var");
           ctx.define_constant(eps, scalar_f32(static_cast<float>(node.get_float("epsilon", 1e-5))));
           ctx.emit(node, "Add", {var, eps}, {}, {ve}, "_eps");
           ctx.emit(node, "Sqrt", {ve}, {}, {sd}, "_sqrt");
           ctx.emit(node, "Div", {d, sd}, {}, {n}, "_normalize");
           ctx.emit(node, "Reshape", {node.input(1)}, attrs_of({{"shape", per_channel}}), {sc}, "_scale_shape");
           ctx.emit(node, "Reshape", {node.input(2)}, attrs_of({{"shape", per_channel}}), {bc}, "_bias_shape");
           ctx.emit(node, "Mul", {n, sc}, {}, {scaled}, "_scale");
           ctx.emit(node, "Add", {scaled, bc}, {}, {y}, "_bias");
         }});

  // CumSum: its axis is an input (a scalar or one-element tensor), which must be known at load time,
  // as Reduce*'s axes are; HF decoders' exports compute position ids with it.
  r.add({"CumSum", 11, 21, {"exclusive", "reverse"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty() || node.input(1).empty()) throw Error(node.where() + ": takes x and axis");
           const std::vector<int64_t> axis = ctx.constant_ints(node.input(1), node, "axis");
           if (axis.size() != 1)
             throw Error(node.where() + ": axis must hold one value, got " + std::to_string(axis.size()));
           const ir::Shape x = ctx.type_of(node.input(0)).shape;
           const int a = ir::normalize_axis(axis[0], x.size(), node.where() + " axis");
           ir::Attributes attrs = attrs_of({{"axis", int64_t{a}},
                                            {"exclusive", int64_t{node.get_int("exclusive", 0) != 0}},
                                            {"reverse", int64_t{node.get_int("reverse", 0) != 0}}});
           ctx.emit(node, "CumSum", {node.input(0)}, std::move(attrs), {node.output(0)});
         }});

  for (const char* arg : {"ArgMax", "ArgMin"})
  r.add({arg, 1, 21, {"axis", "keepdims", "select_last_index"}, [op = std::string(arg)](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input");
           if (node.has("select_last_index") && ctx.opset() < 12)
             throw Error(node.where() + ": select_last_index needs opset >= 12");
           ir::Shape x = ctx.type_of(node.input(0)).shape;
           int axis = ir::normalize_axis(node.get_int("axis", 0), x.size(), node.where() + " axis");
           ir::Attributes a = attrs_of({{"axis", int64_t{axis}},
                                        {"keepdims", int64_t{node.get_int("keepdims", 1) != 0}},
                                        {"select_last_index", int64_t{node.get_int("select_last_index", 0) != 0}}});
           ctx.emit(node, op, {node.input(0)}, std::move(a), {node.output(0)});
         }});
}

}  // namespace fusebox::models::onnx_import
