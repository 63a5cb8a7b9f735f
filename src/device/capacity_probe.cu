// The leak probe: how many bytes the device heap hands out right now, in 1 MiB
// blocks and then, in what is left, 64 KiB blocks (fill with malloc until NULL,
// then free all). Compared before and after a case, it shows whether the case
// left the heap smaller. Its resolution is the 64 KiB block's, as when it filled
// with 64 KiB blocks alone; the 1 MiB blocks take most of the heap in a
// sixteenth of the calls (CUDA's malloc of large blocks is serial: a 1 GiB heap
// took 25 ms of 64 KiB calls on the H200).
#include <algorithm>

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "heapbench/device.hpp"

namespace heapbench {
namespace {

__global__ void capacity_fill(void** table, std::uint64_t n, std::uint64_t block_bytes, unsigned long long* count) {
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  void* p = malloc(block_bytes);
  table[tid] = p;
  if (p != nullptr) atomicAdd(count, 1ull);
}

__global__ void capacity_free(void* const* table, std::uint64_t n) {
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid < n && table[tid] != nullptr) free(table[tid]);
}

unsigned grid_for(std::uint64_t n, unsigned block) { return static_cast<unsigned>((n + block - 1) / block); }

}  // namespace

std::uint64_t probe_heap_capacity(std::uint64_t heap_bytes) {
  constexpr unsigned block = 256;
  // One thread per block that could ever fit, and one more.
  const std::uint64_t coarse_n = heap_bytes / kCapacityProbeCoarseBlock + 1;
  detail::DeviceBuffer<void*> coarse(coarse_n);
  detail::DeviceBuffer<unsigned long long> count(2);
  HB_CUDA_CHECK(cudaMemset(count.get(), 0, 2 * sizeof(unsigned long long)));
  capacity_fill<<<grid_for(coarse_n, block), block>>>(coarse.get(), coarse_n, kCapacityProbeCoarseBlock, count.get());
  HB_CUDA_CHECK(cudaGetLastError());
  unsigned long long got[2] = {0, 0};
  HB_CUDA_CHECK(cudaMemcpy(&got[0], count.get(), sizeof got[0], cudaMemcpyDeviceToHost));
  // Each 1 MiB block took at least 1 MiB of the limit: what is left holds at
  // most this many 64 KiB blocks, however it is split.
  const std::uint64_t taken = std::min<std::uint64_t>(heap_bytes, got[0] * kCapacityProbeCoarseBlock);
  const std::uint64_t fine_n = (heap_bytes - taken) / kCapacityProbeBlock + 1;
  detail::DeviceBuffer<void*> fine(fine_n);
  capacity_fill<<<grid_for(fine_n, block), block>>>(fine.get(), fine_n, kCapacityProbeBlock, count.get() + 1);
  HB_CUDA_CHECK(cudaGetLastError());
  capacity_free<<<grid_for(fine_n, block), block>>>(fine.get(), fine_n);
  HB_CUDA_CHECK(cudaGetLastError());
  capacity_free<<<grid_for(coarse_n, block), block>>>(coarse.get(), coarse_n);
  HB_CUDA_CHECK(cudaGetLastError());
  HB_CUDA_CHECK(cudaMemcpy(got, count.get(), sizeof got, cudaMemcpyDeviceToHost));
  return got[0] * kCapacityProbeCoarseBlock + got[1] * kCapacityProbeBlock;
}

}  // namespace heapbench
