// channels_last: the layout a conv net runs in, chosen once for the whole graph.
//
// ONNX stores activations channels-first, [N, C, H, W]. The CPU's convolutions prefer them
// channels-last, [N, H, W, C] (ops/cpu/conv_nhwc.cpp): a conv is then the packed GEMM with the
// output positions as rows, written straight into the output, a pointwise conv reads its input in
// place, and a depthwise conv is a loop over contiguous channels. The channels-first kernel pays a
// transpose of every output tile instead (ops/cpu/conv.cpp).
//
// One forward sweep over the nodes, keeping for each tensor whether a channels-last copy of it
// exists:
//   - a Conv with a constant weight becomes NhwcConv; MaxPool, AveragePool and the global pools
//     whose input is already channels-last become their Nhwc forms (a pool alone stays NCHW: it
//     would only add transposes);
//   - an element-wise op (Add, Mul, HardSwish, ... : the schema says) whose activation inputs are
//     all channels-last follows them: broadcasting is unchanged when every operand is permuted the
//     same way, and a constant operand is permuted once, here ([C, 1, 1] -> [1, 1, 1, C]);
//   - any other reader of a channels-last tensor (Flatten, Concat, a graph output) gets it back
//     channels-first through a Transpose, inserted once per tensor just before its first reader;
//   - a Conv whose input is channels-first gets a Transpose into channels-last, unless it has a
//     few channels and one group (a stem on the graph's input): it reads them in place
//     (NhwcConv's channels_first_input).
// A Transpose that only moves size-1 dims ([1, 1, 1, C] <-> [1, C, 1, 1], after a global pool) is
// a Reshape: the planner aliases it, no copy. Each Transpose is a rewrite of its own saying what
// it copies per run, so the cost of the layout is counted where it is paid; the op that forced a
// transpose back is a near miss saying why it has no channels-last form.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "core/base/strings.h"
#include "core/ir/conv_params.h"
#include "core/ir/op_schema.h"
#include "core/passes/pass_manager.h"
#include "core/passes/rewrite_utils.h"

