// ONNX import: parse the ModelProto, check every node against the handler registry (listing all
// unsupported ops at once), turn initializers into weights and inputs into graph inputs (dynamic
// dims from the options), then convert node by node through the handlers.
#include "core/models/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/ir/verifier.h"
#include "core/models/onnx/context.h"

namespace fusebox::models {

using onnx_import::HandlerRegistry;
using onnx_import::ImportContext;
using onnx_import::OnnxNode;

namespace {

// Protobuf parses at most 2 GiB - 1 (an int length); larger models keep their weights as external
// data. Model and tensor files are read through fusebox::read_file, which refuses FIFOs, devices
// and directories with a sentence instead of blocking or reading forever.
constexpr size_t kMaxModelFileBytes = size_t{2} << 30;
constexpr size_t kMaxModelReadBytes = kMaxModelFileBytes - 1;

std::string read_model_file(const std::string& path) {
  return fusebox::read_file(path, kMaxModelReadBytes);
}

std::string dir_of(const std::string& path) {
  std::filesystem::path p = std::filesystem::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

std::string stem_of(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::shared_ptr<onnx::ModelProto> parse_model(std::string_view bytes, const std::string& name) {
  if (bytes.size() >= kMaxModelFileBytes) throw Error(name + ": larger than 2 GiB");
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(name + ": not an ONNX model (the protobuf does not parse: truncated or another format)");
  if (model->ir_version() <= 0 || !model->has_graph() || model->opset_import_size() == 0)
    throw Error(name + ": not an ONNX model (no ir_version, graph or opset_import)");
  return model;
}

int64_t default_opset(const onnx::ModelProto& m, const std::string& name) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  throw Error(name + ": imports no opset of the default ONNX domain");
}

std::string node_name(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

std::string op_key(const onnx::NodeProto& n) {
  bool def = n.domain().empty() || n.domain() == "ai.onnx";
  return def ? n.op_type() : n.domain() + "." + n.op_type();
}

// "" when the handler registry imports `n` at `opset`, else why not.
std::string unsupported_reason(const onnx::NodeProto& n, int64_t opset) {
  const HandlerRegistry& reg = HandlerRegistry::instance();
  std::string reason = reg.unsupported_reason(n.domain(), n.op_type(), opset);
  if (reason.empty()) {
    const onnx_import::OnnxHandler* h = reg.find(n.op_type());
    for (const auto& a : n.attribute())
      if (std::find(h->attributes.begin(), h->attributes.end(), a.name()) == h->attributes.end())
        return "attribute '" + a.name() + "' is not supported";
  }
  return reason;
}

// Every value name read inside `g` (and the graphs nested in it) that `g` does not define: what a
// subgraph reads from the graphs around it.
void outer_reads(const onnx::GraphProto& g, std::set<std::string>* reads) {
  std::set<std::string> local;
  for (const auto& t : g.initializer()) local.insert(t.name());
  for (const auto& v : g.input()) local.insert(v.name());
  for (const auto& n : g.node()) {
    for (const auto& in : n.input())
      if (!in.empty() && !local.count(in)) reads->insert(in);
    for (const auto& a : n.attribute()) {
      std::set<std::string> sub;
      if (a.has_g()) outer_reads(a.g(), &sub);
      for (const auto& sg : a.graphs()) outer_reads(sg, &sub);
      for (const auto& r : sub)
        if (!local.count(r)) reads->insert(r);
    }
    for (const auto& out : n.output()) local.insert(out);
  }
}

// Why each node of `g` would not import ("" where it would): unsupported ops and attributes, and
// an If whose condition comes from a graph input fed at run time (fusebox inlines an If only when
// its condition is known at load time). Inputs in `bound` are given at load time; every shape
// is, so Shape and Size of anything are too.
std::vector<std::string> node_reasons(const onnx::GraphProto& g, int64_t opset, const std::set<std::string>& bound) {
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::map<std::string, std::string> run_time;  // value -> the graph input it is computed from
  for (const auto& in : g.input())
    if (!initializers.count(in.name()) && !bound.count(in.name())) run_time[in.name()] = in.name();
  std::vector<std::string> reasons;
  for (const auto& n : g.node()) {
    std::string reason = unsupported_reason(n, opset);
    bool is_if = op_key(n) == "If";
    if (reason.empty() && is_if && n.input_size() > 0 && run_time.count(n.input(0)))
      reason = "its condition '" + n.input(0) + "' depends on run-time input '" +
               run_time[n.input(0)] +
               "'; fusebox inlines an If only when its condition is known at load time " +
               onnx_import::if_const_hint(run_time[n.input(0)]);
    reasons.push_back(reason);
    if (op_key(n) == "Shape" || op_key(n) == "Size") continue;
    std::set<std::string> reads(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) outer_reads(a.g(), &reads);
      for (const auto& sg : a.graphs()) outer_reads(sg, &reads);
    }
    for (const auto& r : reads) {
      auto it = run_time.find(r);
      if (it == run_time.end()) continue;
      const std::string source = it->second;
      for (const auto& out : n.output()) run_time[out] = source;
      break;
    }
  }
  return reasons;
}

std::vector<OnnxUnsupported> find_unsupported(const onnx::GraphProto& g, int64_t opset,
                                              const std::set<std::string>& bound = {}) {
  std::vector<OnnxUnsupported> out;
  const std::vector<std::string> reasons = node_reasons(g, opset, bound);
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    const std::string& reason = reasons[static_cast<size_t>(i)];
    if (reason.empty()) continue;
    std::string key = op_key(n);
    auto it = std::find_if(out.begin(), out.end(), [&](const OnnxUnsupported& u) { return u.op == key && u.reason == reason; });
    if (it == out.end()) {
      out.push_back({key, reason, {}});
      it = out.end() - 1;
    }
    it->nodes.push_back(node_name(n, i));
  }
  return out;
}

std::string list_nodes(const std::vector<std::string>& nodes) {
  std::string s;
  for (size_t i = 0; i < nodes.size() && i < 5; ++i) s += (i ? ", " : "") + ("'" + nodes[i] + "'");
  if (nodes.size() > 5) s += ", ... (" + std::to_string(nodes.size()) + " nodes)";
  return s;
}

OnnxValueInfo value_info(const onnx::ValueInfoProto& v) {
  OnnxValueInfo info;
  info.name = v.name();
  if (!v.type().has_tensor_type()) {
    info.type = "(not a tensor)";
    return info;
  }
  const auto& tt = v.type().tensor_type();
  info.type = onnx_import::onnx_type_name(tt.elem_type());
  if (tt.has_shape())
    for (const auto& d : tt.shape().dim())
      info.dims.push_back(d.has_dim_value() ? std::to_string(d.dim_value()) : d.has_dim_param() ? d.dim_param() : "?");
  return info;
}

// A graph output is named as in the file. The importer may have produced it under another name:
// an inlined If's branch value ("if/then/t"), or the value an aliasing op (Identity, a no-op
// Reshape) passes through. The tensor takes the file's name back when it is a node's output that
// no other output claims; the report and the saved .npy files then say `y`, not `if/then/t`.
void keep_output_names(ir::Graph& g, const onnx::GraphProto& gp) {
  for (int i = 0; i < gp.output_size(); ++i) {
    const std::string& want = gp.output(i).name();
    const std::string have = g.outputs[static_cast<size_t>(i)];
    if (have == want || g.has_tensor(want) || g.tensor(have).kind != ir::TensorKind::Intermediate) continue;
    if (std::count(g.outputs.begin(), g.outputs.end(), have) != 1) continue;
    ir::TensorInfo info = g.tensor(have);
    info.name = want;
    g.remove_tensor(have);
    g.add_tensor(std::move(info));
    for (ir::Node& n : g.nodes) {
      std::replace(n.inputs.begin(), n.inputs.end(), have, want);
      std::replace(n.outputs.begin(), n.outputs.end(), have, want);
    }
    g.outputs[static_cast<size_t>(i)] = want;
  }
}

}  // namespace

struct OnnxModel::Initializers {
  std::mutex mutex;
  std::map<std::string, ir::Tensor> decoded;
};

namespace {

// `kept`, when given, holds the initializers an earlier import of the same model decoded; those it
// lacks are decoded and added.
ir::Graph convert(const std::shared_ptr<onnx::ModelProto>& model, const std::string& name,
                  const OnnxImportOptions& options, const std::string& model_dir,
                  OnnxModel::Initializers* kept = nullptr) {
  const onnx::GraphProto& gp = model->graph();
  int64_t opset = default_opset(*model, name);
  for (const auto& o : model->opset_import())
    if (!(o.domain().empty() || o.domain() == "ai.onnx") && o.domain() != "ai.onnx.ml") {
      // Other domains only matter when a node uses them; find_unsupported names those nodes.
    }
  std::set<std::string> bound;
  for (const auto& [input, value] : options.constant_inputs) bound.insert(input);
  std::vector<OnnxUnsupported> unsupported = find_unsupported(gp, opset, bound);
  if (!unsupported.empty()) {
    int count = 0;
    for (const auto& u : unsupported) count += static_cast<int>(u.nodes.size());
    std::string msg = name + ": " + std::to_string(count) + " node(s) fusebox cannot import (opset " +
                      std::to_string(opset) + "):";
    for (const auto& u : unsupported) msg += "\n  " + u.op + " (" + u.reason + "): " + list_nodes(u.nodes);
    throw Error(msg);
  }

  ir::Graph g;
  g.name = name;
  ImportContext ctx(g, opset, options.evaluator, model, model_dir);
  try {
    std::set<std::string> initializer_names;
    std::unique_lock<std::mutex> lock;
    if (kept) lock = std::unique_lock<std::mutex>(kept->mutex);
    for (const auto& t : gp.initializer()) {
      if (t.name().empty()) throw Error("an initializer has no name");
      auto decode = [&] { return onnx_import::tensor_from_proto(t, model, model_dir, "initializer '" + t.name() + "'"); };
      if (!kept) {
        ctx.define_constant(t.name(), decode());
      } else {
        auto it = kept->decoded.find(t.name());
        if (it == kept->decoded.end()) it = kept->decoded.emplace(t.name(), decode()).first;
        ctx.define_constant(t.name(), it->second);
      }
      initializer_names.insert(t.name());
    }
    if (lock.owns_lock()) lock.unlock();
    if (gp.sparse_initializer_size() > 0) throw Error("sparse initializers are not supported");
    size_t initializer_bytes = 0;
    for (const auto& t : gp.initializer()) initializer_bytes += ctx.type_of(t.name()).nbytes();
    ctx.set_fold_budget(initializer_bytes);

    std::vector<std::string> missing_dims;
    for (const auto& in : gp.input()) {
      if (initializer_names.count(in.name())) continue;  // an initializer with a default: a weight
      if (in.name().empty()) throw Error("a graph input has no name");
      auto bound = options.constant_inputs.find(in.name());
      if (bound != options.constant_inputs.end()) {
        ctx.define_constant(in.name(), bound->second);
        continue;
      }
      if (!in.type().has_tensor_type()) throw Error("input '" + in.name() + "' is not a tensor");
      const auto& tt = in.type().tensor_type();
      ir::DType dtype;
      if (tt.elem_type() == onnx::TensorProto::FLOAT) dtype = ir::DType::f32;
      else if (tt.elem_type() == onnx::TensorProto::INT64) dtype = ir::DType::i64;
      else
        throw Error("input '" + in.name() + "' has element type " + onnx_import::onnx_type_name(tt.elem_type()) +
                    ", which fusebox cannot compute (float32 and int64 only)");
      if (!tt.has_shape()) throw Error("input '" + in.name() + "' has no shape (its rank is unknown)");
      ir::Shape shape;
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        std::string key = d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : in.name() + ":" + std::to_string(i);
        auto given = options.dims.find(key);
        if (given != options.dims.end()) {
          if (given->second < 0) throw Error("dims." + key + "=" + std::to_string(given->second) + ": must be >= 0");
          shape.push_back(given->second);
        } else if (d.has_dim_value()) {
          if (d.dim_value() < 0) throw Error("input '" + in.name() + "' has negative dim " + std::to_string(d.dim_value()));
          shape.push_back(d.dim_value());
        } else {
          missing_dims.push_back("'" + key + "' (input '" + in.name() + "' dim " + std::to_string(i) + ")");
          shape.push_back(1);
        }
      }
      try {
        ir::numel(shape);  // overflow check
      } catch (const Error& e) {
        throw Error("input '" + in.name() + "': " + e.what());
      }
      ctx.define_tensor(in.name(), g.add_input(in.name(), dtype, shape));
    }
    if (!missing_dims.empty()) {
      std::string msg = "dynamic dims without values:";
      for (const auto& m : missing_dims) msg += " " + m;
      std::string first = missing_dims[0].substr(1, missing_dims[0].find('\'', 1) - 1);
      throw Error(msg + "; set each in the dims setting (e.g. dims." + first + "=1; on the command line --dim " +
                  first + "=1)");
    }

    const HandlerRegistry& reg = HandlerRegistry::instance();
    for (int i = 0; i < gp.node_size(); ++i) {
      const onnx::NodeProto& np = gp.node(i);
      OnnxNode node(np, node_name(np, i));
      for (const auto& in : np.input())
        if (!in.empty() && !ctx.defined(in))
          throw Error(node.where() + ": reads '" + in + "', which no earlier node, input or initializer defines");
      if (np.output_size() == 0) throw Error(node.where() + ": has no outputs");
      reg.find(np.op_type())->convert(ctx, node);
      for (const auto& out : np.output())
        if (!out.empty() && !ctx.defined(out))
          throw Error(node.where() + ": output '" + out + "' is not supported by the importer");
    }

    for (const auto& out : gp.output()) {
      if (!ctx.defined(out.name())) throw Error("graph output '" + out.name() + "' is not computed by any node");
      g.outputs.push_back(ctx.tensor_of(out.name()));
    }
    keep_output_names(g, gp);
    if (g.outputs.empty()) throw Error("the graph has no outputs");
    ir::verify(g);
  } catch (const Error& e) {
    throw Error(name + ": " + e.what());
  }
  return g;
}

}  // namespace

