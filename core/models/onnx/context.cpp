// The ONNX importer's shared pieces: tensor decoding, attribute access, the value table
// (constants vs graph tensors, load-time folding) and the handler registry.
#include "core/models/onnx/context.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>

#include "core/backend/evaluate.h"
#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::models::onnx_import {

namespace {

// Size in bytes of one element as stored in raw_data, 0 for types we cannot read.
size_t raw_element_size(int32_t t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: return 8;
    case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: return 2;
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: return 1;
    default: return 0;
  }
}

// fusebox holds integers as int64: a uint64 above its range would read as a negative number (an
// index of 2^64-1 as -1, the last element), so it is refused.
int64_t from_uint64(uint64_t v, int64_t i) {
  if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw Error("uint64 element " + std::to_string(i) + " is " + std::to_string(v) +
                ", past int64's range (fusebox holds integers as int64)");
  return static_cast<int64_t>(v);
}

// Reads element i of little-endian raw bytes of integer type t as i64.
int64_t raw_int(const std::byte* p, int32_t t, int64_t i) {
  switch (t) {
    case onnx::TensorProto::INT32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case onnx::TensorProto::UINT32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case onnx::TensorProto::INT64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); return v; }
    case onnx::TensorProto::UINT64: { uint64_t v; std::memcpy(&v, p + 8 * i, 8); return from_uint64(v, i); }
    case onnx::TensorProto::INT16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case onnx::TensorProto::UINT16: { uint16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case onnx::TensorProto::INT8: return static_cast<int8_t>(p[i]);
    case onnx::TensorProto::UINT8: return static_cast<uint8_t>(p[i]);
    case onnx::TensorProto::BOOL: return p[i] != std::byte{0} ? 1 : 0;
    default: return 0;
  }
}

// Decodes raw little-endian bytes (exactly numel elements) into `out`.
void decode_raw(const std::byte* p, int32_t t, ir::Tensor& out) {
  if (t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::INT64) {
    if (out.nbytes()) std::memcpy(out.bytes(), p, out.nbytes());
    return;
  }
  for (int64_t i = 0; i < out.numel(); ++i) out.data<int64_t>()[i] = raw_int(p, t, i);
}

bool parse_i64(const std::string& s, int64_t* v) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && ptr == s.data() + s.size() && *v >= 0;
}

// The external data file `location` names, resolved (symlinks followed) and confined to the
// model's directory: a relative path without "..", resolving inside the folder to a regular file.
std::filesystem::path external_file(const std::string& location, const std::string& model_dir,
                                    const std::string& what) {
  if (location.empty()) throw Error(what + ": external data without a location");
  std::filesystem::path rel(location);
  if (rel.is_absolute())
    throw Error(what + ": external data location '" + location + "' must be relative to the model");
  for (const auto& part : rel)
    if (part == "..")
      throw Error(what + ": external data location '" + location +
                  "' leaves the model's directory");
  std::filesystem::path file = std::filesystem::path(model_dir) / rel;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::canonical(model_dir, ec);
  std::filesystem::path real = ec ? std::filesystem::path() : std::filesystem::canonical(file, ec);
  if (ec)
    throw Error(what + ": cannot read external data file '" + file.string() + "': " + ec.message());
  auto [d, r] = std::mismatch(dir.begin(), dir.end(), real.begin(), real.end());
  if (d != dir.end())
    throw Error(what + ": external data location '" + location + "' resolves to '" + real.string() +
                "', outside the model's directory");
  struct stat st {};
  if (::stat(real.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(what + ": external data file '" + file.string() + "' is not a regular file");
  return real;
}

ir::Tensor read_external(const onnx::TensorProto& proto, ir::DType dtype, const ir::Shape& shape,
                         size_t elem, const std::string& model_dir, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") {
      if (!parse_i64(kv.value(), &offset)) throw Error(what + ": external data offset '" + kv.value() + "' is not a valid offset");
    } else if (kv.key() == "length") {
      if (!parse_i64(kv.value(), &length)) throw Error(what + ": external data length '" + kv.value() + "' is not a valid length");
    }
  }
  if (model_dir.empty())
    throw Error(what + ": stored as external data ('" + location +
                "'), which needs the model loaded from a file (its directory holds the data)");
  std::filesystem::path file = external_file(location, model_dir, what);
  // Every size is checked against the file before the tensor is allocated: a tiny model must not
  // make us allocate gigabytes for data that is not there.
  size_t want = ir::nbytes_of(shape, elem);
  if (length >= 0 && static_cast<size_t>(length) != want)
    throw Error(what + ": external data length " + std::to_string(length) + " does not match its shape " +
                ir::shape_str(shape) + " (" + std::to_string(want) + " bytes)");
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec) throw Error(what + ": cannot read external data file '" + file.string() + "': " + ec.message());
  if (static_cast<uintmax_t>(offset) > size || want > size - static_cast<uintmax_t>(offset))
    throw Error(what + ": external data [" + std::to_string(offset) + ", +" + std::to_string(want) +
                ") lies beyond the end of '" + file.string() + "' (" + std::to_string(size) + " bytes)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(what + ": cannot open external data file '" + file.string() + "'");
  in.seekg(static_cast<std::streamoff>(offset));
  ir::Tensor out(dtype, shape);
  if (elem == dtype_size(dtype)) {
    in.read(reinterpret_cast<char*>(out.bytes()), static_cast<std::streamsize>(want));
  } else {
    std::vector<std::byte> buf(want);
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(want));
    try {
      decode_raw(buf.data(), proto.data_type(), out);
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
  }
  if (!in) throw Error(what + ": short read from external data file '" + file.string() + "'");
  return out;
}

