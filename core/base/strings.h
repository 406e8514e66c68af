#pragma once
// Small string helpers shared across the tree (joining, splitting, formatting numbers).
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace fusebox {

template <typename Range>
std::string join(const Range& items, std::string_view sep) {
  std::ostringstream out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out << sep;
    out << item;
    first = false;
  }
  return out.str();
}

std::vector<std::string> split(std::string_view text, char sep);
std::string trim(std::string_view text);
// ASCII letters in lower case, other bytes as they are.
std::string to_lower(std::string_view text);
// Parses a whole string as an integer or a number; throws fusebox::Error naming `what` otherwise.
int64_t parse_int(std::string_view text, std::string_view what);
double parse_double(std::string_view text, std::string_view what);
// "1.23 MB", "512 B": bytes for people.
std::string format_bytes(double bytes);
// "812 ns", "12.3 us", "4.56 ms", "1.20 s": a duration in nanoseconds for people.
std::string format_duration_ns(double ns);
// For "did you mean ...?": the candidate nearest to `word` by edit distance (Levenshtein,
// ignoring case), the first of equals, when that distance is at most max(2, word.size() / 3);
// otherwise "" (a suggestion that far off would mislead more than help).
std::string closest(std::string_view word, const std::vector<std::string>& candidates);
// The hint after an unknown name: "did you mean 'first_fit'?" when one is close (closest),
// otherwise "valid: a, b, c".
std::string suggest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace fusebox
