#pragma once
// fusebox::Error: the one exception type for problems a user can act on (bad file, unknown op,
// wrong shape, bad option). Messages name what and where: "transformer.json: $.passes[2]: ...".
#include <stdexcept>
#include <string>

namespace fusebox {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace fusebox
