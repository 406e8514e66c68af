#pragma once
// A temporary folder of this test process's own. CTest runs each test as its own process, two
// at a time, so a fixed name under TempDir() is shared by tests running at once: one reads the
// other's half-written file (it happened). Names inside this folder are the process's alone.
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace fusebox::test {

inline std::string process_temp_dir() {
  static const std::string dir = [] {
    std::filesystem::path d =
        std::filesystem::path(::testing::TempDir()) / ("fusebox-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

}  // namespace fusebox::test
