#include "core/base/strings.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/base/error.h"

namespace fusebox {

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    parts.emplace_back(text.substr(start, pos == std::string_view::npos ? text.npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

std::string trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\n' || text[b] == '\r')) ++b;
  while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n' ||
                   text[e - 1] == '\r'))
    --e;
  return std::string(text.substr(b, e - b));
}

int64_t parse_int(std::string_view text, std::string_view what) {
  std::string s(trim(text));
  if (s.empty()) throw Error(std::string(what) + ": expected an integer, got nothing");
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE)
    throw Error(std::string(what) + ": expected an integer, got '" + s + "'");
  return v;
}

double parse_double(std::string_view text, std::string_view what) {
  std::string s(trim(text));
  errno = 0;
  char* end = nullptr;
  double v = s.empty() ? 0.0 : std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
    throw Error(std::string(what) + ": expected a number, got '" + s + "'");
  return v;
}

std::string format_bytes(double bytes) {
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  } else if (bytes < 1024.0 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024);
  } else if (bytes < 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.2f MiB", bytes / (1024.0 * 1024));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  }
  return buf;
}

}  // namespace fusebox
