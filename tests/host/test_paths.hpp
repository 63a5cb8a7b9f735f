// A file name of one test's own. CTest runs the tests of a binary as separate
// processes in parallel (gtest_discover_tests), so a fixed name under TempDir()
// is written by two tests at once: CI saw MatrixMarket's two malformed-file
// tests read each other's /tmp/t.mtx.
//
// Every name handed out is removed when its test ends (a link, not what it
// names): without it each run of the host tests left up to two dozen files in /tmp
// (901 on a development machine after some fifty runs).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace heapbench::testing {

// The names handed out during the test now running.
inline std::vector<std::string>& own_temp_paths() {
  static std::vector<std::string> paths;
  return paths;
}

// Removes them at the end of each test, passed or failed.
class OwnTempPathRemover final : public ::testing::EmptyTestEventListener {
 public:
  void OnTestEnd(const ::testing::TestInfo&) override {
    for (const auto& p : own_temp_paths()) {
      std::error_code ignored;  // a name the test never wrote, or already removed
      std::filesystem::remove(p, ignored);
    }
    own_temp_paths().clear();
  }
};

// Installed once per binary, before main (gtest_main) runs the tests; the
// listener list owns it.
inline const bool kOwnTempPathRemoverInstalled =
    (::testing::UnitTest::GetInstance()->listeners().Append(new OwnTempPathRemover), true);

inline std::string own_temp_path(const std::string& name) {
  std::string who = "hbtest";
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    who = std::string(info->test_suite_name()) + "." + info->name();
  }
  for (char& c : who) {
    if (c == '/') c = '_';
  }
  std::string path = ::testing::TempDir() + who + "." + std::to_string(::getpid()) + "." + name;
  own_temp_paths().push_back(path);
  return path;
}

}  // namespace heapbench::testing
