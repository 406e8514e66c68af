// ONNX If, when its condition is known at load time: the branch taken is inlined into the outer
// graph (its nodes converted through the handlers like any others, its values renamed
// "<If node>/then/<name>" so that two inlined branches never collide, its reads of outer values
// left as they are, its outputs becoming the If's outputs). Nested Ifs inline the same way, one
// level at a time. fusebox plans one static graph, so an If whose condition is computed at run time
// is refused naming the graph input it depends on (the importer's pre-check usually says so first,
// for every such If at once; this is the same sentence for the ones inside branches).
#include <algorithm>
#include <map>
#include <set>

#include "core/base/error.h"
#include "core/models/onnx/context.h"

namespace fusebox::models::onnx_import {

namespace {

// Rewrites, inside `g` and the graphs nested in it, the reads of outer values that `renamed`
// renames; names `g` defines itself shadow the outer ones.
void rename_outer_reads(onnx::GraphProto& g, std::map<std::string, std::string> renamed) {
  for (const auto& t : g.initializer()) renamed.erase(t.name());
  for (const auto& v : g.input()) renamed.erase(v.name());
  for (auto& n : *g.mutable_node()) {
    for (auto& in : *n.mutable_input()) {
      auto it = renamed.find(in);
      if (it != renamed.end()) in = it->second;
    }
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) rename_outer_reads(*a.mutable_g(), renamed);
      for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, renamed);
    }
    for (const auto& out : n.output()) renamed.erase(out);
  }
  for (auto& out : *g.mutable_output()) {
    auto it = renamed.find(out.name());
    if (it != renamed.end()) out.set_name(it->second);
  }
}

// The graph inputs the graph tensor `tensor` is computed from, for the refusal.
std::vector<std::string> run_time_sources(const ir::Graph& g, const std::string& tensor) {
  std::set<std::string> inputs(g.inputs.begin(), g.inputs.end()), seen{tensor};
  std::vector<std::string> todo{tensor}, found;
  while (!todo.empty()) {
    std::string t = todo.back();
    todo.pop_back();
    if (inputs.count(t)) found.push_back(t);
    for (const auto& n : g.nodes)
      for (const auto& out : n.outputs)
        if (out == t)
          for (const auto& in : n.inputs)
            if (seen.insert(in).second) todo.push_back(in);
  }
  return found;
}

bool condition_value(ImportContext& ctx, const OnnxNode& node) {
  const std::string cond = node.input(0);
  if (!ctx.is_constant(cond)) {
    std::vector<std::string> sources = run_time_sources(ctx.graph(), ctx.tensor_of(cond));
    std::string from = sources.empty() ? "is computed at run time"
                                       : "depends on run-time input '" + sources[0] + "'";
    throw Error(node.where() + ": its condition '" + cond + "' " + from +
                "; fusebox inlines an If only when its condition is known at load time" +
                (sources.empty() ? "" : " " + if_const_hint(sources[0])));
  }
  const ir::Tensor& t = ctx.constant(cond, node, "cond");
  if (t.numel() != 1)
    throw Error(node.where() + ": condition '" + cond + "' has shape " + ir::shape_str(t.shape()) + ", expected one element");
  return t.dtype() == ir::DType::f32 ? t.data<float>()[0] != 0.0f : t.data<int64_t>()[0] != 0;
}

