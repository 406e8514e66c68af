#include "app/workbench/refused_model.h"

#include <filesystem>
#include <optional>
#include <set>
#include <unordered_map>

#include "app/workbench/model_source.h"

namespace fusebox::workbench {

namespace {

// The value's shape when the file gives every dim as a number and the type is one fusebox
// names (f32, i64); otherwise none, and the drawing says "[?]".
std::optional<ir::TensorInfo> declared(const models::OnnxValueInfo& v, ir::TensorKind kind) {
  ir::TensorInfo info;
  info.name = v.name;
  info.kind = kind;
  // OnnxValueInfo::type is the TensorProto type's name: "FLOAT", "INT64", ...
  if (v.type == "FLOAT") info.dtype = ir::DType::f32;
  else if (v.type == "INT64") info.dtype = ir::DType::i64;
  else return std::nullopt;
  for (const std::string& d : v.dims) {
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    info.shape.push_back(std::stoll(d));
  }
  return info;
}

std::string why_not(const models::OnnxOutlineNode& n, int64_t opset) {
  std::string s = "no importer for op " + n.op + " (opset " + std::to_string(opset) + ")";
  if (!n.unsupported.starts_with("no handler")) s += ": " + n.unsupported;
  return s;
}

}  // namespace

ir::Graph outline_graph(const models::OnnxOutline& outline) {
  ir::Graph g;
  g.name = std::filesystem::path(outline.path).stem().string();
  auto add = [&](const models::OnnxValueInfo& v, ir::TensorKind kind) {
    if (v.name.empty() || g.has_tensor(v.name)) return;
    if (auto info = declared(v, kind)) {
      g.add_tensor(std::move(*info));
    } else if (kind == ir::TensorKind::Weight) {
      // A weight of a type fusebox does not name still has to read as a weight (not drawn).
      ir::TensorInfo info;
      info.name = v.name;
      info.kind = kind;
      g.add_tensor(std::move(info));
    }
  };
  for (const auto& w : outline.initializers) add(w, ir::TensorKind::Weight);
  for (const auto& in : outline.inputs) {
    add(in, ir::TensorKind::Input);
    g.inputs.push_back(in.name);
  }
  for (const auto& v : outline.values) add(v, ir::TensorKind::Intermediate);
  for (const auto& out : outline.outputs) {
    add(out, ir::TensorKind::Intermediate);
    g.outputs.push_back(out.name);
  }
  std::set<std::string> names;
  g.nodes.reserve(outline.nodes.size());
  for (size_t i = 0; i < outline.nodes.size(); ++i) {
    const models::OnnxOutlineNode& n = outline.nodes[i];
    ir::Node node;
    node.name = n.name;
    // Exporters do repeat names; the selection and the layout's keys need them unique.
    if (!names.insert(node.name).second) {
      node.name = n.name + "#" + std::to_string(i);
      names.insert(node.name);
    }
    node.op = n.op;
    node.inputs = n.inputs;
    node.outputs = n.outputs;
    if (!n.attributes.empty()) node.attrs.set("onnx", n.attributes);
    g.nodes.push_back(std::move(node));
  }
  return g;
}

std::shared_ptr<const RefusedModel> refused_model(const Settings& settings) {
  if (!is_model_file(settings.model)) return nullptr;
  auto r = std::make_shared<RefusedModel>();
  try {
    r->outline = models::outline_onnx_file(settings.model);
  } catch (const std::exception&) {
    return nullptr;  // the run's own error says what is wrong with the file
  }
  if (r->outline.unsupported.empty()) return nullptr;
  auto drawing = std::make_shared<RunResult>();
  drawing->settings = settings;
  auto loaded = std::make_shared<LoadedModel>();
  loaded->graph = outline_graph(r->outline);
  for (size_t i = 0; i < r->outline.nodes.size(); ++i)
    if (!r->outline.nodes[i].unsupported.empty())
      r->unsupported.emplace(loaded->graph.nodes[i].name, why_not(r->outline.nodes[i], r->outline.opset));
  drawing->model = std::move(loaded);
  r->drawing = std::move(drawing);
  r->caption = "refused: " + r->outline.refusal_summary() + " - drawn from the file, not run";
  return r;
}

}  // namespace fusebox::workbench
