// Model specs ("transformer:seq=128,d=256"): the table of builtin kinds and their options,
// parsing, validation (ranges, divisibility, total size) and dispatch to the builders.
// A new builtin model is one more entry in kinds().
#include <algorithm>
#include <functional>
#include <set>
#include <sstream>

#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/models/builtin_models.h"

namespace fusebox::models {

namespace {

struct OptionDef {
  std::string name;
  bool is_list = false;
  int64_t default_value = 0;          // integer options
  std::vector<int64_t> default_list;  // list options
  std::string help;
};

struct KindDef {
  std::string name;
  std::string summary;
  std::vector<OptionDef> options;
  // Kind-specific checks beyond "each value in 1..kMaxModelDim"; `where` prefixes messages.
  std::function<void(const ModelSpec&, const std::string& where)> check;
  std::function<ModelFootprint(const ModelSpec&)> footprint;
  std::function<ir::Graph(const ModelSpec&, uint64_t seed, const std::string& name)> build;
};

constexpr double kF32 = 4.0;

MlpConfig mlp_config(const ModelSpec& s) {
  MlpConfig c;
  c.dims = s.get_list("dims");
  c.batch = s.get("batch");
  return c;
}

TransformerConfig transformer_config(const ModelSpec& s) {
  TransformerConfig c;
  c.batch = s.get("batch");
  c.seq = s.get("seq");
  c.d = s.get("d");
  c.heads = s.get("heads");
  c.ffn = s.get("ffn");
  return c;
}

ModelFootprint mlp_footprint(const ModelSpec& s) {
  MlpConfig c = mlp_config(s);
  const double b = static_cast<double>(c.batch);
  ModelFootprint f;
  f.activation_bytes = kF32 * b * static_cast<double>(c.dims.front());  // input
  for (size_t i = 0; i + 1 < c.dims.size(); ++i) {
    const double in = static_cast<double>(c.dims[i]), out = static_cast<double>(c.dims[i + 1]);
    const bool hidden = i + 2 < c.dims.size();
    f.weight_bytes += kF32 * (in * out + out);
    // Transpose(W), MatMul, Add, Relu (hidden layers only).
    f.activation_bytes += kF32 * (in * out + (hidden ? 3 : 2) * b * out);
  }
  return f;
}

// Per encoder block, counting every tensor add_encoder_block creates (see transformer.cpp).
ModelFootprint block_footprint(const TransformerConfig& c) {
  const double b = static_cast<double>(c.batch), s = static_cast<double>(c.seq);
  const double d = static_cast<double>(c.d), h = static_cast<double>(c.heads);
  const double ff = static_cast<double>(c.ffn);
  ModelFootprint f;
  // 4 [d,d] projections + biases, fc1 [ffn,d] + [ffn], fc2 [d,ffn] + [d], 2 LayerNorms (gamma,
  // beta), 8 scalar constants (scale, 2 x (exponent, eps), sqrt2, one, half).
  f.weight_bytes = kF32 * (4 * (d * d + d) + (ff * d + ff) + (d * ff + d) + 4 * d + 8);
  // Transposed weights: 4 [d,d], 2 [d,ffn]; 7 [b,s,ffn] (fc1 MatMul, Add, 5 GELU ops);
  // 3 [b,h,s,s] (scores, scaled, probs); 8 [b,s,1] (LayerNorm statistics); 32 [b,s,d].
  f.activation_bytes = kF32 * (4 * d * d + 2 * d * ff + 7 * b * s * ff + 3 * b * h * s * s +
                               8 * b * s + 32 * b * s * d);
  return f;
}

ModelFootprint transformer_footprint(const TransformerConfig& c, int64_t layers) {
  ModelFootprint block = block_footprint(c);
  ModelFootprint f;
  f.weight_bytes = block.weight_bytes * static_cast<double>(layers);
  f.activation_bytes = block.activation_bytes * static_cast<double>(layers) +
                       kF32 * static_cast<double>(c.batch * c.seq * c.d);  // input
  return f;
}

void check_heads(const ModelSpec& s, const std::string& where) {
  if (s.get("d") % s.get("heads") != 0)
    throw Error(where + ": d=" + std::to_string(s.get("d")) + " is not divisible by heads=" +
                std::to_string(s.get("heads")) + " (each head gets d/heads columns)");
}

std::vector<OptionDef> transformer_options(int64_t default_seq) {
  return {
      {"seq", false, default_seq, {}, "sequence length (tokens)"},
      {"d", false, 256, {}, "model width d_model (divisible by heads)"},
      {"heads", false, 4, {}, "attention heads"},
      {"ffn", false, 1024, {}, "feed-forward width dim_feedforward"},
      {"batch", false, 1, {}, "sequences per run"},
  };
}

const std::vector<KindDef>& kinds() {
  static const std::vector<KindDef> table = [] {
    std::vector<KindDef> t;
    t.push_back(KindDef{
        "mlp",
        "Linear layers with ReLU between them, each nn.Linear as Transpose + MatMul + Add",
        {{"dims", true, 0, {784, 512, 512, 10}, "layer widths, input first, joined by '-'"},
         {"batch", false, 1, {}, "rows per run"}},
        [](const ModelSpec& s, const std::string& where) {
          const auto& dims = s.get_list("dims");
          if (dims.size() < 2)
            throw Error(
                where +
                ": option 'dims' needs at least 2 widths (input-output, e.g. 784-10), got " +
                std::to_string(dims.size()));
          if (static_cast<int64_t>(dims.size()) - 1 > kMaxModelLayers)
            throw Error(where + ": option 'dims' gives " + std::to_string(dims.size() - 1) +
                        " layers; at most " + std::to_string(kMaxModelLayers) + " are allowed");
        },
        mlp_footprint,
        [](const ModelSpec& s, uint64_t seed, const std::string& name) {
          return build_mlp(mlp_config(s), seed, name);
        }});
    t.push_back(
        KindDef{"transformer",
                "one post-LN encoder block (nn.TransformerEncoderLayer, GELU), LayerNorm and GELU "
                "decomposed",
                transformer_options(64), check_heads,
                [](const ModelSpec& s) { return transformer_footprint(transformer_config(s), 1); },
                [](const ModelSpec& s, uint64_t seed, const std::string& name) {
                  return build_transformer(transformer_config(s), seed, name);
                }});
    std::vector<OptionDef> stack_options = transformer_options(128);
    stack_options.insert(stack_options.begin(),
                         OptionDef{"layers", false, 4, {}, "encoder blocks chained"});
    t.push_back(KindDef{
        "stack", "encoder blocks chained, names prefixed layer0., layer1., ...", stack_options,
        [](const ModelSpec& s, const std::string& where) {
          check_heads(s, where);
          if (s.get("layers") > kMaxModelLayers)
            throw Error(where + ": option 'layers' = " + std::to_string(s.get("layers")) +
                        " is too large (at most " + std::to_string(kMaxModelLayers) + ")");
        },
        [](const ModelSpec& s) {
          return transformer_footprint(transformer_config(s), s.get("layers"));
        },
        [](const ModelSpec& s, uint64_t seed, const std::string& name) {
          return build_transformer_stack(transformer_config(s), s.get("layers"), seed, name);
        }});
    return t;
  }();
  return table;
}

std::string kind_list() {
  return join(builtin_model_names(), ", ");
}

const KindDef* find_kind(const std::string& name) {
  for (const auto& k : kinds())
    if (k.name == name) return &k;
  return nullptr;
}

const KindDef& kind_of(const ModelSpec& s) {
  const KindDef* k = find_kind(s.kind);
  if (!k) throw Error("unknown model '" + s.kind + "'; builtin models are: " + kind_list());
  return *k;
}

const OptionDef* find_option(const KindDef& k, const std::string& name) {
  for (const auto& o : k.options)
    if (o.name == name) return &o;
  return nullptr;
}

std::string option_list(const KindDef& k) {
  std::vector<std::string> names;
  for (const auto& o : k.options) names.push_back(o.name);
  return join(names, ", ");
}

std::string list_str(const std::vector<int64_t>& v) {
  return join(v, "-");
}

std::string where_of(const ModelSpec& s) {
  return "model spec '" + (s.text.empty() ? s.canonical() : s.text) + "'";
}

void check_value(const std::string& where, const std::string& option, int64_t v) {
  if (v < 1)
    throw Error(where + ": option '" + option + "' must be >= 1, got " + std::to_string(v));
  if (v > kMaxModelDim)
    throw Error(where + ": option '" + option + "' = " + std::to_string(v) +
                " is too large (limit " + std::to_string(kMaxModelDim) + ")");
}

// Every option of the kind present, no others, each value in 1..kMaxModelDim.
void check_options(const ModelSpec& s) {
  const KindDef& k = kind_of(s);
  const std::string where = where_of(s);
  for (const auto& o : k.options) {
    if (o.is_list) {
      auto it = s.list_options.find(o.name);
      if (it == s.list_options.end()) throw Error(where + ": option '" + o.name + "' is missing");
      for (int64_t v : it->second) check_value(where, o.name, v);
    } else {
      auto it = s.options.find(o.name);
      if (it == s.options.end()) throw Error(where + ": option '" + o.name + "' is missing");
      check_value(where, o.name, it->second);
    }
  }
  for (const auto& [name, v] : s.options)
    if (!find_option(k, name) || find_option(k, name)->is_list)
      throw Error(where + ": unknown option '" + name + "' for model '" + k.name +
                  "'; valid options: " + option_list(k));
  for (const auto& [name, v] : s.list_options)
    if (!find_option(k, name) || !find_option(k, name)->is_list)
      throw Error(where + ": unknown option '" + name + "' for model '" + k.name +
                  "'; valid options: " + option_list(k));
}

// Options, kind rules and the size limit; shared by parse_model_spec and build_model.
void validate(const ModelSpec& s) {
  check_options(s);
  const KindDef& k = kind_of(s);
  const std::string where = where_of(s);
  if (k.check) k.check(s, where);
  ModelFootprint f = k.footprint(s);
  if (f.total() > kMaxModelBytes)
    throw Error(where + " is too large: it needs " + format_bytes(f.total()) + " (weights " +
                format_bytes(f.weight_bytes) + " + activations " +
                format_bytes(f.activation_bytes) + " without reuse), over the limit of " +
                format_bytes(kMaxModelBytes) + "; reduce " + option_list(k));
}

}  // namespace

int64_t ModelSpec::get(const std::string& option) const {
  auto it = options.find(option);
  if (it == options.end())
    throw Error("model '" + kind + "' has no integer option '" + option + "'");
  return it->second;
}

const std::vector<int64_t>& ModelSpec::get_list(const std::string& option) const {
  auto it = list_options.find(option);
  if (it == list_options.end())
    throw Error("model '" + kind + "' has no list option '" + option + "'");
  return it->second;
}

std::string ModelSpec::canonical() const {
  const KindDef* k = find_kind(kind);
  std::vector<std::string> parts;
  if (k) {
    for (const auto& o : k->options) {
      if (o.is_list) {
        auto it = list_options.find(o.name);
        if (it != list_options.end()) parts.push_back(o.name + "=" + list_str(it->second));
      } else {
        auto it = options.find(o.name);
        if (it != options.end()) parts.push_back(o.name + "=" + std::to_string(it->second));
      }
    }
  } else {
    for (const auto& [n, v] : list_options) parts.push_back(n + "=" + list_str(v));
    for (const auto& [n, v] : options) parts.push_back(n + "=" + std::to_string(v));
  }
  return parts.empty() ? kind : kind + ":" + join(parts, ",");
}

ModelSpec parse_model_spec(const std::string& text_in) {
  ModelSpec spec;
  spec.text = trim(text_in);
  const std::string& text = spec.text;
  if (text.empty())
    throw Error("empty model spec; expected one of: " + kind_list() +
                " (e.g. 'transformer:seq=128')");
  const size_t colon = text.find(':');
  spec.kind = trim(std::string_view(text).substr(0, colon));
  const std::string where = "model spec '" + text + "'";
  const KindDef* k = find_kind(spec.kind);
  if (!k)
    throw Error(where + ": unknown model '" + spec.kind + "'; builtin models are: " + kind_list());
  for (const auto& o : k->options) {
    if (o.is_list)
      spec.list_options[o.name] = o.default_list;
    else
      spec.options[o.name] = o.default_value;
  }
  if (colon != std::string::npos) {
    const std::string rest = trim(std::string_view(text).substr(colon + 1));
    if (rest.empty())
      throw Error(where + ": nothing after ':'; expected options such as " +
                  k->options.front().name + "=<value> (valid options: " + option_list(*k) + ")");
    std::set<std::string> seen;
    for (const std::string& raw : split(rest, ',')) {
      const std::string item = trim(raw);
      if (item.empty())
        throw Error(where + ": empty option (two commas in a row, or a trailing comma?)");
      const size_t eq = item.find('=');
      const std::string key = trim(std::string_view(item).substr(0, eq));
      const OptionDef* o = find_option(*k, key);
      if (!o)
        throw Error(where + ": unknown option '" + key + "' for model '" + k->name +
                    "'; valid options: " + option_list(*k));
      if (eq == std::string::npos)
        throw Error(where + ": option '" + key + "' has no value; write " + key + "=<" +
                    (o->is_list ? "a-b-c" : "integer") + ">");
      if (!seen.insert(key).second) throw Error(where + ": option '" + key + "' given twice");
      const std::string value = trim(std::string_view(item).substr(eq + 1));
      const std::string what = where + ": option '" + key + "'";
      if (o->is_list) {
        std::vector<int64_t> list;
        for (const std::string& piece : split(value, '-')) {
          if (trim(piece).empty())
            throw Error(what + ": expected integers joined by '-' (e.g. 784-512-10), got '" +
                        value + "'");
          list.push_back(parse_int(piece, what));
        }
        spec.list_options[key] = std::move(list);
      } else {
        spec.options[key] = parse_int(value, what);
      }
    }
  }
  validate(spec);
  return spec;
}

ModelFootprint model_footprint(const ModelSpec& spec) {
  check_options(spec);
  return kind_of(spec).footprint(spec);
}

ir::Graph build_model(const ModelSpec& spec, uint64_t seed) {
  validate(spec);
  return kind_of(spec).build(spec, seed, spec.text.empty() ? spec.canonical() : spec.text);
}

ir::Graph build_model(const std::string& spec, uint64_t seed) {
  return build_model(parse_model_spec(spec), seed);
}

std::vector<std::string> builtin_model_names() {
  std::vector<std::string> names;
  for (const auto& k : kinds()) names.push_back(k.name);
  return names;
}

bool is_builtin_model_spec(const std::string& text) {
  std::string t = trim(text);
  return find_kind(trim(std::string_view(t).substr(0, t.find(':')))) != nullptr;
}

std::string builtin_model_help() {
  std::ostringstream out;
  out << "Builtin models: <kind>[:<option>=<value>,...], e.g. transformer:seq=128,heads=8\n";
  for (const auto& k : kinds()) {
    out << "  " << k.name << std::string(k.name.size() < 13 ? 13 - k.name.size() : 1, ' ')
        << k.summary << "\n";
    for (const auto& o : k.options) {
      std::string opt =
          o.name + "=" + (o.is_list ? list_str(o.default_list) : std::to_string(o.default_value));
      out << "      " << opt << std::string(opt.size() < 22 ? 22 - opt.size() : 1, ' ') << o.help
          << "\n";
    }
  }
  out << "Every value is an integer in 1.." << kMaxModelDim << "; at most " << kMaxModelLayers
      << " layers; weights + activations at most " << format_bytes(kMaxModelBytes) << ".\n";
  return out.str();
}

}  // namespace fusebox::models
