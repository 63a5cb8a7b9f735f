#include "heapbench/case.hpp"
#include "cases/case_naming.hpp"
#include "cases/catalog.hpp"
#include "plan/benchmark_flags.hpp"
#include "plan/sweep.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "cases/axis_values.hpp"

namespace heapbench {
namespace {

TEST(Case, ADemandThatDoesNotFitIn64BitsIsTheLargestNotAWrappedOne) {
  // Issue 35 (E13): 2^63 B x 2 threads wrapped to 0 and passed the demand check.
  const Case c = make_case("per_thread", "malloc", 1ull << 63, 0, 2, 8 * kMiB);
  EXPECT_EQ(c.demand(), ~std::uint64_t{0});
  EXPECT_GT(heap_footprint(c), c.limit_bytes);
  EXPECT_EQ(make_case("per_thread", "malloc", 64, 0, 1024, 8 * kMiB).demand(), 65536u);
}

TEST(CaseName, FollowsTheAxisScheme) {
  EXPECT_EQ(case_name(make_case("per_thread", "malloc", 64, 0, 1024, 8 * kMiB)),
            "per_thread/malloc/size:64/threads:1024/heap:8");
  EXPECT_EQ(case_name(make_case("per_block", "aligned", 100, 4096, 32, 1024 * kMiB)),
            "per_block/aligned/size:100/align:4096/threads:32/heap:1024");
  EXPECT_EQ(case_name(make_case("printf", "printf", 16, 0, 1024, 8 * kMiB)), "printf/printf/size:16/threads:1024/fifo:8")
      << "printf's limit is the FIFO";
}

TEST(CaseLimits, SayWhichDeviceLimitTheNumberIs) {
  const Case heap = make_case("per_thread", "malloc", 64, 0, 1024, 8 * kMiB);
  EXPECT_EQ(heap.limit(), Limit::malloc_heap);
  EXPECT_EQ(heap.malloc_heap(), 8 * kMiB);
  EXPECT_EQ(heap.printf_fifo(), 0u);
  const Case bump = make_case("capacity", "bump", 64, 0, 1024, 64 * kMiB);
  EXPECT_EQ(bump.arena_bytes(), 64 * kMiB) << "an own arena is as large as the heap axis";
  const Case fifo = make_case("printf", "printf", 16, 0, 1024, 1 * kMiB);
  EXPECT_EQ(fifo.limit(), Limit::printf_fifo);
  EXPECT_EQ(fifo.printf_fifo(), 1 * kMiB);
  EXPECT_EQ(fifo.malloc_heap(), 0u) << "printf sets no heap";
  EXPECT_EQ(fifo.arena_bytes(), 0u);
  EXPECT_EQ(limit_key(Limit::malloc_heap), "malloc_heap");
  EXPECT_EQ(limit_key(Limit::printf_fifo), "printf_fifo");
}

TEST(AxisValues, NameEveryAxisInBytesUnderItsLimit) {
  EXPECT_EQ(axis_values(make_case("per_block", "aligned", 100, 4096, 32, 1024 * kMiB)).dump(),
            R"({"pattern":"per_block","api":"aligned","size":100,"align":4096,"threads":32,"malloc_heap":1073741824})");
  EXPECT_EQ(axis_values(make_case("per_thread", "malloc", 64, 0, 1024, 8 * kMiB)).dump(),
            R"({"pattern":"per_thread","api":"malloc","size":64,"threads":1024,"malloc_heap":8388608})")
      << "align only where the API takes one";
  EXPECT_EQ(axis_values(make_case("printf", "printf", 16, 0, 1024, 8 * kMiB)).dump(),
            R"({"pattern":"printf","api":"printf","size":16,"threads":1024,"printf_fifo":8388608})");
}

TEST(ApiTraits, EverySourceAndCallPathHasItsKey) {
  for (const ApiTraits& t : api_traits_list()) {
    EXPECT_FALSE(source_key(t.source).empty()) << t.name;  // throws for an enumerator without a key
    EXPECT_FALSE(call_path_key(t.call_path).empty()) << t.name;
  }
  EXPECT_EQ(source_key(Source::device_heap), "device_heap");
  EXPECT_EQ(source_key(Source::printf_fifo), "printf_fifo");
  EXPECT_EQ(call_path_key(CallPath::direct), "direct");
  EXPECT_EQ(call_path_key(CallPath::nvfunction), "nvfunction");
  EXPECT_THROW(source_key(static_cast<Source>(-1)), std::logic_error);
  EXPECT_THROW(call_path_key(static_cast<CallPath>(3)), std::logic_error);
}

TEST(Case, HoldsItsTraitsNamesBecomeTraitsOnce) {
  const Case c = make_case("per_warp", "bump", 64, 0, 1024, 8 * kMiB);
  EXPECT_EQ(c.pattern, find_pattern_traits("per_warp"));
  EXPECT_EQ(c.api, find_api_traits("bump"));
  EXPECT_EQ(c.pattern->threads_per_call, 32u);
  EXPECT_TRUE(c.api->baseline);
  EXPECT_THROW(make_case("per_thrad", "malloc", 64, 0, 1024, 8 * kMiB), std::invalid_argument);
  EXPECT_THROW(make_case("per_thread", "no_such_api", 64, 0, 1024, 8 * kMiB), std::invalid_argument);
}

TEST(PlanCases, TurnsTheNamesOfASweepIntoTheirTraitsAndLeavesOutWhatItCannotRun) {
  // Names the catalogs do not know, and pairs a pattern cannot take (per_warp
  // does not print; printf is not a heap), are left out; what is planned holds
  // the catalogs' entries of the names given. (Issue 54: the loop this replaces
  // compared each planned case's traits with the lookup of their own name, which
  // holds whatever plan_cases plans.)
  Sweep s;
  s.patterns = {"per_warp", "no_such_pattern", "printf"};
  s.apis = {"printf", "no_such_api", "bump"};
  s.sizes = {16};
  s.heaps = {8 * kMiB};
  s.set("threads", {1024});
  const std::vector<Case> planned = plan_cases({s});
  ASSERT_EQ(planned.size(), 2u);
  EXPECT_EQ(case_name(planned[0]), "per_warp/bump/size:16/threads:1024/heap:8");
  EXPECT_EQ(planned[0].pattern, find_pattern_traits("per_warp"));
  EXPECT_EQ(planned[0].api, find_api_traits("bump"));
  EXPECT_EQ(case_name(planned[1]), "printf/printf/size:16/threads:1024/fifo:8");
  EXPECT_EQ(planned[1].pattern, find_pattern_traits("printf"));
  EXPECT_EQ(planned[1].api, find_api_traits("printf"));
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
