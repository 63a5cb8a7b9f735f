
#include <fmt/format.h>

#include <chrono>
#include <string>
#include <thread>

#include "cuda_check.cuh"
#include "heapbench/device.hpp"

namespace heapbench {
namespace {

// The harness marks resets on the timeline (Backend::Heap::reset).
// Returns "" or why the device cannot be used again in this process.
std::string reset_device(int device) {
  HB_CUDA_CHECK(cudaSetDevice(device));
  HB_CUDA_CHECK(cudaDeviceReset());
  // After an illegal address the H200 refused a new context in the same process
  // (cudaErrorDevicesUnavailable); give it a moment, then call the device lost.
  constexpr auto kRecovery = std::chrono::seconds(3);
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    cudaError_t err = cudaSetDevice(device);
    if (err == cudaSuccess) err = cudaFree(nullptr);  // creates the new context now
    if (err == cudaSuccess) return {};
    (void)cudaGetLastError();
    if (err != cudaErrorDevicesUnavailable || std::chrono::steady_clock::now() - start > kRecovery) {
      return std::string(cudaGetErrorName(err)) + " after cudaDeviceReset";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

HeapSession::HeapSession(int device) : device_(device) {}

std::uint64_t HeapSession::ensure_heap(std::uint64_t bytes) {
  if (!lost_.empty()) throw CudaError(lost_);
  if (bytes == current_ && !dirty_) return reported_;
  bool reset = false;
  if (current_ != 0 || dirty_) {
    // A heap already in use cannot be resized, and a sticky error needs a new
    // context: both take a reset.
    current_ = 0;
    if (const std::string why = reset_device(device_); !why.empty()) {
      lost_ = fmt::format("device {} unusable in this process since a fault ({}); isolation, the default with "
                          "--benchmark_out, runs the remaining cases in a new process", device_, why);
      throw CudaError(lost_);
    }
    reset = true;
  }
  HB_CUDA_CHECK(cudaSetDevice(device_));
  cudaError_t err = cudaDeviceSetLimit(cudaLimitMallocHeapSize, static_cast<size_t>(bytes));
  if (err == cudaErrorInvalidValue && !reset) {
    // Someone else in this process (an earlier session) already ran a malloc kernel.
    (void)cudaGetLastError();
    if (const std::string why = reset_device(device_); !why.empty()) throw CudaError(why);
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

struct EdgeRaw {
  void* zero_a;
  void* zero_b;
  int free_null_returned;
  void* oversize;
  void* align_64k;
  void* align_16m;
  void* align_npot;
};

__global__ void edge_cases(EdgeRaw* out, std::uint64_t heap_bytes) {
  out->zero_a = malloc(0);
  out->zero_b = malloc(0);
  free(nullptr);
  out->free_null_returned = 1;
  out->oversize = malloc(heap_bytes + 1);
  out->align_64k = __nv_aligned_device_malloc(64, 64 * 1024);
  out->align_16m = __nv_aligned_device_malloc(64, 16 * 1024 * 1024);
  out->align_npot = __nv_aligned_device_malloc(64, 48);
  for (void* p : {out->zero_a, out->zero_b, out->oversize, out->align_64k, out->align_16m, out->align_npot}) {
    if (p != nullptr) free(p);
  }
}

std::string alignment_result(void* p, std::uint64_t align) {
  if (p == nullptr) return "NULL";
  return reinterpret_cast<std::uintptr_t>(p) % align == 0 ? "aligned" : "misaligned";
}

}  // namespace

EdgeCaseReport probe_edge_cases(std::uint64_t heap_bytes) {
  EdgeRaw* d = nullptr;
  HB_CUDA_CHECK(cudaMalloc(&d, sizeof(EdgeRaw)));
  HB_CUDA_CHECK(cudaMemset(d, 0, sizeof(EdgeRaw)));
  edge_cases<<<1, 1>>>(d, heap_bytes);
  HB_CUDA_CHECK(cudaGetLastError());
  EdgeRaw h{};
  HB_CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  HB_CUDA_CHECK(cudaFree(d));
  EdgeCaseReport r;
  r.malloc_zero_null = h.zero_a == nullptr;
  r.malloc_zero_distinct = h.zero_a != nullptr && h.zero_b != nullptr && h.zero_a != h.zero_b;
  r.free_null_returned = h.free_null_returned == 1;
  r.oversize_null = h.oversize == nullptr;
  r.align_64k_result = alignment_result(h.align_64k, 64 * 1024);
  r.align_16m_result = alignment_result(h.align_16m, 16 * 1024 * 1024);
  // For a non-power-of-two alignment "aligned" means a multiple of 48.
  r.align_npot_result = alignment_result(h.align_npot, 48);
  return r;
}

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
