#include "heapbench/sweep.hpp"

#include <gtest/gtest.h>

#include <set>

namespace heapbench {
namespace {

// How many times a run of `cases` in order changes the heap (= device resets after the first).
int heap_changes(const std::vector<Case>& cases) {
  int n = 0;
  for (std::size_t i = 1; i < cases.size(); ++i) n += cases[i].heap != cases[i - 1].heap;
  return n;
}

TEST(Sweep, DefaultCoversTheAxesTheIssueNames) {
  const Sweep s = default_sweep();
  EXPECT_EQ(s.sizes.front(), 16u);
  EXPECT_EQ(s.sizes.back(), 64u * 1024);
  EXPECT_EQ(s.threads.front(), 32u);
  EXPECT_EQ(s.threads.back(), 1u << 20);
  EXPECT_EQ(s.heaps.front(), 8 * kMiB);
  bool odd = false;
  for (auto v : s.sizes) odd |= (v & (v - 1)) != 0;
  EXPECT_TRUE(odd) << "the default sweep must include sizes that are not powers of two";
}

TEST(Sweep, CasesRunHeapMajorSoEachHeapSizeResetsOnce) {
  Sweep s;
  s.sizes = {4096, 16};
  s.threads = {1024, 32};
  s.heaps = {1024 * kMiB, 8 * kMiB, 64 * kMiB};
  const auto cases = plan_cases("per_thread", "malloc", s);
  ASSERT_EQ(cases.size(), 12u);
  EXPECT_EQ(heap_changes(cases), 2);
  EXPECT_EQ(cases.front().heap, 8 * kMiB);
  EXPECT_EQ(cases.back().heap, 1024 * kMiB);
  // Any filtered subsequence of a heap-major order is heap-major too.
  std::vector<Case> only_16;
  for (const auto& c : cases) if (c.size == 16) only_16.push_back(c);
  EXPECT_EQ(heap_changes(only_16), 2);
}

TEST(Sweep, DemandFractionPrunesOversubscribedPointsOnly) {
  Sweep s;
  s.sizes = {16, 1024};
  s.threads = {32, 1u << 20};
  s.heaps = {8 * kMiB};
  s.max_demand_fraction = 0.5;
  const auto cases = plan_cases("per_thread", "malloc", s);
  // 2^20 x 16 B = 16 MiB and 2^20 x 1 KiB = 1 GiB exceed 4 MiB; 32 x 1 KiB does not.
  ASSERT_EQ(cases.size(), 2u);
  for (const auto& c : cases) EXPECT_EQ(c.threads, 32u);
  s.max_demand_fraction = 0.0;
  EXPECT_EQ(plan_cases("per_thread", "malloc", s).size(), 4u);
}

TEST(Sweep, RepeatedAxisValuesRunOnce) {
  Sweep s;
  s.sizes = {1024, 1024, 16};
  s.threads = {32, 32};
  s.heaps = {8 * kMiB, 8 * kMiB};
  const auto cases = plan_cases("per_thread", "malloc", s);
  std::set<std::string> names;
  for (const auto& c : cases) names.insert(case_name(c));
  EXPECT_EQ(cases.size(), 2u);
  EXPECT_EQ(names.size(), 2u);
}

TEST(Sweep, DefaultSweepIsAllWithinHalfTheHeap) {
  for (const auto& c : plan_cases("per_thread", "malloc", default_sweep())) {
    EXPECT_LE(c.demand() * 2, c.heap) << case_name(c);
  }
}

}  // namespace
}  // namespace heapbench
