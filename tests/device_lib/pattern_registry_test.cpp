// The catalog's answers about patterns, against facts stated here (not derived
// from the traits they come from), and the pattern names, each once. That the
// device library has a factory for every pattern the host lists needs no test:
// both come from one table (pattern_registry.cu's kPatternFiles, over the
// pattern files' traits), so such a test could not fail (issue 37).
#include <gtest/gtest.h>

#include "cases/catalog.hpp"
#include "device/device.hpp"
#include "same_names.hpp"

namespace heapbench {
namespace {

TEST(PatternRegistry, NamesAreUnique) { registry_test::expect_unique({kPatterns.begin(), kPatterns.end()}); }

TEST(PatternRegistry, TheCatalogAnswersWhatThePatternsAre) {
  EXPECT_TRUE(is_pattern("per_thread"));
  EXPECT_TRUE(is_pattern("hash"));
  EXPECT_FALSE(is_pattern("per_thred"));
  EXPECT_FALSE(is_pattern(""));
  EXPECT_TRUE(is_capacity_family("capacity"));
  EXPECT_TRUE(is_capacity_family("capacity_fill"));
  EXPECT_FALSE(is_capacity_family("per_thread"));
  EXPECT_FALSE(is_capacity_family("churn"));
  EXPECT_EQ(limit_of("printf"), Limit::printf_fifo);
  EXPECT_EQ(limit_of("per_block"), Limit::malloc_heap);
  ASSERT_NE(find_pattern_traits("per_warp"), nullptr);
  EXPECT_EQ(find_pattern_traits("per_warp")->threads_per_call, 32u);
  EXPECT_EQ(find_pattern_traits("per_block")->threads_per_call, 256u);
  EXPECT_EQ(find_pattern_traits("per_thread")->threads_per_call, 1u);
  EXPECT_EQ(find_pattern_traits("nope"), nullptr);
}

}  // namespace
}  // namespace heapbench
