// The leak probe: how many 64 KiB blocks the device heap hands out right now
// (fill with malloc until NULL, then free all). Compared before and after a
// case, it shows whether the case left the heap smaller.
#include "heapbench/cuda_check.cuh"
#include "device/device_buffer.cuh"
#include "device/device.hpp"

namespace heapbench {
namespace {

__global__ void capacity_fill(void** table, std::uint64_t n, unsigned long long* count) {
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  void* p = malloc(kCapacityProbeBlock);
  table[tid] = p;
  if (p != nullptr) atomicAdd(count, 1ull);
}

__global__ void capacity_free(void* const* table, std::uint64_t n) {
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tid < n && table[tid] != nullptr) free(table[tid]);
}

}  // namespace

std::uint64_t probe_heap_capacity(std::uint64_t heap_bytes) {
  const std::uint64_t n = heap_bytes / kCapacityProbeBlock + 1;  // one more than could ever fit
  detail::DeviceBuffer<void*> table(n);
  detail::DeviceBuffer<unsigned long long> count(1);
  HB_CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned long long)));
  const unsigned block = 256;
  const auto grid = static_cast<unsigned>((n + block - 1) / block);
  capacity_fill<<<grid, block>>>(table.get(), n, count.get());
  HB_CUDA_CHECK(cudaGetLastError());
  capacity_free<<<grid, block>>>(table.get(), n);
  HB_CUDA_CHECK(cudaGetLastError());
  unsigned long long blocks = 0;
  HB_CUDA_CHECK(cudaMemcpy(&blocks, count.get(), sizeof blocks, cudaMemcpyDeviceToHost));
  return blocks * kCapacityProbeBlock;
}

}  // namespace heapbench
