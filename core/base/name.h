#pragma once
// An interned string: the process keeps one copy of each distinct text, and a Name is a pointer
// to it. Trace events repeat a few thousand names (kernels, ops, runtime calls) millions of times,
// so a span or a device record holds a Name instead of a std::string: 8 bytes instead of 32, and
// no heap copy per event for names past the 15 characters std::string keeps inline. This is
// Tracy's string table (its Worker stores a string index per zone), kept for the whole process:
// texts are never freed, so a Name stays valid however the records holding it are copied, moved
// or merged (ranks into one job, a recording into the window). What the table holds is the
// distinct names seen, which is small beside the events that repeat them.
//
// A Name reads as a const std::string (it converts to one, and has the const members call sites
// use); it is assigned from any text, which interns it. Comparison is by text, so ordering and
// output do not depend on the table (equal texts are one pointer, which makes == cheap).
#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <unordered_map>

namespace fusebox {

class Name {
 public:
  Name() : s_(empty_text()) {}
  Name(const std::string& text) : s_(intern(text)) {}  // NOLINT: implicit, as a string is
  Name(std::string_view text) : s_(intern(text)) {}    // NOLINT
  Name(const char* text) : s_(intern(std::string_view(text))) {}  // NOLINT

  const std::string& str() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT: reads as a const std::string
  std::string_view view() const { return *s_; }

  // The const std::string members call sites use.
  size_t size() const { return s_->size(); }
  size_t length() const { return s_->size(); }
  bool empty() const { return s_->empty(); }
  const char* c_str() const { return s_->c_str(); }
  const char* data() const { return s_->data(); }
  char operator[](size_t i) const { return (*s_)[i]; }
  char front() const { return s_->front(); }
  char back() const { return s_->back(); }
  std::string::const_iterator begin() const { return s_->begin(); }
  std::string::const_iterator end() const { return s_->end(); }
  template <class... A>
  size_t find(A&&... a) const {
    return s_->find(std::forward<A>(a)...);
  }
  template <class... A>
  size_t rfind(A&&... a) const {
    return s_->rfind(std::forward<A>(a)...);
  }
  template <class... A>
  int compare(A&&... a) const {
    return s_->compare(std::forward<A>(a)...);
  }
  template <class... A>
  bool starts_with(A&&... a) const {
    return s_->starts_with(std::forward<A>(a)...);
  }
  template <class... A>
  bool ends_with(A&&... a) const {
    return s_->ends_with(std::forward<A>(a)...);
  }
  std::string substr(size_t pos = 0, size_t n = std::string::npos) const {
    return s_->substr(pos, n);
  }

  friend bool operator==(const Name& a, const Name& b) { return a.s_ == b.s_ || *a.s_ == *b.s_; }
  friend bool operator==(const Name& a, const std::string& b) { return *a.s_ == b; }
  friend bool operator==(const Name& a, std::string_view b) { return *a.s_ == b; }
  friend bool operator==(const Name& a, const char* b) { return *a.s_ == b; }
  friend std::strong_ordering operator<=>(const Name& a, const Name& b) { return *a.s_ <=> *b.s_; }
  friend std::strong_ordering operator<=>(const Name& a, const std::string& b) {
    return *a.s_ <=> b;
  }
  friend std::strong_ordering operator<=>(const Name& a, const char* b) { return *a.s_ <=> b; }

  friend std::string operator+(const Name& a, const std::string& b) { return *a.s_ + b; }
  friend std::string operator+(const std::string& a, const Name& b) { return a + *b.s_; }
  friend std::string operator+(const Name& a, const char* b) { return *a.s_ + b; }
  friend std::string operator+(const char* a, const Name& b) { return a + *b.s_; }
  friend std::string operator+(const Name& a, char b) { return *a.s_ + b; }
  friend std::string operator+(char a, const Name& b) { return a + *b.s_; }
  friend std::ostream& operator<<(std::ostream& os, const Name& n);

  // How many distinct texts the process holds, and their bytes (for the tests and the bench).
  static size_t table_size();
  static size_t table_bytes();

 private:
  static const std::string* intern(std::string_view text);
  static const std::string* empty_text();
  const std::string* s_;
};

// A property of names worked out once per distinct name: an analysis asks it (is this kernel a
// collective, is this call a launch) of millions of records that hold a few thousand names. Keyed
// by the interned text, so a lookup hashes a pointer and not the text, and a repeat of the last
// name (records of one name come in runs) skips even that. `compute` is called with the text.
// Not shared between threads: keep one per analysis, or one per thread (thread_local).
template <class T>
class NameMemo {
 public:
  using Compute = T (*)(const std::string&);
  explicit NameMemo(Compute compute) : compute_(compute) {}

  const T& operator()(const Name& n) {
    const std::string* key = &n.str();
    if (key == last_key_) return *last_;
    auto [it, fresh] = memo_.try_emplace(key);
    if (fresh) it->second = compute_(*key);
    last_key_ = key;
    last_ = &it->second;  // node-based: stays valid as the map grows
    return *last_;
  }

 private:
  Compute compute_;
  std::unordered_map<const std::string*, T> memo_;
  const std::string* last_key_ = nullptr;
  const T* last_ = nullptr;
};

}  // namespace fusebox

template <>
struct std::hash<fusebox::Name> {
  size_t operator()(const fusebox::Name& n) const noexcept {
    return std::hash<std::string>()(n.str());
  }
};
