#include "core/base/symbols.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace fusebox {
namespace {

// Index of the '<' or '(' that opens the group closing at `close` (a '>' or ')'), or npos.
size_t open_of(const std::string& s, size_t close) {
  int depth = 0;
  for (size_t i = close + 1; i-- > 0;) {
    const char c = s[i];
    if (c == '>' || c == ')') ++depth;
    if (c == '<' || c == '(') {
      if (--depth == 0) return i;
    }
  }
  return std::string::npos;
}

}  // namespace

std::string demangle(const std::string& name) {
  if (name.rfind("_Z", 0) != 0) return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

std::string kernel_short_name(const std::string& name) {
  std::string s = demangle(name);
  // Parameters: the group the name ends with ("(float const*, int)"), and any cv-qualifiers.
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (!s.empty() && s.back() == ')') {
    const size_t open = open_of(s, s.size() - 1);
    if (open != std::string::npos) s.erase(open);
  }
  // Template arguments of the function itself.
  while (!s.empty() && s.back() == '>') {
    const size_t open = open_of(s, s.size() - 1);
    if (open == std::string::npos) break;
    s.erase(open);
  }
  // Return type and enclosing scopes: what follows the last space or "::" outside any group.
  int depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(') ++depth;
    if (c == '>' || c == ')') --depth;
    if (depth != 0) continue;
    if (c == ' ') begin = i + 1;
    if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') begin = i + 2;
  }
  s = s.substr(begin);
  return s.empty() ? name : s;
}

}  // namespace fusebox
