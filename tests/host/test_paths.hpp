// A file name of one test's own. CTest runs the tests of a binary as separate
// processes in parallel (gtest_discover_tests), so a fixed name under TempDir()
// is written by two tests at once: CI saw MatrixMarket's two malformed-file
// tests read each other's /tmp/t.mtx.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace heapbench::testing {

inline std::string own_temp_path(const std::string& name) {
  std::string who = "hbtest";
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    who = std::string(info->test_suite_name()) + "." + info->name();
  }
  for (char& c : who) {
    if (c == '/') c = '_';
  }
  return ::testing::TempDir() + who + "." + std::to_string(::getpid()) + "." + name;
}

}  // namespace heapbench::testing
