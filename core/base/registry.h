#pragma once
// The one shape every registry in fusebox has: named entries kept in the order they were added,
// with the same three verbs everywhere.
//
//   Registry<PassInfo> passes("pass");
//   passes.add("dce", {...});                  // appends; the same name again replaces in place
//   const PassInfo* p = passes.find("dce");    // nullptr when unknown
//   const PassInfo& q = passes.get("dcee");    // throws: unknown pass 'dcee' (did you mean 'dce'?)
//   for (const PassInfo& p : passes.entries()) ...  // in the order added
//   passes.names();                            // {"dce", ...}, in the order added
//
// Passes, fusion patterns, op schemas, ONNX handlers, planner strategies, executors, backends,
// CLI commands, panels and scenario check kinds are each a Registry of their own entry type.
// Order matters for some (passes run, patterns are tried in it) and is harmless for the rest, so
// it is always kept. A registry is not thread-safe for writers: builtin entries are added once,
// on first use, before anyone reads (the owners guard that with a function-local static).
#include <cstddef>
#include <functional>
#include <ranges>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox {

template <typename Entry>
class Registry {
 public:
  using Item = std::pair<std::string, Entry>;

  // `kind` names an entry in errors: "pass", "fusion pattern", "planner".
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Appends `entry` under `name`, or replaces the entry of that name where it stands.
  Entry& add(std::string name, Entry entry) {
    if (auto it = index_.find(name); it != index_.end()) {
      items_[it->second].second = std::move(entry);
      return items_[it->second].second;
    }
    index_.emplace(name, items_.size());
    items_.emplace_back(std::move(name), std::move(entry));
    return items_.back().second;
  }
  // Entries that carry their own name (PassInfo, FusionPattern, OpSchema, ...) are added by it.
  Entry& add(Entry entry)
    requires requires(const Entry& e) { std::string(e.name); }
  {
    std::string name = entry.name;
    return add(std::move(name), std::move(entry));
  }

  const Entry* find(std::string_view name) const {  // no allocation: executors look up per op
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }

  Entry* find(std::string_view name) {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }

  // The entry, or fusebox::Error "unknown <kind> 'x' (did you mean 'y'? | valid: a, b)".
  const Entry& get(std::string_view name) const {
    if (const Entry* e = find(name)) return *e;
    throw Error("unknown " + kind_ + " '" + std::string(name) + "' (" + suggest(name, names()) + ")");
  }

  bool contains(std::string_view name) const { return find(name) != nullptr; }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    out.reserve(items_.size());
    for (const auto& item : items_) out.push_back(item.first);
    return out;
  }

  const std::string& kind() const { return kind_; }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  // The entries in the order added; items() pairs each with its name.
  auto entries() const { return std::views::values(items_); }
  auto entries() { return std::views::values(items_); }
  const std::vector<Item>& items() const { return items_; }

 private:
  std::string kind_;
  std::vector<Item> items_;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, size_t, Hash, std::equal_to<>> index_;
};

}  // namespace fusebox