ir::Graph import_onnx_bytes(std::string_view bytes, const std::string& name, const OnnxImportOptions& options,
                            const std::string& model_dir) {
  return convert(parse_model(bytes, name), name, options, model_dir);
}

ir::Graph import_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  std::string bytes = read_model_file(path);
  auto model = parse_model(bytes, path);
  bytes.clear();
  bytes.shrink_to_fit();
  ir::Graph g = convert(model, path, options, dir_of(path));
  g.name = stem_of(path);
  return g;
}

namespace {

OnnxInspection inspect_model(const std::shared_ptr<onnx::ModelProto>& model,
                             const std::string& name) {
  const onnx::GraphProto& gp = model->graph();
  OnnxInspection r;
  r.path = name;
  r.ir_version = model->ir_version();
  r.producer = model->producer_name() + (model->producer_version().empty() ? "" : " " + model->producer_version());
  for (const auto& o : model->opset_import()) r.opsets.emplace_back(o.domain().empty() ? "ai.onnx" : o.domain(), o.version());
  for (const auto& o : model->opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") r.opset = o.version();
  std::set<std::string> init;
  for (const auto& t : gp.initializer()) {
    init.insert(t.name());
    r.initializers++;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) r.external_initializers++;
    int64_t n = 1;
    for (int64_t d : t.dims()) n = (d >= 0 && (d == 0 || n <= std::numeric_limits<int64_t>::max() / 8 / d)) ? n * d : 0;
    r.initializer_bytes += n * (t.data_type() == onnx::TensorProto::DOUBLE || t.data_type() == onnx::TensorProto::INT64 ? 8 : 4);
  }
  for (const auto& in : gp.input())
    if (!init.count(in.name())) r.inputs.push_back(value_info(in));
  for (const auto& out : gp.output()) r.outputs.push_back(value_info(out));
  for (const auto& n : gp.node()) r.op_histogram[op_key(n)]++;
  r.unsupported = find_unsupported(gp, r.opset);
  return r;
}

}  // namespace

