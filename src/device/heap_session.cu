#include <fmt/format.h>

#include "cuda_check.cuh"
#include "heapbench/device.hpp"

namespace heapbench {
namespace {

// The harness marks resets on the timeline (Backend::Heap::reset).
void reset_device(int device, std::uint64_t) {
  HB_CUDA_CHECK(cudaSetDevice(device));
  HB_CUDA_CHECK(cudaDeviceReset());
}

}  // namespace

HeapSession::HeapSession(int device) : device_(device) {}

std::uint64_t HeapSession::ensure_heap(std::uint64_t bytes) {
  if (bytes == current_ && !dirty_) return reported_;
  bool reset = false;
  if (current_ != 0 || dirty_) {
    // A heap already in use cannot be resized, and a sticky error needs a new
    // context: both take a reset.
    current_ = 0;
    reset_device(device_, bytes);
    reset = true;
  }
  HB_CUDA_CHECK(cudaSetDevice(device_));
  cudaError_t err = cudaDeviceSetLimit(cudaLimitMallocHeapSize, static_cast<size_t>(bytes));
  if (err == cudaErrorInvalidValue && !reset) {
    // Someone else in this process (an earlier session) already ran a malloc kernel.
    (void)cudaGetLastError();
    reset_device(device_, bytes);
    reset = true;
    err = cudaDeviceSetLimit(cudaLimitMallocHeapSize, static_cast<size_t>(bytes));
  }
  HB_CUDA_CHECK(err);
  resets_ += reset ? 1 : 0;
  size_t reported = 0;
  HB_CUDA_CHECK(cudaDeviceGetLimit(&reported, cudaLimitMallocHeapSize));
  current_ = bytes;
  reported_ = reported;
  dirty_ = false;
  return reported_;
}

}  // namespace heapbench

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
  void** table = nullptr;
  unsigned long long* count = nullptr;
  HB_CUDA_CHECK(cudaMalloc(&table, n * sizeof(void*)));
  HB_CUDA_CHECK(cudaMalloc(&count, sizeof *count));
  HB_CUDA_CHECK(cudaMemset(count, 0, sizeof *count));
  const unsigned block = 256;
  const auto grid = static_cast<unsigned>((n + block - 1) / block);
  capacity_fill<<<grid, block>>>(table, n, count);
  HB_CUDA_CHECK(cudaGetLastError());
  capacity_free<<<grid, block>>>(table, n);
  HB_CUDA_CHECK(cudaGetLastError());
  unsigned long long blocks = 0;
  HB_CUDA_CHECK(cudaMemcpy(&blocks, count, sizeof blocks, cudaMemcpyDeviceToHost));
  HB_CUDA_CHECK(cudaFree(table));
  HB_CUDA_CHECK(cudaFree(count));
  return blocks * kCapacityProbeBlock;
}

}  // namespace heapbench
