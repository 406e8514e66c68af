// ONNX LSTM, GRU and RNN (opsets 7-21) as our ops of the same names. Our ops take every optional
// input (core/ir/recurrent_params.h): an absent one is filled here with ONNX's default, B, P and the
// initial states with zeros and sequence_lens with the sequence length for every batch entry.
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

void recurrent(HandlerRegistry& r, const char* op, int64_t gates, std::vector<std::string> attributes) {
  r.add({op, 7, 21, std::move(attributes), [op = std::string(op), gates](ImportContext& ctx, const OnnxNode& node) {
           const bool lstm = op == "LSTM";
           const int inputs = lstm ? 8 : 6;
           if (node.num_inputs() > inputs)
             throw Error(node.where() + ": takes at most " + std::to_string(inputs) + " inputs, got " +
                         std::to_string(node.num_inputs()));
           for (int i = 0; i < 3; ++i)
             if (node.input(i).empty()) throw Error(node.where() + ": input " + std::to_string(i) + " (X, W, R) is required");
           const ir::Shape x = ctx.type_of(node.input(0)).shape, rw = ctx.type_of(node.input(2)).shape;
           if (x.size() != 3 || rw.size() != 3)
             throw Error(node.where() + ": X " + ir::shape_str(x) + " and R " + ir::shape_str(rw) + " must have rank 3");
           const std::string direction = node.get_string("direction", "forward");
           const int64_t dirs = direction == "bidirectional" ? 2 : 1;
           const int64_t layout = node.get_int("layout", 0);
           const int64_t seq = layout == 0 ? x[0] : x[1], batch = layout == 0 ? x[1] : x[0];
           const int64_t hidden = node.get_int("hidden_size", rw[2]);
           if (hidden <= 0 || hidden > (int64_t{1} << 40))
             throw Error(node.where() + ": hidden_size " + std::to_string(hidden) + " is out of range");
           const ir::Shape state = layout == 0 ? ir::Shape{dirs, batch, hidden} : ir::Shape{batch, dirs, hidden};

           // An absent optional input: ONNX's default, as a constant of its own.
           auto fill = [&](int i, const char* what, ir::Tensor value) {
             std::string name = node.input(i);
             if (!name.empty()) return name;
             name = ctx.fresh(node.name() + ":" + what);
             ctx.define_constant(name, std::move(value));
             return name;
           };
           std::vector<std::string> in{node.input(0), node.input(1), node.input(2)};
           in.push_back(fill(3, "B", ir::Tensor(ir::DType::f32, {dirs, 2 * gates * hidden})));
           ir::Tensor lens(ir::DType::i64, {batch});
           for (int64_t b = 0; b < batch; ++b) lens.data<int64_t>()[b] = seq;
           in.push_back(fill(4, "sequence_lens", std::move(lens)));
           in.push_back(fill(5, "initial_h", ir::Tensor(ir::DType::f32, state)));
           if (lstm) {
             in.push_back(fill(6, "initial_c", ir::Tensor(ir::DType::f32, state)));
             in.push_back(fill(7, "P", ir::Tensor(ir::DType::f32, {dirs, 3 * hidden})));
           }

           ir::Attributes attrs;
           attrs.set("direction", direction);
           attrs.set("hidden_size", hidden);
           attrs.set("layout", layout);
           if (node.has("clip")) attrs.set("clip", node.get_float("clip", 0.0));
           if (const auto* a = node.find("activations")) {
             std::vector<std::string> names(a->strings().begin(), a->strings().end());
             attrs.set("activations", names);
           }
           if (node.has("activation_alpha")) attrs.set("activation_alpha", node.get_floats("activation_alpha"));
           if (node.has("activation_beta")) attrs.set("activation_beta", node.get_floats("activation_beta"));
           if (node.has("input_forget")) attrs.set("input_forget", node.get_int("input_forget", 0));
           if (node.has("linear_before_reset")) attrs.set("linear_before_reset", node.get_int("linear_before_reset", 0));

           std::vector<std::string> out;
           for (int i = 0; i < (lstm ? 3 : 2); ++i) out.push_back(i < node.num_outputs() ? node.output(i) : "");
           ctx.emit(node, op, in, std::move(attrs), out);
         }});
}

}  // namespace

void add_recurrent_handlers(HandlerRegistry& r) {
  const std::vector<std::string> common{"activation_alpha", "activation_beta", "activations", "clip", "direction",
                                        "hidden_size", "layout"};
  std::vector<std::string> lstm = common, gru = common;
  lstm.push_back("input_forget");
  gru.push_back("linear_before_reset");
  recurrent(r, "LSTM", 4, lstm);
  recurrent(r, "GRU", 3, gru);
  recurrent(r, "RNN", 1, common);
}

}  // namespace fusebox::models::onnx_import