OnnxInspection inspect_onnx_bytes(std::string_view bytes, const std::string& name) {
  return inspect_model(parse_model(bytes, name), name);
}

OnnxModel::OnnxModel(const std::string& path) : path_(path), initializers_(std::make_shared<Initializers>()) {
  std::string bytes = read_model_file(path);
  model_ = parse_model(bytes, path);
}

ir::Graph OnnxModel::import(const OnnxImportOptions& options) const {
  ir::Graph g = convert(model_, path_, options, dir_of(path_), initializers_.get());
  g.name = stem_of(path_);
  return g;
}

OnnxInspection OnnxModel::inspect() const {
  return inspect_model(model_, path_);
}

namespace {

// One attribute as "name=value" for the outline (what a tooltip shows, not what the importer
// reads): long lists cut, subgraphs and tensors named by kind.
std::string attribute_text(const onnx::AttributeProto& a) {
  std::ostringstream s;
  s << a.name() << "=";
  auto list = [&](const auto& values) {
    s << "[";
    for (int i = 0; i < values.size() && i < 8; ++i) s << (i ? "," : "") << values.Get(i);
    if (values.size() > 8) s << ",... (" << values.size() << ")";
    s << "]";
  };
  switch (a.type()) {
    case onnx::AttributeProto::INT: s << a.i(); break;
    case onnx::AttributeProto::FLOAT: s << a.f(); break;
    case onnx::AttributeProto::STRING: s << "'" << a.s().substr(0, 64) << "'"; break;
    case onnx::AttributeProto::INTS: list(a.ints()); break;
    case onnx::AttributeProto::FLOATS: list(a.floats()); break;
    case onnx::AttributeProto::GRAPH: s << "<graph " << a.g().node_size() << " nodes>"; break;
    case onnx::AttributeProto::GRAPHS: s << "<" << a.graphs_size() << " graphs>"; break;
    case onnx::AttributeProto::TENSOR: s << "<tensor>"; break;
    default: s << "<" << onnx::AttributeProto::AttributeType_Name(a.type()) << ">"; break;
  }
  return s.str();
}

}  // namespace