namespace fusebox::passes {

namespace {

constexpr const char* kPattern = "channels_last";
constexpr const char* kTranspose = "layout_transpose";

bool moves_only_unit_dims(const ir::Shape& in, const std::vector<int64_t>& perm) {
  int64_t last = -1;
  for (int64_t p : perm) {
    if (in[static_cast<size_t>(p)] <= 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

// A constant permuted channels-last for an op of output rank `rank`: its shape padded with leading
// 1s to that rank (as broadcasting aligns it), then transposed.
ir::Tensor permuted_constant(const ir::Tensor& v, size_t rank) {
  ir::Shape padded(rank - v.shape().size(), 1);
  padded.insert(padded.end(), v.shape().begin(), v.shape().end());
  const std::vector<int64_t> perm = ir::to_channels_last_perm(rank);
  ir::Shape out_shape;
  for (int64_t p : perm) out_shape.push_back(padded[static_cast<size_t>(p)]);
  ir::Tensor out(v.dtype(), out_shape);
  const size_t elem = ir::dtype_size(v.dtype());
  // Strides of the padded source, read in the output's order.
  std::vector<int64_t> src_stride(rank, 1);
  for (size_t i = rank - 1; i-- > 0;) src_stride[i] = src_stride[i + 1] * padded[i + 1];
  const int64_t total = v.numel();
  std::vector<int64_t> idx(rank, 0);
  const std::byte* src = v.bytes();
  std::byte* dst = out.bytes();
  for (int64_t i = 0; i < total; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * src_stride[static_cast<size_t>(perm[d])];
    std::memcpy(dst + static_cast<size_t>(i) * elem, src + static_cast<size_t>(off) * elem, elem);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

class ChannelsLast {
 public:
  ChannelsLast(ir::Graph& g, const PassContext& ctx) : g_(g), ctx_(ctx) {}

  PassResult run() {
    const ir::OpRegistry& ops = ir::OpRegistry::instance();
    std::vector<ir::Node> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    for (const auto& n : nodes) node_names_.insert(n.name);
    for (ir::Node& n : nodes) {
      if (convert_layout_op(n) || follow_elementwise(n, ops)) continue;
      for (const auto& in : n.inputs) back_to_first(in, &n);
      g_.nodes.push_back(std::move(n));
    }
    for (const auto& out : g_.outputs) back_to_first(out, nullptr);
    // Tensors whose channels-first value was never needed are gone.
    for (const auto& [first, last] : last_of_)
      if (!materialized_.count(first)) g_.remove_tensor(first);
    return std::move(r_);
  }

 private:
  // Conv, or a pool whose input is channels-last: its Nhwc form.
  bool convert_layout_op(ir::Node& n) {
    const std::string op = ir::channels_last_op(n.op);
    if (op.empty() || n.inputs.empty() || n.outputs.size() != 1) return false;
    const ir::TensorInfo& x = g_.tensor(n.inputs[0]);
    if (x.shape.size() < 3 || x.shape.size() > 5) return false;
    if (n.op != "Conv" && !last_of_.count(n.inputs[0])) return false;  // a pool alone stays
    if (std::find(n.inputs.begin(), n.inputs.end(), std::string()) != n.inputs.end()) return false;
    if (n.op == "Conv" && !g_.is_weight(n.inputs[1])) {
      r_.near_miss(kPattern, n.name,
                   n.name + " stays channels-first: its weight '" + n.inputs[1] +
                       "' is computed at run time (NhwcConv reorders a constant weight once)");
      return false;
    }
    std::vector<ir::TensorType> types;
    for (const auto& in : n.inputs) {
      const ir::TensorInfo& t = g_.tensor(in);
      types.push_back({t.dtype, t.shape});
    }
    // A stem (a few channels, one group) reads a channels-first input in place: no Transpose.
    const bool in_place = n.op == "Conv" && !last_of_.count(n.inputs[0]) && x.shape[1] <= ir::kChannelsFirstInputMaxChannels &&
                          n.attrs.get_int("group", 1) == 1;
    if (!in_place) types[0].shape = ir::channels_last(types[0].shape);
    if (std::string why = target_refuses(ctx_, op, types); !why.empty()) {
      r_.near_miss(kPattern, n.name, n.name + " stays channels-first: " + why);
      return false;
    }
    std::string how = " (channels-last)";
    if (in_place) {
      n.attrs.set("channels_first_input", int64_t{1});
      how = " (channels-last; reads its " + std::to_string(x.shape[1]) + "-channel input '" + n.inputs[0] +
            "' channels-first, in place: no transpose)";
    } else {
      n.inputs[0] = to_last(n.inputs[0], n.name);
    }
    const std::string before = n.op;
    n.op = op;
    retarget_output(n);
    r_.rewrite(kPattern, {}, {}, {n.name}, n.name + ": " + before + " -> " + op + how);
    g_.nodes.push_back(std::move(n));
    return true;
  }

  // An element-wise op whose activation inputs are channels-last: it reads and writes them so.
  bool follow_elementwise(ir::Node& n, const ir::OpRegistry& ops) {
    const ir::OpSchema* s = ops.find(n.op);
    if (!s || !s->elementwise || n.outputs.size() != 1) return false;
    if (std::none_of(n.inputs.begin(), n.inputs.end(), [&](const std::string& i) { return last_of_.count(i) != 0; }))
      return false;
    const size_t rank = g_.tensor(n.outputs[0]).shape.size();
    for (const auto& in : n.inputs) {
      if (in.empty()) continue;
      const ir::TensorInfo& t = g_.tensor(in);
      const bool ok = last_of_.count(in) ? t.shape.size() == rank
                                         : ir::numel(t.shape) == 1 || (g_.is_weight(in) && t.shape.size() <= rank);
      if (!ok) {
        r_.near_miss(kPattern, n.name,
                     n.name + " (" + n.op + ") stays channels-first: its input '" + in + "' " +
                         ir::shape_str(t.shape) + " is computed channels-first at run time");
        return false;
      }
    }
    std::vector<std::string> permuted;
    for (auto& in : n.inputs) {
      if (in.empty()) continue;
      if (last_of_.count(in)) {
        in = last_of_.at(in);
      } else if (g_.is_weight(in) && ir::numel(g_.tensor(in).shape) != 1) {
        const std::string name = permuted_weight(in, rank);
        permuted.push_back("'" + in + "' " + ir::shape_str(g_.tensor(in).shape) + " -> " +
                           ir::shape_str(g_.tensor(name).shape));
        in = name;
      }
    }
    retarget_output(n);
    r_.rewrite(kPattern, {}, {}, {n.name},
               n.name + " (" + n.op + ") follows its inputs channels-last" +
                   (permuted.empty() ? "" : "; constant " + join(permuted, ", ") + " permuted once"));
    g_.nodes.push_back(std::move(n));
    return true;
  }

  // A name no tensor and no node (emitted or still to come) has: "<prefix>", "<prefix>_1", ...
  std::string unique(const std::string& prefix) {
    std::string name = prefix;
    for (int i = 1; g_.has_tensor(name) || node_names_.count(name); ++i) name = prefix + "_" + std::to_string(i);
    return name;
  }

  // n's output becomes a new channels-last tensor; the channels-first one is made when read.
  void retarget_output(ir::Node& n) {
    const std::string first = n.outputs[0];
    const ir::TensorInfo& info = g_.tensor(first);
    const std::string last = unique(first + ".nhwc");
    g_.add_tensor({last, info.dtype, ir::channels_last(info.shape), ir::TensorKind::Intermediate, std::nullopt});
    n.outputs[0] = last;
    last_of_[first] = last;
  }

  std::string permuted_weight(const std::string& name, size_t rank) {
    const std::string key = name + "@" + std::to_string(rank);
    if (auto it = permuted_.find(key); it != permuted_.end()) return it->second;
    const std::string out = unique(name + ".nhwc");
    g_.add_weight(out, permuted_constant(*g_.tensor(name).value, rank));
    permuted_[key] = out;
    return out;
  }

  // The channels-last form of tensor x (a Conv's input): its copy if one exists, else a Transpose.
  std::string to_last(const std::string& x, const std::string& reader) {
    if (auto it = last_of_.find(x); it != last_of_.end()) return it->second;
    const ir::TensorInfo& info = g_.tensor(x);
    const std::string out = unique(x + ".nhwc");
    g_.add_tensor({out, info.dtype, ir::channels_last(info.shape), ir::TensorKind::Intermediate, std::nullopt});
    emit_transpose(x, out, ir::to_channels_last_perm(info.shape.size()), info,
                   "into channels-last for " + reader);
    last_of_[x] = out;
    materialized_.insert(x);  // x itself stays what it was
    return out;
  }

  // Before `reader` (null: the graph's outputs) reads tensor t: t's channels-first value, made
  // once from its channels-last copy.
  void back_to_first(const std::string& t, const ir::Node* reader) {
    auto it = last_of_.find(t);
    if (it == last_of_.end() || materialized_.count(t)) return;
    const ir::TensorInfo& info = g_.tensor(t);
    const std::string why = reader ? "for " + reader->name + " (" + reader->op + ", which has no channels-last form)"
                                   : "for the graph's output";
    emit_transpose(it->second, t, ir::to_channels_first_perm(info.shape.size()), info,
                   "back to channels-first " + why);
    if (reader)
      r_.near_miss(kPattern, reader->name,
                   reader->name + " (" + reader->op + ") has no channels-last form: the layout ends there");
    materialized_.insert(t);
  }

  // A Transpose from `in` to `out` by `perm`, or a Reshape when only size-1 dims move. `info` is
  // the channels-first tensor's (for the sizes in the sentence).
  void emit_transpose(const std::string& in, const std::string& out, const std::vector<int64_t>& perm,
                      const ir::TensorInfo& info, const std::string& what) {
    const ir::Shape& in_shape = g_.tensor(in).shape;
    ir::Node t;
    t.name = unique(out + ".layout");
    node_names_.insert(t.name);
    t.inputs = {in};
    t.outputs = {out};
    std::string text;
    if (moves_only_unit_dims(in_shape, perm)) {
      t.op = "Reshape";
      t.attrs.set("shape", g_.tensor(out).shape);
      text = t.name + ": '" + in + "' " + what + " is a Reshape " + ir::shape_str(in_shape) + " -> " +
             ir::shape_str(g_.tensor(out).shape) + " (only size-1 dims move: no copy)";
    } else {
      t.op = "Transpose";
      t.attrs.set("perm", perm);
      ++copies_;
      text = t.name + ": Transpose " + fmt_ints(perm) + " of '" + in + "' " + what + ": copies " +
             format_bytes(static_cast<double>(info.nbytes())) + " a run (layout transpose " +
             std::to_string(copies_) + ")";
    }
    r_.rewrite(kTranspose, {}, {t.name}, {}, std::move(text));
    g_.nodes.push_back(std::move(t));
  }

  ir::Graph& g_;
  const PassContext& ctx_;
  PassResult r_;
  std::map<std::string, std::string> last_of_;  // tensor -> its channels-last copy
  std::set<std::string> materialized_;          // tensors whose channels-first value exists
  std::map<std::string, std::string> permuted_; // constant@rank -> its permuted copy
  std::set<std::string> node_names_;           // every node's, emitted or still to come
  int copies_ = 0;
};

PassResult channels_last(ir::Graph& g, const PassContext& ctx) {
  bool any_conv = false;
  for (const auto& n : g.nodes) any_conv = any_conv || n.op == "Conv";
  if (!any_conv) return {};
  PassResult r = ChannelsLast(g, ctx).run();
  r.changed = !r.rewrites.empty();
  return r;
}

}  // namespace

void register_channels_last(PassRegistry& registry) {
  registry.add({"channels_last",
                "conv nets run channels-last (NHWC): Conv and the pools after it become NhwcConv and "
                "Nhwc*Pool, the element-wise ops between them follow, and a Transpose goes in where "
                "the layout starts and out where it ends (a Reshape where only size-1 dims move)",
                channels_last, /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
