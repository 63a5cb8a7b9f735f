// The device heap's limit for one device (HeapSession, device/device.hpp):
// set, and reset the device when it must change. The probes that read the heap
// is capacity_probe.cu (tests/gpu/edge_cases_gpu_test.cu probes its edges).
#include <fmt/format.h>

#include <chrono>
#include <string>
#include <thread>

#include "heapbench/cuda_check.cuh"
#include "device/device.hpp"

namespace heapbench {
namespace {

// The first kernel that calls malloc after a limit is set: the heap is set up
// here, in this module, whatever the pattern and allocator files hold. Left to
// the first case's kernels, where it was set up followed the device code's
// layout: with byte-identical pattern kernels, CUDA's malloc at 64 B x 65,536
// threads on a 1 GiB heap ran at ~1.0e7 or ~1.16e7 calls/s depending on which
// module first called malloc and what else it held, build to build
// (docs/notes/module-layout.md). Do not add code
// to this kernel or to this file's device code: that is what decides the mode.
__global__ void heap_touch() {
  free(malloc(16));
}

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
  heap_touch<<<1, 1>>>();
  HB_CUDA_CHECK(cudaDeviceSynchronize());
  current_ = bytes;
  reported_ = reported;
  dirty_ = false;
  return reported_;
}

}  // namespace heapbench
