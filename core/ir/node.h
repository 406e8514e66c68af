#pragma once
// Node: one computation. It names its input and output tensors and carries attributes; it holds
// no data. `op` is a name registered in the op schema registry (op_schema.h).
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace fusebox::ir {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>,
                               std::vector<double>, std::vector<std::string>>;

class Attributes {
 public:
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  void erase(const std::string& name) { values_.erase(name); }

  // Typed getters: return `fallback` when absent, throw fusebox::Error when present with
  // another type. An int attribute reads as a float too.
  int64_t get_int(const std::string& name, int64_t fallback) const;
  double get_float(const std::string& name, double fallback) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> get_ints(const std::string& name,
                                const std::vector<int64_t>& fallback = {}) const;
  std::vector<double> get_floats(const std::string& name,
                                 const std::vector<double>& fallback = {}) const;
  std::vector<std::string> get_strings(const std::string& name,
                                       const std::vector<std::string>& fallback = {}) const;

  const std::map<std::string, AttrValue>& all() const { return values_; }
  // "transA=1, alpha=0.125": for logs and reports.
  std::string to_string() const;

 private:
  std::map<std::string, AttrValue> values_;
};

struct Node {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  Attributes attrs;
};

}  // namespace fusebox::ir
