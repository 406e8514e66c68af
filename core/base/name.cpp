#include "core/base/name.h"

#include <mutex>
#include <ostream>
#include <unordered_set>

namespace fusebox {
namespace {

// Heterogeneous lookup: a string_view finds its text without making a std::string first.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};
struct TextEq {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};

struct Table {
  std::mutex mutex;
  // Node-based: an element's address never moves when the set grows, so a Name stays valid.
  std::unordered_set<std::string, TextHash, TextEq> texts;
  size_t bytes = 0;
};

// Never destroyed: a Name in a static object may be read after this file's statics would go.
Table& table() {
  static Table* t = new Table;
  return *t;
}

}  // namespace

const std::string* Name::empty_text() {
  static const std::string* e = new std::string;
  return e;
}

const std::string* Name::intern(std::string_view text) {
  if (text.empty()) return empty_text();
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.texts.find(text);
  if (it != t.texts.end()) return &*it;
  t.bytes += text.size();
  return &*t.texts.emplace(text).first;
}

size_t Name::table_size() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.texts.size();
}

size_t Name::table_bytes() {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  return t.bytes;
}

std::ostream& operator<<(std::ostream& os, const Name& n) {
  return os << n.str();
}

}  // namespace fusebox
