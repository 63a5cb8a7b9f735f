#pragma once
// What both registry tests ask of a list of names: each once.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace heapbench::registry_test {

// No name twice.
inline void expect_unique(const std::vector<std::string_view>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
  }
}

}  // namespace heapbench::registry_test
