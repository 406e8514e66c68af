#include "core/ir/npy.h"

#include <cstring>
#include <sstream>

#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/strings.h"

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

std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw Error(path + ": .npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  size_t b = header.find_first_not_of(' ', colon + 1);
  size_t e = header[b] == '(' ? header.find(')', b) + 1 : header.find_first_of(",}", b);
  if (b == std::string::npos || e == std::string::npos) throw Error(path + ": malformed .npy header");
  return trim(header.substr(b, e - b));
}

}  // namespace

Tensor read_npy(const std::string& path) {
  std::string bytes = read_file(path);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw Error(path + ": not a .npy file");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    start = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (start + header_len > bytes.size()) throw Error(path + ": truncated .npy header");
  std::string header = bytes.substr(start, header_len);
  std::string descr = dict_value(header, "descr", path);
  std::string fortran = dict_value(header, "fortran_order", path);
  std::string shape_text = dict_value(header, "shape", path);
  if (fortran != "False") throw Error(path + ": Fortran-order arrays are not supported");
  Shape shape;
  std::string inner = shape_text.substr(1, shape_text.size() - 2);
  for (const auto& part : split(inner, ',')) {
    std::string p = trim(part);
    if (!p.empty()) shape.push_back(parse_int(p, path + ": shape"));
  }
  descr = descr.substr(1, descr.size() - 2);  // strip quotes
  size_t data_at = start + header_len;
  int64_t n = numel(shape);
  size_t elem = descr == "<f4" || descr == "<i4" ? 4 : (descr == "<f8" || descr == "<i8") ? 8 : 0;
  if (elem == 0) throw Error(path + ": dtype '" + descr + "' is not supported (use float32 or int64)");
  if (bytes.size() - data_at != static_cast<size_t>(n) * elem)
    throw Error(path + ": holds " + std::to_string(bytes.size() - data_at) + " data bytes, shape " +
                shape_str(shape) + " needs " + std::to_string(static_cast<size_t>(n) * elem));
  const char* src = bytes.data() + data_at;
  if (descr == "<f4" || descr == "<f8") {
    Tensor t(DType::f32, shape);
    for (int64_t i = 0; i < n; ++i) {
      if (descr == "<f4") std::memcpy(t.data<float>() + i, src + 4 * i, 4);
      else {
        double d;
        std::memcpy(&d, src + 8 * i, 8);
        t.data<float>()[i] = static_cast<float>(d);
      }
    }
    return t;
  }
  Tensor t(DType::i64, shape);
  for (int64_t i = 0; i < n; ++i) {
    if (descr == "<i8") std::memcpy(t.data<int64_t>() + i, src + 8 * i, 8);
    else {
      int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      t.data<int64_t>()[i] = v;
    }
  }
  return t;
}

}  // namespace fusebox::ir
