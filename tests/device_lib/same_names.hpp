#pragma once
// What both registry tests ask of a host list and the device library's list:
// the same names, each once.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace heapbench::registry_test {

// The same names, in any order.
inline void expect_same_names(std::vector<std::string> host, std::vector<std::string> device) {
  std::sort(host.begin(), host.end());
  std::sort(device.begin(), device.end());
  EXPECT_EQ(host, device);
}

// No name twice.
inline void expect_unique(const std::vector<std::string_view>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
  }
}

}  // namespace heapbench::registry_test
