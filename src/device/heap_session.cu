#include <fmt/format.h>

#include "cuda_check.cuh"
#include "heapbench/device.hpp"
#include "heapbench/nvtx.hpp"

namespace heapbench {
namespace {

void reset_device(int device, std::uint64_t next_heap) {
  nvtx::range r{nvtx::attrs("heap reset", nvtx::Phase::heap_reset)};
  nvtx::mark(fmt::format("cudaDeviceReset for heap {} MiB", next_heap / kMiB).c_str(), nvtx::Phase::heap_reset);
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