size_t OnnxOutline::unsupported_nodes() const {
  size_t n = 0;
  for (const auto& u : unsupported) n += u.nodes.size();
  return n;
}

std::string OnnxOutline::refusal_summary() const {
  std::vector<std::string> ops;
  for (const auto& u : unsupported)
    if (std::find(ops.begin(), ops.end(), u.op) == ops.end()) ops.push_back(u.op);
  std::string s = std::to_string(ops.size()) + (ops.size() == 1 ? " op" : " ops") +
                  " fusebox does not import (";
  for (size_t i = 0; i < ops.size() && i < 6; ++i) s += (i ? ", " : "") + ops[i];
  if (ops.size() > 6) s += ", ...";
  return s + ")";
}

OnnxOutline outline_onnx_bytes(std::string_view bytes, const std::string& name) {
  auto model = parse_model(bytes, name);
  const onnx::GraphProto& gp = model->graph();
  OnnxOutline r;
  r.path = name;
  r.opset = default_opset(*model, name);
  if (static_cast<size_t>(gp.node_size()) > kMaxOutlineNodes)
    throw Error(name + ": " + std::to_string(gp.node_size()) + " nodes, too many to outline (at most " +
                std::to_string(kMaxOutlineNodes) + ")");
  std::set<std::string> init;
  for (const auto& t : gp.initializer()) {
    init.insert(t.name());
    OnnxValueInfo v;
    v.name = t.name();
    v.type = onnx_import::onnx_type_name(t.data_type());
    for (int64_t d : t.dims()) v.dims.push_back(std::to_string(d));
    r.initializers.push_back(std::move(v));
  }
  for (const auto& in : gp.input())
    if (!init.count(in.name())) r.inputs.push_back(value_info(in));
  for (const auto& out : gp.output()) r.outputs.push_back(value_info(out));
  for (const auto& v : gp.value_info()) r.values.push_back(value_info(v));
  r.nodes.reserve(static_cast<size_t>(gp.node_size()));
  const std::vector<std::string> reasons = node_reasons(gp, r.opset, {});
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& n = gp.node(i);
    OnnxOutlineNode o;
    o.name = node_name(n, i);
    o.op = op_key(n);
    o.domain = n.domain() == "ai.onnx" ? "" : n.domain();
    o.inputs.assign(n.input().begin(), n.input().end());
    o.outputs.assign(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) o.attributes.push_back(attribute_text(a));
    o.unsupported = reasons[static_cast<size_t>(i)];
    r.nodes.push_back(std::move(o));
  }
  r.unsupported = find_unsupported(gp, r.opset);
  return r;
}

