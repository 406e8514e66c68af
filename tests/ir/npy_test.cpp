// .npy headers from outside: every malformed header is a fusebox::Error naming the file and what
// is wrong, never a misread shape, an out-of-bounds read or a std exception.
#include "core/ir/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

#include "core/base/error.h"
#include "tests/support/temp_dir.h"

namespace fusebox::ir {
namespace {

// Writes a version 1.0 .npy file with `header` verbatim followed by `data_bytes` zero bytes.
std::string write_raw(const std::string& name, const std::string& header, size_t data_bytes = 0) {
  std::string path = test::process_temp_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  char le[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(le, 2);
  out << header << std::string(data_bytes, '\0');
  return path;
}

// The message read_npy throws for `header`; fails the test when it does not throw an Error.
std::string error_of(const std::string& header, size_t data_bytes = 0) {
  std::string path = write_raw("h.npy", header, data_bytes);
  try {
    read_npy(path);
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a fusebox::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error for header " << header;
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(NpyHeader, ReadsNumpyStyleHeaders) {
  Tensor t = read_npy(write_raw(
      "a.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 784), }\n", 4 * 784));
  EXPECT_EQ(t.shape(), (Shape{1, 784}));
  EXPECT_EQ(
      read_npy(write_raw("b.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 24))
          .shape(),
      Shape{3});
  EXPECT_EQ(
      read_npy(write_raw("c.npy",
                         "{\"shape\":(2,2),\"descr\":\"<f8\",\"fortran_order\":False}   \n", 32))
          .shape(),
      (Shape{2, 2}));
  EXPECT_EQ(
      read_npy(write_raw("d.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 4))
          .shape(),
      Shape{});
}

TEST(NpyHeader, DescrAtTheEndIsAnErrorNotAnOverread) {
  EXPECT_TRUE(has(error_of("{'descr':     "), "expected a string for 'descr'"));
  EXPECT_TRUE(has(error_of("{'descr':"), "got the end of the header"));
}

TEST(NpyHeader, NoColonsIsMalformedNotFortranOrder) {
  std::string msg = error_of("{'descr' '<f4' 'fortran_order' False 'shape' (2,)}");
  EXPECT_TRUE(has(msg, "expected ':' after 'descr'")) << msg;
  EXPECT_FALSE(has(msg, "Fortran")) << msg;
}

TEST(NpyHeader, ShapeMustBeAClosedTupleOfNonNegativeInts) {
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': 784, }", 4 * 784),
                  "expected 'shape' to be a tuple"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 784", 4 * 784),
                  "expected ',' or ')' in 'shape', got the end"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1, -784), }"),
                  "negative dim"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1, x), }"),
                  "expected a dim"));
  EXPECT_TRUE(
      has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"),
          "too large"));
  EXPECT_TRUE(
      has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
          "too many elements"));
}

TEST(NpyHeader, EveryOtherMistakeIsAnErrorNamingIt) {
  EXPECT_TRUE(has(error_of(""), "expected the header to start with '{'"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}"),
                  "expected ',' or '}' after the value of 'descr', got 'f'"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4"), "unclosed string"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}"),
                  "expected True or False"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': False}"), "no 'shape'"));
  EXPECT_TRUE(has(error_of("{'fortran_order': False, 'shape': (1,)}"), "no 'descr'"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'shape': (1,)}"), "no 'fortran_order'"));
  EXPECT_TRUE(
      has(error_of("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}"),
          "twice"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}"),
                  "unknown key 'x'"));
  EXPECT_TRUE(
      has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk"), "after '}'"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}"),
                  "expected ',' or '}'"));
  EXPECT_TRUE(
      has(error_of("{'descr': '<f4', 'fortran_order': True, 'shape': (1,)}", 4), "Fortran-order"));
  EXPECT_TRUE(
      has(error_of("{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}", 1), "dtype '|u1'"));
  EXPECT_TRUE(has(error_of("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 4),
                  "holds 4 data bytes"));
}

}  // namespace
}  // namespace fusebox::ir
