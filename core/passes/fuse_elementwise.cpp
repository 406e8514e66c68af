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

// root[i]: the last node of i's group. Readers come later, so walk backwards.
std::vector<size_t> group_roots(const ir::Graph& g, GraphUses& uses,
                                const std::vector<std::optional<ir::EwOp>>& ops, PassResult& r) {
  const size_t n = g.nodes.size();
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
  return root;
}

// A group's fused node before it is named: its inputs, program and broadcast output shape.
struct FusedProgram {
  ir::Node fused;
  std::vector<std::string> program;
  ir::Shape out_shape;
};

// Rebuilds g.nodes with each group of two or more ops as one FusedElementwise node, where the
// shapes and the target allow it.
class GroupFuser {
 public:
  GroupFuser(ir::Graph& g, const PassContext& ctx, GraphUses& uses,
             const std::vector<std::optional<ir::EwOp>>& ops, PassResult& r)
      : g_(g), ctx_(ctx), uses_(uses), ops_(ops), r_(r) {
    for (const auto& node : g.nodes) taken_.insert(node.name);
  }

  void keep(size_t i) { rebuilt_.push_back(std::move(g_.nodes[i])); }

  // Emits `group` (in execution order) whose last node is i.
  void emit(const std::vector<size_t>& group, size_t i) {
    FusedProgram p = program_of(group);
    const ir::Node& last = g_.nodes[i];
    std::string names = node_list(g_, group);
    if (std::string why = refusal(p, last); !why.empty()) {
      r_.near_miss("elementwise_chain", last.name, names + " not fused: " + why);
      for (size_t k : group) rebuilt_.push_back(std::move(g_.nodes[k]));
      return;
    }
    ir::Node& fused = p.fused;
    fused.op = "FusedElementwise";
    fused.name = take_name(fused_node_base(fused.op, g_.nodes[group[0]]));
    fused.outputs = last.outputs;
    fused.attrs.set("program", p.program);
    std::vector<std::string> removed;
    for (size_t k : group) removed.push_back(g_.nodes[k].name);
    r_.rewrite("elementwise_chain", removed, {fused.name}, {},
               "fused " + names + " -> " + fused.name + " [" + join(p.program, "; ") + "]");
    for (size_t k : group)
      if (k != i) dead_tensors_.push_back(g_.nodes[k].outputs[0]);
    rebuilt_.push_back(std::move(fused));
  }

  // Replaces g's nodes with the rebuilt ones and drops the fused intermediates; whether any
  // group was fused.
  bool finish(size_t n) {
    const bool changed = rebuilt_.size() != n;
    g_.nodes = std::move(rebuilt_);
    for (const auto& t : dead_tensors_) g_.remove_tensor(t);
    return changed;
  }

 private:
  // Program: instruction k computes group[k]; operands are earlier results or node inputs.
  FusedProgram program_of(const std::vector<size_t>& group) const {
    FusedProgram p;
    for (size_t k = 0; k < group.size(); ++k) {
      const ir::Node& node = g_.nodes[group[k]];
      ir::EwOperand operands[2];
      for (size_t j = 0; j < node.inputs.size(); ++j) {
        const std::string& t = node.inputs[j];
        auto pr = uses_.producer.find(t);
        auto pos = pr == uses_.producer.end() ? group.end()
                                              : std::find(group.begin(), group.end(), pr->second);
        if (pos != group.end()) {
          operands[j] = {false, static_cast<int>(pos - group.begin())};
          continue;
        }
        auto in = std::find(p.fused.inputs.begin(), p.fused.inputs.end(), t);
        operands[j] = {true, static_cast<int>(in - p.fused.inputs.begin())};
        if (in == p.fused.inputs.end()) {
          p.fused.inputs.push_back(t);
          p.out_shape = ir::broadcast_shapes(p.out_shape, g_.tensor(t).shape);
        }
      }
      p.program.push_back(ir::format_ew_instr({*ops_[group[k]], operands[0], operands[1]}));
    }
    return p;
  }

  // Why the program cannot replace the group ending at `last`, or "". Every input broadcasts to
  // the program's output; that must be what the chain produced.
  std::string refusal(const FusedProgram& p, const ir::Node& last) const {
    const ir::Shape& chain_shape = g_.tensor(last.outputs[0]).shape;
    if (p.out_shape != chain_shape)
      return "inputs broadcast to " + ir::shape_str(p.out_shape) + ", not " +
             ir::shape_str(chain_shape);
    if (p.fused.inputs.size() > kMaxFusedInputs)
      return std::to_string(p.fused.inputs.size()) + " inputs (limit 64)";
    std::vector<ir::TensorType> in_types;
    for (const auto& t : p.fused.inputs)
      in_types.push_back({g_.tensor(t).dtype, g_.tensor(t).shape});
    return target_refuses(ctx_, "FusedElementwise", in_types);
  }

  // Names are chosen while nodes move out of g.nodes, so track them here, not via unique_name.
  std::string take_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; taken_.count(name) || g_.has_tensor(name); ++k)
      name = base + "_" + std::to_string(k);
    taken_.insert(name);
    return name;
  }

  ir::Graph& g_;
  const PassContext& ctx_;
  GraphUses& uses_;
  const std::vector<std::optional<ir::EwOp>>& ops_;
  PassResult& r_;
  std::set<std::string> taken_;
  std::vector<ir::Node> rebuilt_;
  std::vector<std::string> dead_tensors_;
};

PassResult fuse_elementwise(ir::Graph& g, const PassContext& ctx) {
  PassResult r;
  GraphUses uses(g);
  const size_t n = g.nodes.size();
  std::vector<std::optional<ir::EwOp>> ops(n);
  for (size_t i = 0; i < n; ++i) ops[i] = program_op(g, g.nodes[i]);
  const std::vector<size_t> root = group_roots(g, uses, ops, r);
  std::vector<std::vector<size_t>> groups(n);
  for (size_t i = 0; i < n; ++i) groups[root[i]].push_back(i);  // each in execution order
  GroupFuser fuser(g, ctx, uses, ops, r);
  for (size_t i = 0; i < n; ++i) {
    const std::vector<size_t>& group = groups[root[i]];
    if (group.size() < 2)
      fuser.keep(i);
    else if (root[i] == i)  // the others are emitted with their root
      fuser.emit(group, i);
  }
  r.changed = fuser.finish(n);
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
