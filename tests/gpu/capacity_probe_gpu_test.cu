// The leak probe (probe_heap_capacity) against blocks held on purpose: it sees
// what they take at its 64 KiB resolution, and gets it back once they are freed.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "measure/backend.hpp"
#include "device/device.hpp"

namespace heapbench {
namespace {

__global__ void hold(void** out, std::uint64_t n, std::uint64_t bytes) {
  for (std::uint64_t i = 0; i < n; ++i) out[i] = malloc(bytes);
}
__global__ void release(void** blocks, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) free(blocks[i]);
}

// Holds `n` blocks of `bytes` while probing; returns the probe's answer.
std::uint64_t probe_while_holding(std::uint64_t heap, std::uint64_t n, std::uint64_t bytes) {
  void** blocks = nullptr;
  EXPECT_EQ(cudaMalloc(&blocks, n * sizeof(void*)), cudaSuccess);
  hold<<<1, 1>>>(blocks, n, bytes);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::uint64_t seen = probe_heap_capacity(heap);
  release<<<1, 1>>>(blocks, n);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaFree(blocks), cudaSuccess);
  return seen;
}

TEST(CapacityProbeGpu, SeesHeldBlocksAtItsResolutionAndTheirReturn) {
  HeapSession s(0);
  const std::uint64_t heap = s.ensure_heap(64 * kMiB);
  const std::uint64_t empty = probe_heap_capacity(heap);
  ASSERT_GT(empty, heap / 2);
  ASSERT_LE(empty, heap);
  EXPECT_EQ(probe_heap_capacity(heap), empty) << "the probe frees what it takes";
  // Forty 64 KiB blocks held: at least 38 of them show (two blocks' slack, as
  // the case's check allows).
  const std::uint64_t forty = probe_while_holding(heap, 40, kCapacityProbeBlock);
  EXPECT_LE(forty + 38 * kCapacityProbeBlock, empty);
  // Five small blocks cost at least nothing and at most the 64 KiB blocks they
  // sit in (and a neighbour each): not more than the probe's resolution says.
  const std::uint64_t small = probe_while_holding(heap, 5, 16);
  EXPECT_LE(small, empty);
  EXPECT_GE(small + 5 * 3 * kCapacityProbeBlock, empty)
      << "a 16 B block may cost the 64 KiB blocks beside it, no more";
  EXPECT_EQ(probe_heap_capacity(heap), empty) << "everything was freed";
}

}  // namespace
}  // namespace heapbench
