#include "app/workbench/model_options.h"

#include <algorithm>
#include <charconv>

#include "app/workbench/model_source.h"
#include "core/base/error.h"
#include "core/base/strings.h"
#include "core/models/builtin_models.h"

namespace fusebox::workbench {
namespace {

std::string list_text(const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (int64_t v : values) parts.push_back(std::to_string(v));
  return join(parts, "-");
}

int64_t integer_of(const std::string& key, const std::string& text) {
  int64_t v = 0;
  const std::string t = trim(text);
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size())
    throw Error(key + ": expected an integer, got '" + text + "'");
  return v;
}

// "seq=64", "d=256", ...: the spec's options in the kind's order, as its canonical text lists them.
std::vector<std::string> option_parts(const models::ModelSpec& spec) {
  const std::string canonical = spec.canonical();
  const size_t colon = canonical.find(':');
  if (colon == std::string::npos) return {};
  return split(canonical.substr(colon + 1), ',');
}

// The spec's text with only the options that differ from the kind's defaults ("transformer",
// "transformer:seq=32"), in the kind's order.
std::string minimal_spec(const models::ModelSpec& spec) {
  const std::vector<std::string> defaults = option_parts(models::parse_model_spec(spec.kind));
  std::vector<std::string> kept;
  for (const std::string& part : option_parts(spec))
    if (std::find(defaults.begin(), defaults.end(), part) == defaults.end()) kept.push_back(part);
  return kept.empty() ? spec.kind : spec.kind + ":" + join(kept, ",");
}

}  // namespace

ModelOptions model_options(const Settings& settings) {
  ModelOptions out;
  try {
    if (is_model_file(settings.model)) {
      // Every dim the `dims` setting takes: the dynamic ones need a value, a fixed one (an
      // exported batch of 1) may be given another.
      for (const OnnxDim& d : onnx_dims(settings.model)) {
        bool seen = false;
        for (const auto& o : out.options) seen = seen || o.key == d.name;
        if (seen) continue;
        const auto it = settings.dims.find(d.name);
        const std::string value = it != settings.dims.end() ? std::to_string(it->second)
                                  : d.dynamic              ? ""
                                                           : d.declared;
        const std::string declared = !d.dynamic                           ? "fixed " + d.declared
                                     : d.declared.empty() || d.declared == "?" ? "dynamic, unnamed"
                                                                          : "dynamic '" + d.declared + "'";
        out.options.push_back({d.name, ModelOption::Kind::Dim, value,
                               "input " + d.input + ", axis " + std::to_string(d.index) + ": " +
                                   declared + " in the file"});
      }
      return out;
    }
    const models::ModelSpec spec = models::parse_model_spec(settings.model);
    const models::ModelSpec defaults = models::parse_model_spec(spec.kind);
    for (const std::string& part : option_parts(spec)) {
      const std::string key = part.substr(0, part.find('='));
      ModelOption o;
      o.key = key;
      o.value = part.substr(part.find('=') + 1);
      if (spec.list_options.count(key)) {
        o.kind = ModelOption::Kind::List;
        o.help = "default " + list_text(defaults.get_list(key)) + " (widths joined by '-')";
      } else {
        o.kind = ModelOption::Kind::Integer;
        o.help = "default " + std::to_string(defaults.get(key));
      }
      out.options.push_back(std::move(o));
    }
  } catch (const Error& e) {
    out.options.clear();
    out.error = e.what();
  }
  return out;
}

std::string model_option_command(const Settings& settings, const std::string& key,
                                 const std::string& value) {
  if (is_model_file(settings.model)) {
    const ModelOptions all = model_options(settings);
    if (!all.error.empty()) throw Error(all.error);
    std::vector<std::string> names;
    for (const auto& o : all.options) names.push_back(o.key);
    if (std::find(names.begin(), names.end(), key) == names.end())
      throw Error("dims." + key + ": " + settings.model + " has no dim '" + key +
                  "' (its dims: " + (names.empty() ? "none" : join(names, ", ")) + ")");
    // Checked as the setting checks it (0..kMaxModelDim), so the message is the setting's.
    Settings next = settings;
    apply(next, "dims." + key + "=" + trim(value), "");
    return "dims." + key + "=" + trim(value);
  }
  models::ModelSpec spec = models::parse_model_spec(settings.model);
  if (spec.list_options.count(key)) {
    std::vector<int64_t> values;
    for (const std::string& part : split(trim(value), '-')) values.push_back(integer_of(key, part));
    spec.list_options[key] = values;
  } else if (spec.options.count(key)) {
    spec.options[key] = integer_of(key, value);
  } else {
    std::vector<std::string> names;
    for (const std::string& part : option_parts(spec)) names.push_back(part.substr(0, part.find('=')));
    throw Error("model '" + spec.kind + "' has no option '" + key + "' (its options: " +
                join(names, ", ") + ")");
  }
  // Validated as any spec is (ranges, heads dividing d, the size limit).
  const std::string text = minimal_spec(models::parse_model_spec(spec.canonical()));
  models::parse_model_spec(text);
  return "model=" + text;
}

}  // namespace fusebox::workbench
