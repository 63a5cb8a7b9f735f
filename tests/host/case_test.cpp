#include "heapbench/case.hpp"

#include <gtest/gtest.h>

namespace heapbench {
namespace {

TEST(CaseName, FollowsTheAxisScheme) {
  EXPECT_EQ(case_name(Case{"per_thread", "malloc", 64, 0, 1024, 8 * kMiB}),
            "per_thread/malloc/size:64/threads:1024/heap:8");
  EXPECT_EQ(case_name(Case{"per_block", "aligned", 100, 4096, 32, 1024 * kMiB}),
            "per_block/aligned/size:100/align:4096/threads:32/heap:1024");
  EXPECT_EQ(case_name(Case{"printf", "printf", 16, 0, 1024, 8 * kMiB}), "printf/printf/size:16/threads:1024/fifo:8")
      << "printf's limit is the FIFO";
}

TEST(CountMatching, UsesGoogleBenchmarkFilterRules) {
  const std::vector<std::string> names = {"per_thread/malloc/size:64/threads:32/heap:8",
                                          "per_thread/malloc/size:640/threads:32/heap:8",
                                          "per_thread/malloc/size:64/threads:1024/heap:64"};
  EXPECT_EQ(count_matching(names, ""), 3u);
  EXPECT_EQ(count_matching(names, "all"), 3u);
  EXPECT_EQ(count_matching(names, "^per_thread/malloc/size:64/"), 2u);
  EXPECT_EQ(count_matching(names, "heap:64$"), 1u);
  EXPECT_EQ(count_matching(names, "-heap:8$"), 1u);
  EXPECT_EQ(count_matching(names, "^per_block/"), 0u);
  EXPECT_THROW(count_matching(names, "size:(64"), std::invalid_argument);
}

}  // namespace
}  // namespace heapbench