// How many values the typed field for element type t holds (float_data, int64_data, ...).
int typed_value_count(const onnx::TensorProto& proto, int32_t t) {
  switch (t) {
    case onnx::TensorProto::FLOAT:
      return proto.float_data_size();
    case onnx::TensorProto::INT64:
      return proto.int64_data_size();
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      return proto.uint64_data_size();
    default:
      return proto.int32_data_size();  // int32, int16, int8, uint16, uint8, bool
  }
}

}  // namespace

bool dtype_from_onnx(int32_t t, ir::DType* out) {
  if (t == onnx::TensorProto::FLOAT) {
    *out = ir::DType::f32;
    return true;
  }
  if (raw_element_size(t) != 0) {
    *out = ir::DType::i64;
    return true;
  }
  return false;
}

std::string onnx_type_name(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(t));
  return "type " + std::to_string(t);
}

ir::Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::shared_ptr<const void>& owner,
                             const std::string& model_dir, const std::string& what) {
  int32_t t = proto.data_type();
  ir::DType dtype;
  if (!dtype_from_onnx(t, &dtype))
    throw Error(what + ": element type " + onnx_type_name(t) +
                " is not supported (fusebox computes float32 and int64; integer and bool constants are "
                "converted to int64)");
  if (proto.has_segment()) throw Error(what + ": segmented tensors are not supported");
  ir::Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) throw Error(what + ": negative dim " + std::to_string(d));
    shape.push_back(d);
  }
  int64_t n = 0;
  try {
    n = ir::numel(shape);  // throws on overflow
  } catch (const Error& e) {
    throw Error(what + ": " + e.what());
  }
  size_t elem = raw_element_size(t);
  if (static_cast<uint64_t>(n) > (uint64_t{16} << 30) / elem)
    throw Error(what + ": shape " + ir::shape_str(shape) + " is too large");
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return read_external(proto, dtype, shape, elem, model_dir, what);
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != static_cast<size_t>(n) * elem)
      throw Error(what + ": raw_data has " + std::to_string(raw.size()) + " bytes, shape " + ir::shape_str(shape) +
                  " of " + onnx_type_name(t) + " needs " + std::to_string(static_cast<size_t>(n) * elem));
    const auto* p = reinterpret_cast<const std::byte*>(raw.data());
    // Viewed in place only when the bytes are already ours: float32 or int64. A uint64 has int64's
    // width but must pass from_uint64's range check, so it is decoded like the narrower types
    // (viewed, an index of 2^64-1 read as -1 whenever protobuf's buffer happened to be aligned).
    const bool native = t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::INT64;
    if (native && owner && n > 0 && reinterpret_cast<uintptr_t>(p) % ir::kAlignment == 0)
      return ir::Tensor::view(dtype, shape, owner, p);  // zero copies
    ir::Tensor out(dtype, shape);
    try {
      decode_raw(p, t, out);  // the one copy
    } catch (const Error& e) {
      throw Error(what + ": " + e.what());
    }
    return out;
  }
  const int values = typed_value_count(proto, t);
  if (values != n)  // checked before allocating: an empty [2^31] initializer is an error, not 8 GiB
    throw Error(what + ": has " + std::to_string(values) + " values, expected " +
                std::to_string(n) + " for shape " + ir::shape_str(shape));
  ir::Tensor out(dtype, shape);
  switch (t) {
    case onnx::TensorProto::FLOAT:
      for (int64_t i = 0; i < n; ++i) out.data<float>()[i] = proto.float_data(static_cast<int>(i));
      break;
    case onnx::TensorProto::INT64:
      for (int64_t i = 0; i < n; ++i) out.data<int64_t>()[i] = proto.int64_data(static_cast<int>(i));
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      try {
        for (int64_t i = 0; i < n; ++i) out.data<int64_t>()[i] = from_uint64(proto.uint64_data(static_cast<int>(i)), i);
      } catch (const Error& e) {
        throw Error(what + ": " + e.what());
      }
      break;
    default:  // int32, int16, int8, uint16, uint8, bool live in int32_data
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = proto.int32_data(static_cast<int>(i));
        out.data<int64_t>()[i] = t == onnx::TensorProto::BOOL ? (v != 0) : v;
      }
  }
  return out;
}

