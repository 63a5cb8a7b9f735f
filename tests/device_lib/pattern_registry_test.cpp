// The device library's pattern factories against the host list of patterns, at
// run time and without a GPU: every pattern the catalog lists has a factory,
// and the device registers no pattern the host does not list.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "heapbench/catalog.hpp"
#include "heapbench/device.hpp"

namespace heapbench {
namespace {

TEST(PatternRegistry, HostAndDeviceListTheSamePatterns) {
  std::vector<std::string> host(kPatterns.begin(), kPatterns.end());
  std::vector<std::string> device = device_pattern_names();
  std::sort(host.begin(), host.end());
  std::sort(device.begin(), device.end());
  EXPECT_EQ(host, device);
}

TEST(PatternRegistry, NamesAreUnique) {
  for (std::size_t i = 0; i < kPatterns.size(); ++i) {
    for (std::size_t j = i + 1; j < kPatterns.size(); ++j) EXPECT_NE(kPatterns[i], kPatterns[j]);
  }
}

TEST(PatternRegistry, CatalogReadsTheTraits) {
  for (const PatternTraits* p : kPatternTraits) {
    EXPECT_EQ(find_pattern_traits(p->name), p) << p->name;
    EXPECT_TRUE(is_pattern(p->name)) << p->name;
    EXPECT_EQ(is_capacity_family(p->name), p->fills_heap) << p->name;
    EXPECT_EQ(limit_of(p->name), p->limit) << p->name;
    EXPECT_FALSE(p->summary.empty()) << p->name;
    EXPECT_GE(p->threads_per_call, 1u) << p->name;
  }
}

}  // namespace
}  // namespace heapbench
