#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "device/device.hpp"
#include "cases/case_naming.hpp"
#include "measure/round_phases.hpp"

namespace heapbench {
namespace {

Case small(std::uint64_t heap) { return make_case("per_thread", "malloc", 64, 0, 256, heap); }

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

// The session sets the heap up with its own kernel (heap_session.cu): which
// module's kernel first calls malloc decided CUDA's malloc speed build to build
// (docs/notes/module-layout.md). CUDA refuses a
// new limit once a kernel has called malloc, so right after ensure_heap, with no
// case's kernel run, the limit must already be fixed.
TEST(HeapSessionGpu, EnsureHeapSetsTheHeapUpBeforeAnyCaseRuns) {
  HeapSession s(0);
  s.invalidate();  // a fresh context, whatever earlier tests left
  const std::uint64_t reported = s.ensure_heap(12 * kMiB);
  EXPECT_EQ(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 20 * kMiB), cudaErrorInvalidValue)
      << "no kernel has called malloc since the limit was set: the session did not set the heap up";
  (void)cudaGetLastError();
  size_t now = 0;
  ASSERT_EQ(cudaDeviceGetLimit(&now, cudaLimitMallocHeapSize), cudaSuccess);
  EXPECT_EQ(now, reported);
}

}  // namespace
}  // namespace heapbench