// ---- OnnxNode -------------------------------------------------------------------------------------

std::string OnnxNode::input(int i) const { return i < proto_.input_size() ? proto_.input(i) : std::string(); }
std::string OnnxNode::output(int i) const { return i < proto_.output_size() ? proto_.output(i) : std::string(); }

const onnx::AttributeProto* OnnxNode::find(const std::string& attr) const {
  for (const auto& a : proto_.attribute())
    if (a.name() == attr) return &a;
  return nullptr;
}

const onnx::AttributeProto& OnnxNode::require(const std::string& attr, int type, const char* type_name) const {
  const onnx::AttributeProto* a = find(attr);
  if (a->type() != type && !(a->type() == onnx::AttributeProto::UNDEFINED))
    throw Error(where() + ": attribute '" + attr + "' must be " + type_name + ", got " +
                onnx::AttributeProto_AttributeType_Name(a->type()));
  return *a;
}

int64_t OnnxNode::get_int(const std::string& attr, int64_t fallback) const {
  if (!has(attr)) return fallback;
  return require(attr, onnx::AttributeProto::INT, "an int").i();
}

double OnnxNode::get_float(const std::string& attr, double fallback) const {
  if (!has(attr)) return fallback;
  const onnx::AttributeProto* a = find(attr);
  if (a->type() == onnx::AttributeProto::INT) return static_cast<double>(a->i());
  return require(attr, onnx::AttributeProto::FLOAT, "a float").f();
}

std::string OnnxNode::get_string(const std::string& attr, const std::string& fallback) const {
  if (!has(attr)) return fallback;
  return require(attr, onnx::AttributeProto::STRING, "a string").s();
}

std::vector<int64_t> OnnxNode::get_ints(const std::string& attr, const std::vector<int64_t>& fallback) const {
  if (!has(attr)) return fallback;
  const auto& a = require(attr, onnx::AttributeProto::INTS, "a list of ints");
  return {a.ints().begin(), a.ints().end()};
}

std::vector<double> OnnxNode::get_floats(const std::string& attr) const {
  if (!has(attr)) return {};
  const auto& a = require(attr, onnx::AttributeProto::FLOATS, "a list of floats");
  return {a.floats().begin(), a.floats().end()};
}

