#pragma once
// What the mallocMC adapters share (not an adapter itself: hb_add_adapters
// reads only the family folder's own *.cuh): the alpaka accelerator they are
// built for, the host side that makes an allocator over the case's heap, and
// the device side that hands mallocMC the accelerator object its calls take.
// Compiled only under __CUDACC__, with ALPAKA_ACC_GPU_CUDA_ENABLED
// (src/zoo/mallocmc/zoo.cmake).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include <alpaka/alpaka.hpp>
#include <mallocMC/mallocMC.hpp>

#include "heapbench/case.hpp"
#include "heapbench/cuda_error.hpp"

namespace heapbench_zoo_mallocmc {

using Dim = alpaka::DimInt<1>;
using Idx = std::uint32_t;
using Acc = alpaka::AccGpuCudaRt<Dim, Idx>;

struct ShrinkConfig {
  static constexpr auto dataAlignment = 16;
};

// mallocMC's calls take the alpaka accelerator the kernel runs on. heapbench's
// kernels are plain CUDA, so each call makes one: on CUDA it holds no state
// beyond the per-thread extent (the rest are the built-in registers). The
// calls go to the device allocator itself, as its AllocatorHandle's do: that
// handle has no default constructor, which heapbench's handles need.
template <class Allocator>
struct Handle {
  typename Allocator::DevAllocator* dev;
  __device__ void* allocate(std::size_t size) const {
    const Acc acc(alpaka::Vec<Dim, Idx>::ones());
    return dev->malloc(acc, size);
  }
  __device__ void deallocate(void* p) const {
    const Acc acc(alpaka::Vec<Dim, Idx>::ones());
    dev->free(acc, p);
  }
};

// The host side: the allocator over c.arena_bytes() on the current device,
// made once per case and freed after its last round. reset() leaves the heap
// as it is, as CUDA's heap is left between rounds (every round frees what it
// allocated): mallocMC resets only by making the heap anew.
template <class Allocator>
class Owner {
 public:
  explicit Owner(const heapbench::Case& c) {
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    try {
      dev_ = std::make_unique<Dev>(alpaka::getDevByIdx(alpaka::Platform<Acc>{}, static_cast<std::size_t>(device)));
      queue_ = std::make_unique<Queue>(*dev_);
      allocator_ = std::make_unique<Allocator>(*dev_, *queue_, static_cast<std::size_t>(c.arena_bytes()));
      alpaka::wait(*queue_);
    } catch (const std::exception& e) {
      throw heapbench::CudaError(std::string("mallocMC: setting its heap up: ") + e.what());
    }
    check(cudaDeviceSynchronize(), "setting its heap up");
  }
  ~Owner() {
    // alpaka's destructors report a failed CUDA call themselves and do not throw.
    allocator_.reset();
    queue_.reset();
    dev_.reset();
    (void)cudaGetLastError();  // leave no error for the next case
  }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;

  void reset() {}

 protected:
  typename Allocator::DevAllocator* raw_handle() const { return allocator_->getAllocatorHandle().devAllocator; }

 private:
  using Dev = alpaka::Dev<Acc>;
  using Queue = alpaka::Queue<Acc, alpaka::Blocking>;
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw heapbench::CudaError(std::string("mallocMC: ") + what + ": " + cudaGetErrorString(e));
  }
  std::unique_ptr<Dev> dev_;
  std::unique_ptr<Queue> queue_;
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace heapbench_zoo_mallocmc
