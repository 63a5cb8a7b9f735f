#pragma once
// Device memory that frees itself: cudaMalloc in the constructor (through the
// one error check), cudaFree in the destructor, so no destructor frees by hand.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "heapbench/cuda_check.cuh"

namespace heapbench::detail {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // `count` elements of T; none (a null pointer) for 0.
  explicit DeviceBuffer(std::size_t count) {
    if (count > 0) HB_CUDA_CHECK(cudaMalloc(&p_, count * sizeof(T)));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return p_; }

 private:
  // Never throws. After a device reset the memory is gone already and cudaFree
  // fails: that error is cleared so it does not surface at the next launch check.
  void release() noexcept {
    if (p_ == nullptr) return;
    cudaFree(p_);
    (void)cudaGetLastError();
    p_ = nullptr;
  }
  T* p_ = nullptr;
};

}  // namespace heapbench::detail