// ---- ImportContext --------------------------------------------------------------------------------

const ImportContext::Value& ImportContext::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error("value '" + name + "' is read before it is defined");
  return it->second;
}

bool ImportContext::is_constant(const std::string& name) const {
  auto it = values_.find(name);
  return it != values_.end() && it->second.constant.has_value();
}

const ir::Tensor& ImportContext::constant(const std::string& name, const OnnxNode& node,
                                          const std::string& what) const {
  const Value& v = value(name);
  if (!v.constant)
    throw Error(node.where() + ": input '" + name + "' (" + what +
                ") must be known at load time; fusebox takes shape arguments as constants (computed "
                "at run time here)");
  return *v.constant;
}

std::vector<int64_t> ImportContext::constant_ints(const std::string& name, const OnnxNode& node,
                                                  const std::string& what) const {
  const ir::Tensor& t = constant(name, node, what);
  if (t.dtype() != ir::DType::i64) throw Error(node.where() + ": input '" + name + "' (" + what + ") must be integers");
  if (t.shape().size() > 1) throw Error(node.where() + ": input '" + name + "' (" + what + ") must be 1-D");
  return {t.data<int64_t>(), t.data<int64_t>() + t.numel()};
}

ir::TensorType ImportContext::type_of(const std::string& name) const {
  const Value& v = value(name);
  if (v.constant) return {v.constant->dtype(), v.constant->shape()};
  const ir::TensorInfo& info = graph_.tensor(v.tensor);
  return {info.dtype, info.shape};
}

void ImportContext::define_constant(const std::string& name, ir::Tensor tensor) {
  if (name.empty()) return;
  if (values_.count(name)) throw Error("value '" + name + "' is defined twice");
  values_[name].constant = std::move(tensor);
}

void ImportContext::define_tensor(const std::string& name, const std::string& graph_tensor) {
  if (name.empty()) return;
  if (values_.count(name)) throw Error("value '" + name + "' is defined twice");
  values_[name].tensor = graph_tensor;
}

std::string ImportContext::tensor_of(const std::string& name) {
  auto it = values_.find(name);
  if (it == values_.end()) throw Error("value '" + name + "' is read before it is defined");
  Value& v = it->second;
  if (v.tensor.empty()) v.tensor = graph_.add_weight(graph_.has_tensor(name) ? graph_.unique_name(name) : name, *v.constant);
  return v.tensor;
}

std::string ImportContext::fresh(const std::string& base) {
  std::string candidate = base;
  while (values_.count(candidate) || graph_.has_tensor(candidate))
    candidate = base + "_" + std::to_string(++fresh_counter_);
  return candidate;
}

std::string ImportContext::take_fold_bytes(size_t bytes) {
  if (bytes <= kSmallFoldBytes) return "";
  auto mib = [](size_t b) { return format_bytes(static_cast<double>(b)); };
  if (bytes > kMaxFoldBytes)
    return mib(bytes) + ", more than the " + mib(kMaxFoldBytes) + " one folded result may take";
  if (bytes > fold_budget_ - std::min(folded_bytes_, fold_budget_))
    return mib(bytes) + ", past the " + mib(fold_budget_) +
           " load-time folding may make for this model (" + mib(folded_bytes_) + " made)";
  folded_bytes_ += bytes;
  return "";
}

bool ImportContext::fold(ir::Node& node, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  std::vector<ir::Tensor> args;
  std::vector<ir::TensorType> in_types;
  for (const auto& in : inputs) {
    args.push_back(*value(in).constant);
    in_types.push_back({args.back().dtype(), args.back().shape()});
  }
  node.inputs = inputs;
  node.outputs = outputs;
  size_t bytes = 0;
  for (const auto& t : ir::infer_node(node, in_types)) bytes += t.nbytes();
  if (!take_fold_bytes(bytes).empty()) {  // too large to hold now: a graph node, for run time
    node.inputs.clear();
    node.outputs.clear();
    return false;
  }
  std::vector<ir::Tensor> results = exec::evaluate_node(*evaluator_, node, args);
  for (size_t i = 0; i < outputs.size() && i < results.size(); ++i)
    define_constant(outputs[i], std::move(results[i]));
  return true;
}