void inline_branch(ImportContext& ctx, const OnnxNode& node, const onnx::GraphProto& branch, const std::string& which) {
  const std::string prefix = node.name() + "/" + which + "/";
  const std::string where = node.where() + " " + which + "_branch";
  if (branch.input_size() > 0) throw Error(where + ": has inputs (an If branch takes none)");
  if (branch.sparse_initializer_size() > 0) throw Error(where + ": sparse initializers are not supported");
  if (branch.output_size() != node.num_outputs())
    throw Error(where + ": has " + std::to_string(branch.output_size()) + " outputs, the If has " +
                std::to_string(node.num_outputs()));
  std::map<std::string, std::string> renamed;  // branch value -> the name it is imported under
  for (const auto& t : branch.initializer()) {
    const std::string name = ctx.fresh(prefix + t.name());
    ctx.define_constant(name, tensor_from_proto(t, ctx.owner(), ctx.model_dir(), where + " initializer '" + t.name() + "'"));
    renamed[t.name()] = name;
  }
  const HandlerRegistry& reg = HandlerRegistry::instance();
  for (int i = 0; i < branch.node_size(); ++i) {
    // The node is converted from a renamed copy; a Constant's tensor may become a view of the
    // copy's bytes, so the copy lives as long as the views (with the model, which the other
    // weights view).
    auto held = std::make_shared<std::pair<std::shared_ptr<const void>, onnx::NodeProto>>(ctx.owner(), branch.node(i));
    onnx::NodeProto& np = held->second;
    const std::string name = prefix + (np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name());
    OnnxNode inner(np, name);
    std::string reason = reg.unsupported_reason(np.domain(), np.op_type(), ctx.opset());
    if (reason.empty())
      for (const auto& a : np.attribute()) {
        const auto& known = reg.find(np.op_type())->attributes;
        if (std::find(known.begin(), known.end(), a.name()) == known.end())
          reason = "attribute '" + a.name() + "' is not supported";
      }
    if (!reason.empty()) throw Error(inner.where() + ": " + reason);
    for (auto& in : *np.mutable_input()) {
      auto it = renamed.find(in);
      if (it != renamed.end()) in = it->second;
      else if (!in.empty() && !ctx.defined(in))
        throw Error(inner.where() + ": reads '" + in + "', which neither the branch nor the graph around it defines");
    }
    for (auto& a : *np.mutable_attribute()) {
      if (a.has_g()) rename_outer_reads(*a.mutable_g(), renamed);
      for (auto& sub : *a.mutable_graphs()) rename_outer_reads(sub, renamed);
    }
    for (auto& out : *np.mutable_output()) {
      if (out.empty()) continue;
      const std::string fresh = ctx.fresh(prefix + out);
      renamed[out] = fresh;
      out = fresh;
    }
    const std::shared_ptr<const void> model = ctx.owner();
    ctx.set_owner(held);
    try {
      reg.find(np.op_type())->convert(ctx, inner);
    } catch (...) {
      ctx.set_owner(model);
      throw;
    }
    ctx.set_owner(model);
    for (const auto& out : np.output())
      if (!out.empty() && !ctx.defined(out))
        throw Error(inner.where() + ": output '" + out + "' is not supported by the importer");
  }
  std::set<std::string> claimed;  // branch values already given to an output of the If
  for (int i = 0; i < branch.output_size(); ++i) {
    const std::string& out = branch.output(i).name();
    auto it = renamed.find(out);
    const bool outer = it == renamed.end();  // an outer value, passed through
    const std::string value = outer ? out : it->second;
    if (!ctx.defined(value)) throw Error(where + ": output '" + out + "' is not computed by any node");
    if (node.output(i).empty()) continue;
    if (ctx.is_constant(value)) {
      ctx.define_constant(node.output(i), ctx.constant(value, node, "branch output"));
    } else if (outer || !claimed.insert(value).second) {
      // A graph input (or another output's value) under the If output's name: a copy of its own,
      // so a graph output keeps the file's name ('y', not the input 'x' it passes through, and
      // not one name for two outputs).
      ctx.emit(node, "Identity", {value}, {}, {node.output(i)}, "/" + which + "/pass");
    } else {
      ctx.define_tensor(node.output(i), ctx.tensor_of(value));
    }
  }
}

}  // namespace

std::string if_const_hint(const std::string& input) {
  return "(give '" + input + "' a value with consts." + input +
         "=VALUE; on the command line --const " + input + "=VALUE)";
}

void add_control_handlers(HandlerRegistry& r) {
  r.add({"If", 1, 21, {"then_branch", "else_branch"}, [](ImportContext& ctx, const OnnxNode& node) {
           if (node.input(0).empty()) throw Error(node.where() + ": missing input cond");
           const bool taken = condition_value(ctx, node);
           const char* which = taken ? "then" : "else";
           const onnx::AttributeProto* a = node.find(std::string(which) + "_branch");
           if (!a || a->type() != onnx::AttributeProto::GRAPH)
             throw Error(node.where() + ": needs a graph attribute " + which + "_branch");
           inline_branch(ctx, node, a->g(), which);
         }});
}

}  // namespace fusebox::models::onnx_import
