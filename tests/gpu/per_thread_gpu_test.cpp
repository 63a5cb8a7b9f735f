#include <gtest/gtest.h>

#include "heapbench/device.hpp"

namespace heapbench {
namespace {

constexpr double kBudget = 10.0;

IterationResult run(HeapSession& s, const Case& c, double budget = kBudget) {
  s.ensure_heap(c.heap);
  PerThreadRunner r(c, budget);
  return r.run_once();
}

class PerThreadGpu : public ::testing::TestWithParam<std::uint64_t> {};

// Sizes that exercise the word loop, the byte tail, and both.
TEST_P(PerThreadGpu, EveryThreadGetsAWritableAlignedBlockWhenTheHeapIsAmple) {
  HeapSession s(0);
  const Case c{"per_thread", "malloc", GetParam(), 0, 1000, 64 * kMiB};
  const IterationResult r = run(s, c);
  EXPECT_EQ(r.problem(kBudget), "");
  EXPECT_EQ(r.tally.attempts, 1000u);
  EXPECT_EQ(r.tally.successes, 1000u);
  EXPECT_EQ(r.tally.frees, 1000u);
  EXPECT_EQ(r.tally.bytes, 1000u * GetParam());
  EXPECT_GT(r.tally.alloc_seconds, 0.0);
  EXPECT_GT(r.tally.free_seconds, 0.0);
}
INSTANTIATE_TEST_SUITE_P(Sizes, PerThreadGpu, ::testing::Values(1, 3, 16, 100, 1000, 4096, 3001));

TEST(PerThreadGpuLimits, AnOversubscribedHeapFailsSomeCallsAndRecoversAfterFree) {
  HeapSession s(0);
  // 8192 x 4 KiB = 32 MiB asked of an 8 MiB heap.
  const Case c{"per_thread", "malloc", 4096, 0, 8192, 8 * kMiB};
  s.ensure_heap(c.heap);
  PerThreadRunner runner(c, kBudget);
  const IterationResult first = runner.run_once();
  EXPECT_EQ(first.problem(kBudget), "");
  EXPECT_GT(first.tally.successes, 0u);
  EXPECT_LT(first.tally.successes, c.threads);
  EXPECT_LE(first.tally.bytes, 8 * kMiB);
  // Everything was freed: a second round finds (about) the same room.
  const IterationResult second = runner.run_once();
  EXPECT_EQ(second.problem(kBudget), "");
  EXPECT_GE(second.tally.successes * 10, first.tally.successes * 9);
}

TEST(PerThreadGpuLimits, ASpentBudgetIsReportedAsTruncationNotAsAFigure) {
  HeapSession s(0);
  const Case c{"per_thread", "malloc", 64, 0, 1u << 16, 64 * kMiB};
  const IterationResult r = run(s, c, 1e-9);
  EXPECT_GT(r.not_started, 0u);
  EXPECT_NE(r.problem(1e-9).find("truncated"), std::string::npos);
}

}  // namespace
}  // namespace heapbench