void ImportContext::emit(const OnnxNode& from, const std::string& op, const std::vector<std::string>& inputs,
                         ir::Attributes attrs, const std::vector<std::string>& outputs, const std::string& suffix) {
  ir::Node node;
  node.op = op;
  node.attrs = std::move(attrs);
  std::string base = from.name() + suffix;
  node.name = base;
  for (int i = 1; used_node_names_.count(node.name); ++i) node.name = base + "_" + std::to_string(i);
  bool all_constant = evaluator_ != nullptr;
  for (const auto& in : inputs) {
    value(in);  // defined?
    all_constant = all_constant && is_constant(in);
  }
  try {
    if (all_constant && fold(node, inputs, outputs)) return;
    std::vector<ir::TensorType> in_types;
    for (const auto& in : inputs) {
      node.inputs.push_back(tensor_of(in));
      in_types.push_back(type_of(in));
    }
    for (const auto& out : outputs) {
      const std::string base = out.empty() ? node.name + ":unused" : out;
      std::string t = out.empty() || graph_.has_tensor(out) ? graph_.unique_name(base) : out;
      // Two unused outputs of one node (an LSTM's Y_h and Y_c) are not in the graph yet.
      for (int k = 1; std::count(node.outputs.begin(), node.outputs.end(), t) != 0; ++k)
        t = graph_.unique_name(base + "_" + std::to_string(k));
      node.outputs.push_back(t);
    }
    std::vector<ir::TensorType> out_types = ir::infer_node(node, in_types);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      graph_.add_tensor({node.outputs[i], out_types.at(i).dtype, out_types.at(i).shape, ir::TensorKind::Intermediate, std::nullopt});
      define_tensor(outputs[i], node.outputs[i]);
    }
    used_node_names_.insert(node.name);
    graph_.nodes.push_back(std::move(node));
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.rfind(from.where(), 0) == 0) throw;
    throw Error(from.where() + ": " + msg);
  }
}

// ---- registry -------------------------------------------------------------------------------------

HandlerRegistry& HandlerRegistry::instance() {
  static HandlerRegistry* r = [] {
    auto* reg = new HandlerRegistry;
    add_elementwise_handlers(*reg);
    add_linalg_handlers(*reg);
    add_normalization_handlers(*reg);
    add_layout_handlers(*reg);
    add_constant_handlers(*reg);
    add_conv_handlers(*reg);
    add_resize_handlers(*reg);
    add_control_handlers(*reg);
    add_recurrent_handlers(*reg);
    return reg;
  }();
  return *r;
}

std::string HandlerRegistry::unsupported_reason(const std::string& domain, const std::string& op, int64_t opset) const {
  if (!domain.empty() && domain != "ai.onnx") return "domain '" + domain + "' is not supported";
  const OnnxHandler* h = find(op);
  if (!h) return "no handler for this op";
  if (opset < h->min_opset)
    return "needs opset >= " + std::to_string(h->min_opset) + " (model has " + std::to_string(opset) + ")";
  if (opset > h->max_opset)
    return "handler knows opsets up to " + std::to_string(h->max_opset) + " (model has " + std::to_string(opset) + ")";
  return "";
}

ir::Attributes attrs_of(std::initializer_list<std::pair<std::string, ir::AttrValue>> values) {
  ir::Attributes a;
  for (const auto& [k, v] : values) a.set(k, v);
  return a;
}

ir::Tensor scalar_f32(float v) {
  ir::Tensor t(ir::DType::f32, {});
  t.data<float>()[0] = v;
  return t;
}

ir::Tensor vector_i64(const std::vector<int64_t>& v) {
  ir::Tensor t(ir::DType::i64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

}  // namespace fusebox::models::onnx_import
