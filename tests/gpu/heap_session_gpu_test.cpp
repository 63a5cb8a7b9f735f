#include <gtest/gtest.h>

#include "heapbench/device.hpp"
#include "round.hpp"

namespace heapbench {
namespace {

Case small(std::uint64_t heap) { return Case{"per_thread", "malloc", 64, 0, 256, heap}; }

TEST(HeapSessionGpu, ChangingTheHeapAfterMallocRanResetsAndTakesEffect) {
  HeapSession s(0);
  EXPECT_GE(s.ensure_heap(8 * kMiB), 8 * kMiB);
  {
    auto r = make_cuda_round(small(8 * kMiB), 5.0);
    EXPECT_EQ(run_round(*r, 0).problem(5.0), "");
  }
  const int before = s.resets();
  EXPECT_EQ(s.ensure_heap(8 * kMiB), s.ensure_heap(8 * kMiB));
  EXPECT_EQ(s.resets(), before) << "same size must not reset";
  EXPECT_GE(s.ensure_heap(24 * kMiB), 24 * kMiB);
  EXPECT_EQ(s.resets(), before + 1);
  auto r = make_cuda_round(small(24 * kMiB), 5.0);
  EXPECT_EQ(run_round(*r, 0).problem(5.0), "");
}

TEST(HeapSessionGpu, InvalidateForcesAResetAtTheSameSize) {
  HeapSession s(0);
  s.ensure_heap(16 * kMiB);
  const int before = s.resets();
  s.invalidate();
  s.ensure_heap(16 * kMiB);
  EXPECT_EQ(s.resets(), before + 1);
}

TEST(HeapSessionGpu, CapacityProbeSeesWhatIsHeldAndWhatIsFreed) {
  HeapSession s(0);
  const std::uint64_t heap = s.ensure_heap(64 * kMiB);
  const std::uint64_t empty = probe_heap_capacity(heap);
  EXPECT_GT(empty, heap / 2);
  EXPECT_LE(empty, heap);
  EXPECT_EQ(probe_heap_capacity(heap), empty) << "the probe frees what it takes";
}

}  // namespace
}  // namespace heapbench
