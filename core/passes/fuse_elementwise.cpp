// fuse_elementwise: element-wise ops are memory-bound, so a chain of them costs one pass over
// memory per op. Fusing the chain into one FusedElementwise node (an interpreted program, see
// core/ir/elementwise_program.h) reads the inputs once and writes the result once.
//
// A node joins its reader when its output has exactly that one reader and is not a graph output;
// the groups this forms are trees ending at one node, whose output the fused node keeps. Groups of
// one op stay as they are. A group stops growing at ir::kMaxEwLiveResults ops, a program size
// every backend runs whatever the tree's shape: a longer chain becomes several fused nodes.
#include <algorithm>
#include <cstdint>
#include <set>

#include "core/base/strings.h"
#include "core/ir/elementwise_program.h"
#include "core/ir/op_schema.h"
#include "core/passes/pass_manager.h"
#include "core/passes/rewrite_utils.h"

namespace fusebox::passes {

namespace {

constexpr size_t kMaxFusedInputs = 64;  // FusedElementwise schema limit

// The program op for `node`, when it can run inside a FusedElementwise kernel (f32 only).
std::optional<ir::EwOp> program_op(const ir::Graph& g, const ir::Node& node) {
  const ir::OpSchema* schema = ir::OpRegistry::instance().find(node.op);
  ir::EwOp op;
  if (!schema || !schema->elementwise || node.outputs.size() != 1 ||
      !ir::ew_from_op(node.op, node.attrs.get_string("approximate", "none"), &op))
    return std::nullopt;
  for (const auto& t : node.inputs)
    if (g.tensor(t).dtype != ir::DType::f32) return std::nullopt;
  return op;
}

PassResult fuse_elementwise(ir::Graph& g, const PassContext& ctx) {
  PassResult r;
  GraphUses uses(g);
  const size_t n = g.nodes.size();
  std::vector<std::optional<ir::EwOp>> ops(n);
  for (size_t i = 0; i < n; ++i) ops[i] = program_op(g, g.nodes[i]);

  // root[i]: the last node of i's group. Readers come later, so walk backwards.
  std::vector<size_t> root(n), group_size(n, 1);
  for (size_t i = n; i-- > 0;) {
    root[i] = i;
    if (!ops[i]) continue;
    const std::string& out = g.nodes[i].outputs[0];
    const auto& readers = uses.readers_of(out);
    bool fusable_reader =
        std::any_of(readers.begin(), readers.end(), [&](size_t k) { return ops[k].has_value(); });
    if (readers.size() == 1 && fusable_reader && !g.is_output(out)) {
      const size_t reader_root = root[readers[0]];
      if (group_size[reader_root] < static_cast<size_t>(ir::kMaxEwLiveResults)) {
        root[i] = reader_root;
        ++group_size[reader_root];
      } else {
        r.near_miss("elementwise_chain", g.nodes[i].name,
                    g.nodes[i].name + " starts a new program: the one it feeds has " +
                        std::to_string(ir::kMaxEwLiveResults) + " ops (the limit)");
      }
    } else if (fusable_reader)
      r.near_miss("elementwise_chain", g.nodes[i].name,
                  g.nodes[i].name + " ends an element-wise chain: its output is " +
                      uses.other_uses(out, SIZE_MAX));
  }

  std::vector<std::vector<size_t>> groups(n);
  for (size_t i = 0; i < n; ++i) groups[root[i]].push_back(i);  // each in execution order
  // Names are chosen while nodes move out of g.nodes, so track them here, not via unique_name.
  std::set<std::string> taken;
  for (const auto& node : g.nodes) taken.insert(node.name);
  auto take_name = [&](const std::string& base) {
    std::string name = base;
    for (int k = 1; taken.count(name) || g.has_tensor(name); ++k)
      name = base + "_" + std::to_string(k);
    taken.insert(name);
    return name;
  };
  std::vector<ir::Node> rebuilt;
  std::vector<std::string> dead_tensors;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<size_t>& group = groups[root[i]];
    if (group.size() < 2) {
      rebuilt.push_back(std::move(g.nodes[i]));
      continue;
    }
    if (root[i] != i) continue;  // emitted with its root
    // Program: instruction k computes group[k]; operands are earlier results or node inputs.
    ir::Node fused;
    std::vector<std::string> program;
    ir::Shape out_shape;
    for (size_t k = 0; k < group.size(); ++k) {
      const ir::Node& node = g.nodes[group[k]];
      ir::EwOperand operands[2];
      for (size_t j = 0; j < node.inputs.size(); ++j) {
        const std::string& t = node.inputs[j];
        auto p = uses.producer.find(t);
        auto pos = p == uses.producer.end() ? group.end()
                                            : std::find(group.begin(), group.end(), p->second);
        if (pos != group.end()) {
          operands[j] = {false, static_cast<int>(pos - group.begin())};
          continue;
        }
        auto in = std::find(fused.inputs.begin(), fused.inputs.end(), t);
        operands[j] = {true, static_cast<int>(in - fused.inputs.begin())};
        if (in == fused.inputs.end()) {
          fused.inputs.push_back(t);
          out_shape = ir::broadcast_shapes(out_shape, g.tensor(t).shape);
        }
      }
      program.push_back(ir::format_ew_instr({*ops[group[k]], operands[0], operands[1]}));
    }
    const ir::Node& last = g.nodes[i];
    std::string names = node_list(g, group);
    // Every input broadcasts to the program's output; that must be what the chain produced.
    if (out_shape != g.tensor(last.outputs[0]).shape || fused.inputs.size() > kMaxFusedInputs) {
      r.near_miss("elementwise_chain", last.name,
                  names + " not fused: " +
                      (out_shape != g.tensor(last.outputs[0]).shape
                           ? "inputs broadcast to " + ir::shape_str(out_shape) + ", not " +
                                 ir::shape_str(g.tensor(last.outputs[0]).shape)
                           : std::to_string(fused.inputs.size()) + " inputs (limit 64)"));
      for (size_t k : group) rebuilt.push_back(std::move(g.nodes[k]));
      continue;
    }
    std::vector<ir::TensorType> in_types;
    for (const auto& t : fused.inputs) in_types.push_back({g.tensor(t).dtype, g.tensor(t).shape});
    if (std::string why = target_refuses(ctx, "FusedElementwise", in_types); !why.empty()) {
      r.near_miss("elementwise_chain", last.name, names + " not fused: " + why);
      for (size_t k : group) rebuilt.push_back(std::move(g.nodes[k]));
      continue;
    }
    fused.op = "FusedElementwise";
    fused.name = take_name(fused_node_name(g, fused.op, g.nodes[group[0]]));
    fused.outputs = last.outputs;
    fused.attrs.set("program", program);
    std::vector<std::string> removed;
    for (size_t k : group) removed.push_back(g.nodes[k].name);
    r.rewrite("elementwise_chain", removed, {fused.name}, {},
              "fused " + names + " -> " + fused.name + " [" + join(program, "; ") + "]");
    for (size_t k : group)
      if (k != i) dead_tensors.push_back(g.nodes[k].outputs[0]);
    rebuilt.push_back(std::move(fused));
  }
  r.changed = rebuilt.size() != n;
  g.nodes = std::move(rebuilt);
  for (const auto& t : dead_tensors) g.remove_tensor(t);
  return r;
}

}  // namespace

void register_fuse_elementwise(PassRegistry& registry) {
  registry.add(
      {"fuse_elementwise",
       "fuses chains of element-wise ops (single-reader intermediates) into FusedElementwise",
       fuse_elementwise, /*to_fixed_point=*/false});
}

}  // namespace fusebox::passes
