#include "core/ir/npy.h"

#include <cstring>
#include <sstream>
#include <string_view>
#include <utility>

#include "core/base/atomic_file.h"
#include "core/base/checked.h"
#include "core/base/error.h"

namespace fusebox::ir {

void write_npy(const std::string& path, const Tensor& t) {
  std::string header = "{'descr': '";
  header += t.dtype() == DType::f32 ? "<f4" : "<i8";
  header += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.shape().size(); ++i) header += std::to_string(t.shape()[i]) + ", ";
  if (t.shape().size() > 1) header.resize(header.size() - 2);
  else if (t.shape().size() == 1) header.resize(header.size() - 1);  // "(3,)"
  header += "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  write_file_atomically(path, [&](std::ostream& out) {
    out.write("\x93NUMPY\x01\x00", 8);
    uint16_t len = static_cast<uint16_t>(header.size());
    char le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
    out.write(le, 2);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(t.bytes()), static_cast<std::streamsize>(t.nbytes()));
  });
}

namespace {

// The header of a .npy file: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (1, 784), }
// read by a small strict tokenizer: exactly the keys 'descr', 'fortran_order' and 'shape', each
// once; a string, True/False and a tuple of non-negative ints (trailing comma allowed). Anything
// else is a fusebox::Error naming the file and what is wrong.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{', "the header to start with '{'");
    while (true) {
      skip_space();
      if (peek() == '}') break;
      std::string key = string_literal("a key");
      expect(':', "':' after '" + key + "'");
      if (key == "descr") {
        once(seen_descr, key);
        h.descr = string_literal("a string for 'descr'");
      } else if (key == "fortran_order") {
        once(seen_fortran, key);
        h.fortran_order = boolean("'fortran_order'");
      } else if (key == "shape") {
        once(seen_shape, key);
        h.shape = tuple();
      } else {
        fail("unknown key '" + key + "'");
      }
      skip_space();
      if (peek() == ',')
        ++at_;
      else if (peek() != '}')
        fail("expected ',' or '}' after the value of '" + key + "', " + found());
    }
    ++at_;  // '}'
    skip_space();
    if (at_ != text_.size()) fail("unexpected text after '}'");
    if (!seen_descr) fail("no 'descr'");
    if (!seen_fortran) fail("no 'fortran_order'");
    if (!seen_shape) fail("no 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(path_ + ": .npy header: " + what + " (at byte " + std::to_string(at_) + " of " +
                std::to_string(text_.size()) + ")");
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  std::string found() const {
    if (at_ >= text_.size()) return "got the end of the header";
    return std::string("got '") + text_[at_] + "'";
  }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  void expect(char c, const std::string& what) {
    skip_space();
    if (peek() != c) fail("expected " + what + ", " + found());
    ++at_;
  }
  void once(bool& seen, const std::string& key) {
    if (seen) fail("'" + key + "' given twice");
    seen = true;
  }
  std::string string_literal(const std::string& what) {
    skip_space();
    char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected " + what + " in quotes, " + found());
    size_t close = text_.find(quote, at_ + 1);
    if (close == std::string_view::npos) fail("unclosed string");
    std::string s(text_.substr(at_ + 1, close - at_ - 1));
    at_ = close + 1;
    return s;
  }
  bool boolean(const std::string& what) {
    skip_space();
    for (const char* word : {"True", "False"}) {
      if (text_.substr(at_, std::strlen(word)) == word) {
        at_ += std::strlen(word);
        return word[0] == 'T';
      }
    }
    fail("expected True or False for " + what + ", " + found());
  }
  int64_t dim() {
    skip_space();
    if (peek() == '-') fail("negative dim in 'shape'");
    if (peek() < '0' || peek() > '9')
      fail("expected a dim (a non-negative integer) in 'shape', " + found());
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      auto tens = checked_mul(v, 10);
      auto next = tens ? checked_add(*tens, peek() - '0') : std::nullopt;
      if (!next) fail("dim in 'shape' is too large");
      v = *next;
      ++at_;
    }
    return v;
  }
  Shape tuple() {
    skip_space();
    if (peek() != '(') fail("expected 'shape' to be a tuple like (1, 784), " + found());
    ++at_;
    Shape shape;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      shape.push_back(dim());
      skip_space();
      if (peek() == ',')
        ++at_;
      else if (peek() != ')')
        fail("expected ',' or ')' in 'shape', " + found());
    }
    ++at_;  // ')'
    return shape;
  }

  std::string_view text_;
  const std::string& path_;
  size_t at_ = 0;
};