OnnxOutline outline_onnx_file(const std::string& path) {
  return outline_onnx_bytes(read_model_file(path), path);
}

OnnxInspection inspect_onnx_file(const std::string& path) {
  return inspect_onnx_bytes(read_model_file(path), path);
}

std::string OnnxInspection::to_text() const {
  std::ostringstream s;
  s << path << "\n  ir_version " << ir_version << ", opset " << opset;
  for (const auto& [d, v] : opsets)
    if (d != "ai.onnx") s << ", " << d << " " << v;
  if (!producer.empty()) s << ", producer " << producer;
  s << "\n";
  auto print = [&](const char* title, const std::vector<OnnxValueInfo>& v) {
    s << title << ":\n";
    for (const auto& i : v) {
      s << "  " << i.name << "  " << i.type << " [";
      for (size_t k = 0; k < i.dims.size(); ++k) s << (k ? "," : "") << i.dims[k];
      s << "]\n";
    }
  };
  print("inputs", inputs);
  print("outputs", outputs);
  s << "initializers: " << initializers << " (" << initializer_bytes << " bytes";
  if (external_initializers) s << ", " << external_initializers << " external";
  s << ")\nops:\n";
  for (const auto& [op, n] : op_histogram) s << "  " << op << " " << n << "\n";
  if (unsupported.empty()) {
    s << "unsupported: none\n";
  } else {
    int count = 0;
    for (const auto& u : unsupported) count += static_cast<int>(u.nodes.size());
    s << "unsupported: " << count << " node(s)\n";
    for (const auto& u : unsupported) s << "  " << u.op << " (" << u.reason << "): " << list_nodes(u.nodes) << "\n";
  }
  return s.str();
}

ir::Tensor read_onnx_tensor_file(const std::string& path, std::string* name) {
  std::string bytes = read_model_file(path);
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw Error(path + ": not a serialized ONNX TensorProto");
  if (name) *name = proto.name();
  return onnx_import::tensor_from_proto(proto, nullptr, dir_of(path), path);
}

std::vector<std::string> onnx_supported_ops() {
  std::vector<std::string> ops = HandlerRegistry::instance().names();
  std::sort(ops.begin(), ops.end());
  return ops;
}

}  // namespace fusebox::models
