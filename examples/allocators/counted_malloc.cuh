#pragma once
// An allocator adapter for heapbench (docs/allocators.md): the device heap's
// malloc/free, with a count of the blocks live on the device that the owner
// keeps. It shows every part of the contract -- host-visible traits, a
// trivially copyable handle, an owner that reserves device memory, resets it
// before every round and frees it -- in the fewest lines; what it measures is
// malloc plus one atomicAdd per call.
//
// Build heapbench with it: cmake -S . -B build -DHEAPBENCH_ALLOCATORS=$PWD/examples/allocators
// Then: build/heapbench --apis=counted_malloc --patterns=per_thread --sizes=64 --threads=1K --heaps=64M
#include "heapbench/api_traits.hpp"

namespace heapbench_user {

// Seen by the host compiler too (--help, --apis, the sweep): keep it plain C++.
// The file is counted_malloc.cuh, so this is counted_malloc_traits and the
// handle below is counted_malloc.
inline constexpr heapbench::ApiTraits counted_malloc_traits{
    "counted_malloc",                // the name in case names, JSON and plots
    heapbench::Source::device_heap,  // memory from cudaLimitMallocHeapSize
    false,                           // does not honour an alignment argument
};

}  // namespace heapbench_user

#ifdef __CUDACC__
#include <cstddef>
#include <string>

#include "heapbench/case.hpp"
#include "heapbench/cuda_check.cuh"  // heapbench::check_cuda: a failed call throws the harness's CudaError (this case lost, the sweep goes on)

namespace heapbench_user {

struct counted_malloc {
  static constexpr const heapbench::ApiTraits& traits = counted_malloc_traits;
  static constexpr std::size_t min_alignment = 16;  // what CUDA's malloc promises; the checks count blocks below it
  unsigned long long* live = nullptr;               // device memory the owner reserves

  __device__ void* allocate(std::size_t size, std::size_t) const {
    void* p = malloc(size);
    if (p != nullptr) atomicAdd(live, 1ull);
    return p;
  }
  __device__ void deallocate(void* p) const {
    free(p);
    atomicAdd(live, ~0ull);  // minus one
  }

  // The host side: one per case, made before its first round, never copied.
  struct Owner {
    explicit Owner(const heapbench::Case&) { check(cudaMalloc(&live_, sizeof *live_), "cudaMalloc"); }
    ~Owner() {
      cudaFree(live_);
      (void)cudaGetLastError();  // a destructor must not throw; leave no error for the next case
    }
    Owner(const Owner&) = delete;
    Owner& operator=(const Owner&) = delete;

    counted_malloc handle() const { return counted_malloc{live_}; }
    // Before every round (enqueued on the default stream, no host wait needed).
    void reset() { check(cudaMemsetAsync(live_, 0, sizeof *live_), "cudaMemsetAsync"); }

   private:
    static void check(cudaError_t e, const char* call) { heapbench::check_cuda(e, "counted_malloc", call); }
    unsigned long long* live_ = nullptr;
  };
};

}  // namespace heapbench_user
#endif
