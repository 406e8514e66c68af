#pragma once
// A temporary folder of this test process's own. CTest runs each test as its own process, two
// at a time, so a fixed name under TempDir() is shared by tests running at once: one reads the
// other's half-written file (it happened). Names inside this folder are the process's alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace fusebox::test {

// Removes `dir` as the test process exits, when every test in it passed (a failed test's files
// stay, to be looked at). Without it each run left its folders in /tmp: thousands of them.
inline void remove_at_exit(const std::string& dir) {
  struct Folders {
    std::vector<std::string> dirs;
    ~Folders() {
      // Built on the first call from inside a test, so after gtest's UnitTest: destroyed first.
      if (!::testing::UnitTest::GetInstance()->Passed()) return;
      for (const std::string& d : dirs) {
        std::error_code ec;
        std::filesystem::remove_all(d, ec);
      }
    }
  };
  static Folders folders;
  folders.dirs.push_back(dir);
}

inline std::string process_temp_dir() {
  static const std::string dir = [] {
    std::filesystem::path d =
        std::filesystem::path(::testing::TempDir()) / ("fusebox-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    remove_at_exit(d.string());
    return d.string();
  }();
  return dir;
}

}  // namespace fusebox::test
