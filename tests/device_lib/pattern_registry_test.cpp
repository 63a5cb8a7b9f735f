// The device library's pattern factories against the host list of patterns, at
// run time and without a GPU: every pattern the catalog lists has a factory,
// and the device registers no pattern the host does not list.
#include <gtest/gtest.h>

#include "heapbench/catalog.hpp"
#include "heapbench/device.hpp"
#include "same_names.hpp"

namespace heapbench {
namespace {

TEST(PatternRegistry, HostAndDeviceListTheSamePatterns) {
  registry_test::expect_same_names({kPatterns.begin(), kPatterns.end()}, device_pattern_names());
}

TEST(PatternRegistry, NamesAreUnique) { registry_test::expect_unique({kPatterns.begin(), kPatterns.end()}); }

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
