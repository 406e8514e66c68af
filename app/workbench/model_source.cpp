#include "app/workbench/model_source.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <random>

#include "app/workbench/backends.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/ir/npy.h"
#include "core/models/builtin_models.h"
#include "core/models/onnx_import.h"

namespace fusebox::workbench {

bool is_model_file(const std::string& model) {
  return model.size() > 5 && model.compare(model.size() - 5, 5, ".onnx") == 0;
}

namespace {

std::vector<OnnxDim> dims_of(const std::vector<models::OnnxValueInfo>& inputs) {
  std::vector<OnnxDim> out;
  for (const auto& input : inputs) {
    for (size_t k = 0; k < input.dims.size(); ++k) {
      const std::string& d = input.dims[k];
      const bool fixed = fixed_dim(d);
      const bool param = !d.empty() && d != "?" && !fixed;
      out.push_back({param ? d : input.name + ":" + std::to_string(k), input.name, k, d, !fixed});
    }
  }
  return out;
}

// A dim the model does not have would be ignored, running another shape than the one asked for.
void check_dim_names(const std::string& path, const std::vector<OnnxDim>& model_dims,
                     const std::map<std::string, int64_t>& dims) {
  std::vector<std::string> names;
  for (const OnnxDim& d : model_dims)
    if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
  for (const auto& [name, value] : dims)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw Error("dims." + name + ": " + path + " has no dim '" + name +
                  "' (its dims: " + (names.empty() ? "none" : join(names, ", ")) + ")");
}

}  // namespace

bool fixed_dim(const std::string& d) {
  return !d.empty() &&
         std::all_of(d.begin(), d.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

std::vector<OnnxDim> onnx_dims(const models::OnnxInspection& inspection) {
  return dims_of(inspection.inputs);
}

std::vector<OnnxDim> onnx_dims(const std::string& path) {
  return dims_of(models::inspect_onnx_file(path).inputs);
}

std::map<std::string, int64_t> bind_input_dims(const std::vector<OnnxDim>& model_dims,
                                               std::map<std::string, int64_t> dims,
                                               const std::map<std::string, std::string>& inputs) {
  std::map<std::string, std::string> bound_by;  // dim -> the input setting that fixed it
  for (const auto& [input, file] : inputs) {
    size_t rank = 0;
    for (const OnnxDim& d : model_dims) rank += d.input == input;
    if (rank == 0) continue;  // a scalar input, or not an input at all (load_inputs says which)
    const ir::Shape shape = ir::read_npy_shape(file);
    const std::string given =
        "inputs." + input + " (" + file + ", shape " + ir::shape_str(shape) + ")";
    if (shape.size() != rank)
      throw Error(given + ": has rank " + std::to_string(shape.size()) + ", the model's input '" +
                  input + "' rank " + std::to_string(rank));
    for (const OnnxDim& d : model_dims) {
      if (d.input != input || !d.dynamic) continue;
      const int64_t size = shape[d.index];
      const std::string says = given + " makes dim '" + d.name + "' " + std::to_string(size);
      auto [it, fresh] = dims.emplace(d.name, size);
      if (fresh) {
        bound_by[d.name] = given;
      } else if (it->second != size) {
        auto by = bound_by.find(d.name);
        throw Error(says + ", but " +
                    (by != bound_by.end() ? by->second + " makes it " : "dims." + d.name + " is ") +
                    std::to_string(it->second));
      }
    }
  }
  return dims;
}

namespace {

// `text`, whole, as one element of `dtype` filling `shape`; nullopt when it is not one (or not
// finite).
std::optional<ir::Tensor> filled(const std::string& text, ir::DType dtype, const ir::Shape& shape) {
  ir::Tensor t(dtype, shape);
  const char* end = text.data() + text.size();
  if (dtype == ir::DType::i64) {
    int64_t v = 0;
    auto [at, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || at != end) return std::nullopt;
    std::fill_n(t.data<int64_t>(), t.numel(), v);
  } else {
    double v = 0;
    auto [at, ec] = std::from_chars(text.data(), end, v);
    if (ec != std::errc() || at != end || !std::isfinite(static_cast<float>(v)))
      return std::nullopt;
    std::fill_n(t.data<float>(), t.numel(), static_cast<float>(v));
  }
  return t;
}

}  // namespace

std::map<std::string, ir::Tensor> constant_inputs(
    const std::string& path, const std::vector<models::OnnxValueInfo>& info,
    const std::map<std::string, std::string>& consts,
    const std::map<std::string, std::string>& inputs) {
  std::map<std::string, ir::Tensor> out;
  for (const auto& [name, value] : consts) {
    const std::string where = "consts." + name + ": ";
    auto in = std::find_if(info.begin(), info.end(),
                           [&](const models::OnnxValueInfo& v) { return v.name == name; });
    if (in == info.end()) {
      std::vector<std::string> names;
      for (const auto& v : info) names.push_back(v.name);
      throw Error(where + path + " has no input '" + name +
                  "' (its inputs: " + (names.empty() ? "none" : join(names, ", ")) + ")");
    }
    if (inputs.count(name))
      throw Error(where + "input '" + name + "' is also fed from a file (inputs." + name +
                  "); give it one or the other");
    if (in->type != "FLOAT" && in->type != "INT64")
      throw Error(where + "input '" + name + "' is " + in->type +
                  "; fusebox computes FLOAT and INT64 only");
    const ir::DType dtype = in->type == "INT64" ? ir::DType::i64 : ir::DType::f32;
    const std::string declared = "[" + join(in->dims, ",") + "]";
    if (value.ends_with(".npy")) {
      ir::Tensor t = ir::read_npy(value);
      const std::string file =
          where + value + " (" + ir::dtype_name(t.dtype()) + ir::shape_str(t.shape()) + ")";
      if (t.dtype() != dtype) throw Error(file + ": input '" + name + "' is " + in->type);
      bool fits = t.shape().size() == in->dims.size();
      for (size_t k = 0; fits && k < in->dims.size(); ++k)
        fits = !fixed_dim(in->dims[k]) || std::to_string(t.shape()[k]) == in->dims[k];
      if (!fits) throw Error(file + ": input '" + name + "' is " + declared);
      out.emplace(name, std::move(t));
      continue;
    }
    ir::Shape shape;
    for (const auto& d : in->dims) {
      if (!fixed_dim(d))
        throw Error(where + "input '" + name + "' has dynamic dims " + declared +
                    ": give its value as a .npy file, which says the shape");
      shape.push_back(std::stoll(d));
    }
    std::optional<ir::Tensor> t = filled(value, dtype, shape);
    if (!t)
      throw Error(where + "expected a .npy file or " +
                  (dtype == ir::DType::i64 ? "an integer" : "a finite number") + " (input '" +
                  name + "' is " + in->type + "), got '" + value + "'");
    out.emplace(name, std::move(*t));
  }
  return out;
}

ir::Graph load_model(const std::string& model, uint64_t seed,
                     const std::map<std::string, int64_t>& dims,
                     const std::map<std::string, std::string>& inputs,
                     const std::map<std::string, std::string>& consts) {
  if (is_model_file(model)) {
    models::OnnxImportOptions options;
    options.dims = dims;
    options.evaluator = &constant_evaluator();  // folds shape arithmetic
    if (dims.empty() && inputs.empty() && consts.empty())
      return models::import_onnx_file(model, options);
    // The file's inputs, for the three settings that name them, from the parse the import uses.
    const models::OnnxModel onnx(model);
    const std::vector<models::OnnxValueInfo> info = onnx.inspect().inputs;
    const std::vector<OnnxDim> model_dims = dims_of(info);
    if (!dims.empty()) check_dim_names(model, model_dims, dims);
    if (!consts.empty()) options.constant_inputs = constant_inputs(model, info, consts, inputs);
    if (!inputs.empty()) options.dims = bind_input_dims(model_dims, dims, inputs);
    return onnx.import(options);
  }
  if (!consts.empty())
    throw Error("consts: only a .onnx model has inputs to make constant ('" + model +
                "' is a builtin spec)");
  if (!dims.empty()) {
    // A builtin spec has no dynamic dims: its sizes are the spec's options, spelled out here.
    std::string options;
    if (models::is_builtin_model_spec(model)) {
      const models::ModelSpec spec = models::parse_model_spec(model);
      options = "; its sizes are set in the spec itself: " + spec.canonical();
    }
    throw Error("dims: only a .onnx model has dynamic dims ('" + model + "' is a builtin spec" + options + ")");
  }
  if (models::is_builtin_model_spec(model)) return models::build_model(model, seed);
  throw Error("unknown model '" + model + "': expected a builtin model (" +
              [] {
                std::string s;
                for (const auto& n : models::builtin_model_names()) s += (s.empty() ? "" : ", ") + n;
                return s;
              }() +
              ", e.g. transformer:seq=128) or a .onnx file");
}

namespace {

// Seeded values for each input not in `from_files` (those are left empty); an input given by file
// still takes its draws from the generator, so the others have the values they have without it.
std::vector<ir::Tensor> seeded_inputs(const ir::Graph& graph, uint64_t seed,
                                      const std::map<std::string, std::string>& from_files) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<ir::Tensor> out;
  for (const auto& name : graph.inputs) {
    const ir::TensorInfo& info = graph.tensor(name);
    if (from_files.count(name)) {
      rng.discard(static_cast<unsigned long long>(ir::numel(info.shape)));
      out.emplace_back();
      continue;
    }
    ir::Tensor t(info.dtype, info.shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (info.dtype == ir::DType::f32)
        t.data<float>()[i] = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
      else
        t.data<int64_t>()[i] = static_cast<int64_t>(rng() % 16);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::vector<ir::Tensor> random_inputs(const ir::Graph& graph, uint64_t seed) { return seeded_inputs(graph, seed, {}); }

std::vector<ir::Tensor> load_inputs(const ir::Graph& graph, uint64_t seed,
                                    const std::map<std::string, std::string>& files) {
  for (const auto& [name, file] : files) {
    if (std::find(graph.inputs.begin(), graph.inputs.end(), name) != graph.inputs.end()) continue;
    // Exporters before ONNX IR 4 listed every initializer as a graph input too: ONNX Runtime lets
    // a feed override it, fusebox keeps the model's value.
    if (graph.has_tensor(name) && graph.is_weight(name))
      throw Error(
          "inputs." + name + ": '" + name +
          "' is one of the model's initializers (a weight, listed as a graph input too, as "
          "older exporters did): fusebox uses its value from the model and takes no input for it" +
          (graph.inputs.empty() ? std::string(" (the model has no other input)")
                                : " (its inputs: " + join(graph.inputs, ", ") + ")"));
    throw Error("inputs." + name + ": the model has no input '" + name + "'" +
                (graph.inputs.empty()
                     ? std::string(" (it takes none: every value it reads is in the model)")
                     : " (its inputs: " + join(graph.inputs, ", ") + ")"));
  }
  std::vector<ir::Tensor> inputs = seeded_inputs(graph, seed, files);
  for (const auto& [name, file] : files) {
    auto it = std::find(graph.inputs.begin(), graph.inputs.end(), name);
    const ir::TensorInfo& info = graph.tensor(name);
    ir::Tensor t;
    try {
      t = ir::read_npy(file);
    } catch (const Error& e) {
      throw Error("inputs." + name + "=" + file + ": " + e.what());
    }
    if (t.dtype() != info.dtype || t.shape() != info.shape)
      throw Error("inputs." + name + "=" + file + ": the file holds " + ir::dtype_name(t.dtype()) +
                  ir::shape_str(t.shape()) + ", the model expects " + ir::dtype_name(info.dtype) +
                  ir::shape_str(info.shape));
    inputs[static_cast<size_t>(it - graph.inputs.begin())] = std::move(t);
  }
  return inputs;
}

}  // namespace fusebox::workbench