// Bytes per element of the supported dtypes, 0 for any other.
size_t element_size(const std::string& descr) {
  if (descr == "<f4" || descr == "<i4") return 4;
  if (descr == "<f8" || descr == "<i8") return 8;
  return 0;
}

// Element count of `shape` and the data bytes it needs, or an Error naming the file.
std::pair<int64_t, size_t> data_size(const Shape& shape, size_t elem, const std::string& path) {
  const auto n = checked_product(shape);
  const auto bytes = n ? checked_mul(static_cast<size_t>(*n), elem) : std::nullopt;
  if (!bytes) throw Error(path + ": .npy shape " + shape_str(shape) + " has too many elements");
  return {*n, *bytes};
}

// Where the header starts and how long it is, from the magic and version fields.
std::pair<size_t, size_t> header_span(const std::string& bytes, const std::string& path) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw Error(path + ": not a .npy file");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": truncated .npy header");
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    start = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (header_len > bytes.size() - start) throw Error(path + ": truncated .npy header");
  return {start, header_len};
}

Tensor convert(const NpyHeader& h, int64_t n, const char* src) {
  if (h.descr == "<f4" || h.descr == "<f8") {
    Tensor t(DType::f32, h.shape);
    for (int64_t i = 0; i < n; ++i) {
      if (h.descr == "<f4")
        std::memcpy(t.data<float>() + i, src + 4 * i, 4);
      else {
        double d;
        std::memcpy(&d, src + 8 * i, 8);
        t.data<float>()[i] = static_cast<float>(d);
      }
    }
    return t;
  }
  Tensor t(DType::i64, h.shape);
  for (int64_t i = 0; i < n; ++i) {
    if (h.descr == "<i8")
      std::memcpy(t.data<int64_t>() + i, src + 8 * i, 8);
    else {
      int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      t.data<int64_t>()[i] = v;
    }
  }
  return t;
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::string bytes = read_file(path);
  auto [start, header_len] = header_span(bytes, path);
  NpyHeader h = HeaderParser(std::string_view(bytes).substr(start, header_len), path).parse();
  if (h.fortran_order) throw Error(path + ": Fortran-order arrays are not supported");
  size_t elem = element_size(h.descr);
  if (elem == 0)
    throw Error(path + ": dtype '" + h.descr + "' is not supported (use float32 or int64)");
  auto [n, needed] = data_size(h.shape, elem, path);
  size_t data_at = start + header_len;
  if (bytes.size() - data_at != needed)
    throw Error(path + ": holds " + std::to_string(bytes.size() - data_at) + " data bytes, shape " +
                shape_str(h.shape) + " needs " + std::to_string(needed));
  try {
    return convert(h, n, bytes.data() + data_at);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

Shape read_npy_shape(const std::string& path) {
  // The magic, the version, the header length and a header of up to 64 KiB (version 1's most; a
  // real one is a few hundred bytes): a longer one is "truncated" here.
  const std::string bytes = read_file_prefix(path, 12 + 65535);
  auto [start, header_len] = header_span(bytes, path);
  NpyHeader h = HeaderParser(std::string_view(bytes).substr(start, header_len), path).parse();
  if (h.fortran_order) throw Error(path + ": Fortran-order arrays are not supported");
  if (element_size(h.descr) == 0)
    throw Error(path + ": dtype '" + h.descr + "' is not supported (use float32 or int64)");
  return h.shape;
}

}  // namespace fusebox::ir
