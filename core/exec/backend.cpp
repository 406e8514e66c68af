#include "core/exec/backend.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/base/strings.h"

namespace fusebox::exec {

std::vector<std::string> KernelTable::ops() const {
  std::vector<std::string> out;
  for (const auto& [op, _] : kernels_) out.push_back(op);
  std::sort(out.begin(), out.end());
  return out;
}

BackendRegistry& BackendRegistry::instance() {
  static BackendRegistry registry;
  return registry;
}

void BackendRegistry::add(const std::string& name, BackendFactory factory) {
  for (auto& [n, e] : entries_) {
    if (n == name) {
      e = Entry{std::move(factory), ""};
      return;
    }
  }
  entries_.push_back({name, Entry{std::move(factory), ""}});
}

void BackendRegistry::add_unavailable(const std::string& name, const std::string& reason) {
  for (auto& [n, e] : entries_) {
    if (n == name) {
      e = Entry{nullptr, reason};
      return;
    }
  }
  entries_.push_back({name, Entry{nullptr, reason}});
}

std::unique_ptr<Backend> BackendRegistry::create(const std::string& name) const {
  for (const auto& [n, e] : entries_) {
    if (n != name) continue;
    if (!e.factory) throw Error("backend '" + name + "' is unavailable: " + e.unavailable_reason);
    return e.factory();
  }
  std::vector<std::string> known;
  for (const auto& [n, _] : entries_) known.push_back(n);
  throw Error("unknown backend '" + name + "' (known: " + join(known, ", ") + ")");
}

std::vector<std::string> BackendRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, e] : entries_)
    if (e.factory) out.push_back(n);
  return out;
}

std::vector<std::pair<std::string, std::string>> BackendRegistry::status() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [n, e] : entries_) out.push_back({n, e.unavailable_reason});
  return out;
}

}  // namespace fusebox::exec
