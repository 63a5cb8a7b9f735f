#pragma once
// gallatin: Gallatin (saltsystemslab/gallatin, PPoPP'24), the configuration its
// global allocator uses -- Gallatin<16 MiB segments, 16 B smallest slice,
// 4 KiB largest slice> -- one instance per case, built by the owner over the
// case's heap (docs/zoo.md; docs/allocators.md is the contract).
//
// Not through its global_allocator.cuh: that header keeps the instance in a
// __device__ variable and defines host functions outside any template, so
// every CUDA file of heapbench that includes this adapter (there are many,
// compiled without relocatable device code) would get a copy of its own, and
// the owner's instance would be invisible to the kernels of the others. The
// owner holds the instance and the handle passes its pointer, as slab's does.
#include "heapbench/api_traits.hpp"

namespace heapbench_user {

// Gallatin carves its memory into 16 MiB segments: a heap that is not a
// multiple of 16 MiB is rounded down, and one under 16 MiB holds none.
inline constexpr unsigned long long gallatin_segment_bytes = 16ull * 1024 * 1024;
// Its set-up (generate_on_device) faulted with an unspecified launch failure
// on heaps of 32, 64 and 128 MiB on the H200, printing "Failed to initialize
// block 0 from tree N" (a size class's tree found no segment), and succeeded
// on 256 and 512 MiB (results/H200/zoo/gallatin-heaps.json): the least heap
// measured to work.
inline constexpr unsigned long long gallatin_least_heap = 16 * gallatin_segment_bytes;

inline constexpr heapbench::ApiTraits gallatin_traits = heapbench::with_min_heap(
    heapbench::ApiTraits{
        "gallatin",                    // the name in case names, JSON and plots
        heapbench::Source::own_arena,  // its segments, as many 16 MiB segments as the case's heap holds
        false,                         // alignment: slices are aligned to their size class (16 B ... 4 KiB)
    },
    gallatin_least_heap);

}  // namespace heapbench_user

#ifdef __CUDACC__
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <assert.h>
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

#include "heapbench/case.hpp"
#include "heapbench/cuda_error.hpp"

// Gallatin's headers define kernels and host functions outside templates; in
// an unnamed namespace each CUDA file gets its own copy instead of a duplicate
// symbol at link time. The system headers they include are included above,
// so inside it they add nothing.
// Its set-up checks its last synchronisation with GPUErrorCheck, which calls
// exit() on an error unless the macro is defined already: here it only
// evaluates the call, and the owner checks the same synchronisation itself and
// throws (heapbench reports the case as a device error and goes on).
#define GPUErrorCheck(ans) ((void)(ans))
namespace {
#include <gallatin/allocators/gallatin.cuh>
}  // namespace
#undef GPUErrorCheck

namespace heapbench_zoo_gallatin {
// global_allocator.cuh's global_allocator_type.
using Allocator = ::gallatin::allocators::Gallatin<heapbench_user::gallatin_segment_bytes, 16ull, 4096ull>;
inline constexpr std::uint64_t kSeed = 0x6761;  // the seed its sub-trees' hashing starts from
}  // namespace heapbench_zoo_gallatin

namespace heapbench_user {

struct gallatin {
  static constexpr const heapbench::ApiTraits& traits = gallatin_traits;
  static constexpr std::size_t min_alignment = 16;  // the smallest slice; larger classes are aligned to their size
  heapbench_zoo_gallatin::Allocator* allocator = nullptr;

  __device__ void* allocate(std::size_t size, std::size_t) const { return allocator->malloc(size); }
  __device__ void deallocate(void* p) const { allocator->free(p); }

  // One instance per case: built over c.arena_bytes() (rounded down to whole
  // segments), torn down after the case's last round. reset() leaves it as
  // it is, as CUDA's heap is left between rounds: every round frees what it
  // allocated. Gallatin's bookkeeping (its trees, its table) comes on top of
  // the segments, in memory of its own.
  struct Owner {
    explicit Owner(const heapbench::Case& c) {
      if (c.arena_bytes() < gallatin_segment_bytes) {
        throw heapbench::CudaError("gallatin: a heap of " + std::to_string(c.arena_bytes()) +
                                   " bytes holds no 16 MiB segment");
      }
      check(cudaGetLastError(), "before its set-up");
      allocator_ = heapbench_zoo_gallatin::Allocator::generate_on_device(c.arena_bytes(), heapbench_zoo_gallatin::kSeed,
                                                                         /*print_info=*/false);
      check(cudaDeviceSynchronize(), "generate_on_device");
      check(cudaGetLastError(), "generate_on_device");
    }
    ~Owner() {
      // A context left with a sticky error (a case that faulted) cannot read
      // the instance back to free it: leave it to the device reset that follows.
      if (allocator_ != nullptr && cudaDeviceSynchronize() == cudaSuccess) {
        heapbench_zoo_gallatin::Allocator::free_on_device(allocator_);
        (void)cudaDeviceSynchronize();
      }
      (void)cudaGetLastError();  // a destructor must not throw; leave no error for the next case
    }
    Owner(const Owner&) = delete;
    Owner& operator=(const Owner&) = delete;

    gallatin handle() const { return gallatin{allocator_}; }
    void reset() {}

   private:
    static void check(cudaError_t e, const char* what) {
      if (e != cudaSuccess) throw heapbench::CudaError(std::string("gallatin: ") + what + ": " + cudaGetErrorString(e));
    }
    heapbench_zoo_gallatin::Allocator* allocator_ = nullptr;
  };
};

}  // namespace heapbench_user
#endif
