#include "core/ir/node.h"

#include <sstream>

#include "core/base/error.h"

namespace fusebox::ir {

namespace {
[[noreturn]] void wrong_type(const std::string& name, const char* expected) {
  throw Error("attribute '" + name + "' is not " + expected);
}
}  // namespace

int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  wrong_type(name, "an int");
}

double Attributes::get_float(const std::string& name, double fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<double>(&it->second)) return *v;
  if (auto* v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
  wrong_type(name, "a float");
}

std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  wrong_type(name, "a string");
}

std::vector<int64_t> Attributes::get_ints(const std::string& name,
                                          const std::vector<int64_t>& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  wrong_type(name, "a list of ints");
}

std::vector<double> Attributes::get_floats(const std::string& name,
                                           const std::vector<double>& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<double>>(&it->second)) return *v;
  wrong_type(name, "a list of floats");
}

std::vector<std::string> Attributes::get_strings(const std::string& name,
                                                 const std::vector<std::string>& fallback) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  if (auto* v = std::get_if<std::vector<std::string>>(&it->second)) return *v;
  wrong_type(name, "a list of strings");
}

std::string Attributes::to_string() const {
  std::ostringstream out;
  bool first = true;
  for (const auto& [name, value] : values_) {
    if (!first) out << ", ";
    first = false;
    out << name << "=";
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double> ||
                        std::is_same_v<T, std::string>) {
            out << v;
          } else {
            out << "[";
            for (size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
            out << "]";
          }
        },
        value);
  }
  return out.str();
}

}  // namespace fusebox::ir
