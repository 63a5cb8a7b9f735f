// The untimed verification a warp to a slice (write_slices_by_warp,
// check_slices_by_warp: src/device/kernels.cu) against the per-thread kernels
// it stands in for: over the same table -- blocks, NULLs, calls that never
// started, misaligned blocks, blocks whose address is not a multiple of 4 --
// both write the same words and count the same attempts, successes, calls not
// started, misaligned blocks, bytes and corrupted blocks; where two blocks
// overlap, both find it.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "device/kernels.cuh"

namespace heapbench::detail {
namespace {

struct Table {
  std::vector<void*> host;
  std::uint64_t overlaps = 0;  // pairs of blocks planted to overlap
};

// n owners over `arena`, slots of `stride` bytes: mostly blocks at the slot's
// start, and every kind of entry the kernels must tell apart.
Table make_table(char* arena, std::uint64_t n, std::uint64_t stride, bool overlap) {
  Table t;
  for (std::uint64_t k = 0; k < n; ++k) {
    char* slot = arena + k * stride;
    void* p = slot;
    switch (k % 11) {
      case 3: p = nullptr; break;                                  // the call returned NULL
      case 5: p = reinterpret_cast<void*>(std::uintptr_t{1}); break;  // kNotStarted
      case 7: p = slot + 4; break;                                 // misaligned for 16, words still whole
      case 9: p = slot + 1; break;                                 // not a multiple of 4: bytes only
      default: break;
    }
    if (overlap && k % 11 == 1) {  // the block before (k - 1) is at its slot's start
      p = arena + (k - 1) * stride + 8;  // 8 bytes into it: they share words whatever their sizes
      ++t.overlaps;
    }
    t.host.push_back(p);
  }
  return t;
}

struct Run {
  DeviceStats stats{};
  std::vector<unsigned char> bytes;  // the arena after the write
};

Run verify(bool by_warp, const Table& t, char* arena, std::uint64_t arena_bytes, std::uint64_t slice,
           unsigned call_stride, bool mixed) {
  const std::uint64_t n = t.host.size();
  void** table = nullptr;
  DeviceStats* stats = nullptr;
  EXPECT_EQ(cudaMalloc(&table, n * sizeof(void*)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&stats, sizeof(DeviceStats)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(table, t.host.data(), n * sizeof(void*), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(stats, 0, sizeof(DeviceStats)), cudaSuccess);
  EXPECT_EQ(cudaMemset(arena, 0, arena_bytes), cudaSuccess);
  const std::uint64_t alignment = 16;
  if (by_warp) {
    write_slices_by_warp<<<warp_slices_grid(n), kThreadsPerBlock>>>(table, n, slice, call_stride, alignment, mixed,
                                                                     stats);
    check_slices_by_warp<<<warp_slices_grid(n), kThreadsPerBlock>>>(table, n, slice, mixed, stats);
  } else {
    const auto grid = static_cast<unsigned>((n + kThreadsPerBlock - 1) / kThreadsPerBlock);
    write_slices<<<grid, kThreadsPerBlock>>>(table, n, slice, call_stride, alignment, mixed, stats, nullptr);
    check_slices<<<grid, kThreadsPerBlock>>>(table, n, slice, mixed, stats, nullptr);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Run r;
  r.bytes.resize(arena_bytes);
  EXPECT_EQ(cudaMemcpy(&r.stats, stats, sizeof r.stats, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(r.bytes.data(), arena, arena_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(table);
  cudaFree(stats);
  return r;
}

void expect_same(std::uint64_t n, std::uint64_t slice, unsigned call_stride, bool mixed) {
  SCOPED_TRACE(testing::Message() << "n=" << n << " slice=" << slice << " call_stride=" << call_stride
                                  << " mixed=" << mixed);
  const std::uint64_t stride = slice + 64;
  char* arena = nullptr;
  ASSERT_EQ(cudaMalloc(&arena, n * stride), cudaSuccess);
  const Table clean = make_table(arena, n, stride, false);
  const Run a = verify(false, clean, arena, n * stride, slice, call_stride, mixed);
  const Run b = verify(true, clean, arena, n * stride, slice, call_stride, mixed);
  EXPECT_GT(a.stats.successes, 0u);
  EXPECT_GT(a.stats.misaligned, 0u);
  EXPECT_GT(a.stats.not_started, 0u);
  EXPECT_EQ(a.stats.corrupted, 0u);
  EXPECT_EQ(a.stats.attempts, b.stats.attempts);
  EXPECT_EQ(a.stats.successes, b.stats.successes);
  EXPECT_EQ(a.stats.not_started, b.stats.not_started);
  EXPECT_EQ(a.stats.misaligned, b.stats.misaligned);
  EXPECT_EQ(a.stats.bytes, b.stats.bytes);
  EXPECT_EQ(a.stats.corrupted, b.stats.corrupted);
  EXPECT_TRUE(a.bytes == b.bytes) << "the two wrote different words";

  const Table overlapping = make_table(arena, n, stride, true);
  ASSERT_GT(overlapping.overlaps, 0u);
  const Run c = verify(false, overlapping, arena, n * stride, slice, call_stride, mixed);
  const Run d = verify(true, overlapping, arena, n * stride, slice, call_stride, mixed);
  // Which of two overlapping blocks keeps its words depends on the order of the
  // writes: each kernel finds at least one of every pair.
  EXPECT_GE(c.stats.corrupted, overlapping.overlaps);
  EXPECT_GE(d.stats.corrupted, overlapping.overlaps);
  cudaFree(arena);
}

TEST(WarpVerification, CountsAndWritesWhatThePerThreadKernelsDo) {
  for (std::uint64_t slice : {256ull, 1000ull, 4096ull, 4099ull}) {
    for (unsigned call_stride : {1u, 32u, 256u}) {  // per_thread, per_warp, per_block
      for (bool mixed : {false, true}) expect_same(3001, slice, call_stride, mixed);
    }
  }
  // More owners than the warps in flight: each warp takes several slices.
  expect_same(40000, 256, 1, false);
}

}  // namespace
}  // namespace heapbench::detail
