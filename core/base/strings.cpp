#include "core/base/strings.h"

#include <algorithm>
#include <cctype>
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

std::string format_duration_ns(double ns) {
  char buf[64];
  const double a = std::fabs(ns);
  if (a < 1e3) std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (a < 1e6) std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  else if (a < 1e9) std::snprintf(buf, sizeof buf, "%.2f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  return buf;
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

namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Levenshtein distance with one row of the table (names are short).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string closest(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(2, word.size() / 3);
  const std::string* best = nullptr;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best = &c;
      best_distance = d;
    }
  }
  return best ? *best : std::string();
}

std::string suggest(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string guess = closest(word, candidates);
  return guess.empty() ? "valid: " + join(candidates, ", ") : "did you mean '" + guess + "'?";
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace fusebox
