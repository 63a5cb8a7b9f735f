#pragma once
// What the ScatterAlloc adapters share (docs/zoo.md): a handle over mallocMC
// 2.2's device allocator (the ScatterAlloc creation policy) and its Owner. Not
// an adapter itself (it lies below the family's folder, which cmake/zoo.cmake
// globs for them); each <api>.cuh names its policies and includes this under
// __CUDACC__.
//
// ScatterAlloc (Steinberger, Kenzel, Kainz, Schmalstieg, InPar'12): 4 KiB
// pages, each formatted for one chunk size on first use, found by hashing the
// size, SM and warp into the page table; bit fields (two levels for small
// chunks) mark the chunks in use. Requests of a page or more take a run of
// whole pages. The heap is one cudaMalloc of the case's heap (the page table
// lives inside it).
#include <cstddef>
#include <exception>
#include <memory>
#include <string>

#include "../../common/owned.cuh"
#include "heapbench/case.hpp"
#include "heapbench/cuda_error.hpp"  // heapbench::CudaError

// mallocMC 2.2 shares its namespace, its header paths and its configuration
// macros with the mallocmc family's mallocMC 2.6. So that both can be built
// into one heapbench: its header is included by its absolute path (zoo.cmake
// defines HB_ZOO_SCATTERALLOC_HEADER; its own includes are relative), its
// namespace is renamed, and its macros are cleared before and after (a
// template's macros are expanded where it is read, so each version keeps its own).
#include "undef_mallocmc_macros.h"
#define mallocMC hb_zoo_mallocMC_2_2
#include HB_ZOO_SCATTERALLOC_HEADER
#undef mallocMC
#include "undef_mallocmc_macros.h"

namespace heapbench_zoo::scatteralloc {

// mallocMC's Scatter policy with its defaults (4 KiB pages, as the survey built
// it), out of memory -> nullptr, one cudaMalloc pool, sizes padded to 16 bytes.
template <class Distribution>
using Allocator =
    hb_zoo_mallocMC_2_2::Allocator<hb_zoo_mallocMC_2_2::CreationPolicies::Scatter<>, Distribution,
                                   hb_zoo_mallocMC_2_2::OOMPolicies::ReturnNull,
                                   hb_zoo_mallocMC_2_2::ReservePoolPolicies::SimpleCudaMalloc,
                                   hb_zoo_mallocMC_2_2::AlignmentPolicies::Shrink<>>;
using Coalescing = hb_zoo_mallocMC_2_2::DistributionPolicies::XMallocSIMD<>;
using PerCall = hb_zoo_mallocMC_2_2::DistributionPolicies::Noop;

// Derived: the adapter's handle type (heapbench_user::<stem>); A: the allocator.
template <class Derived, class A>
struct Handle {
  // Shrink pads every size to 16 bytes and aligns the pool to 16; chunks sit at
  // multiples of their (padded) size from 4 KiB page starts.
  static constexpr std::size_t min_alignment = 16;

  typename A::DevAllocator* dev = nullptr;

  __device__ void* allocate(std::size_t size, std::size_t) const {
    // mallocMC takes 32-bit sizes on the device: never let a large one wrap.
    if (size > 0xffffffffu - 16) return nullptr;
    return dev->malloc(size);
  }
  __device__ void deallocate(void* p) const { dev->free(p); }

  struct Owner {
    explicit Owner(const heapbench::Case& c) {
      const char* name = Derived::traits.name.data();
      check(cudaGetLastError(), name, "before the heap");
      try {
        allocator_.replace(std::make_unique<A>(c.arena_bytes()));  // cudaMallocs the pool, runs the init kernel
      } catch (const std::exception& e) {                            // mallocMC's CUDA::error
        throw heapbench::CudaError(std::string(name) + ": " + e.what());
      }
      // If these throw, allocator_ is dropped with the rest of the owner.
      check(cudaDeviceSynchronize(), name, "initHeap");
      check(cudaGetLastError(), name, "initHeap");
    }

    Derived handle() const {
      Derived h;
      h.dev = allocator_->getAllocatorHandle().devAllocator;
      return h;
    }
    // Every page free: the policy's own set-up kernel again over the same pool.
    void reset() {
      const auto heap = allocator_->getHeapLocations().front();
      A::CreationPolicy::initHeap(allocator_->getAllocatorHandle().devAllocator, heap.p, heap.size);
      check(cudaGetLastError(), Derived::traits.name.data(), "initHeap");
    }

   private:
    // mallocMC's destructor frees the pool and throws if cudaFree fails -- as
    // it does in a context a device error has broken -- and a throw from a
    // destructor ends the process. There, the pool is left to the device reset
    // that follows a device error (and the host object: a few bytes).
    struct Disarm {
      void operator()(std::unique_ptr<A>& a) const { (void)a.release(); }
    };
    heapbench_zoo::Owned<A, Disarm> allocator_;
  };
};

}  // namespace heapbench_zoo::scatteralloc
