#pragma once
// Paths and names from the file system are bytes; JSON and messages want UTF-8.
#include <string>
#include <string_view>

namespace fusebox {

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);
// `text` with every byte that does not start a well-formed UTF-8 sequence replaced by U+FFFD:
// a path or name from the file system, safe to show or to put in JSON.
std::string valid_utf8(std::string_view text);

}  // namespace fusebox
