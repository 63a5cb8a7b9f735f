#pragma once
// Device allocation APIs as types. Each is a trivially copyable device handle
// with its traits (a reference to its entry in heapbench/api_traits.hpp: name,
// source, takes_align, call path), the alignment it promises, and __device__
// allocate/deallocate; Owner<Api> is its host side (sets up and resets what the
// handle points at, not copyable), or Api::Owner where the handle names one (the
// adapters of docs/allocators.md). Patterns are templates over these handles,
// so every pattern x API is compiled into the one binary: no #ifdef per
// allocator, no virtual __device__ calls.
#include <cuda/std/cstdlib>
#include <cuda/std/version>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "heapbench/cuda_check.cuh"
#include "device/device_buffer.cuh"
#include "cases/api_list.hpp"  // the traits, and the adapters (HEAPBENCH_USER_API_HANDLES)
#include "heapbench/case.hpp"

// cuda::std::aligned_alloc took (size, align) -- the reverse of C's
// aligned_alloc(align, size) -- in the CCCL of CUDA 13.0 (3.0.x); CCCL fixed the
// order in 2026 (NVIDIA/cccl#9728). The first release with the fix is assumed to
// be 3.5.0; -DHEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST=0/1 overrides, and
// every runner checks the order on the device before measuring (see
// check_cuda_std_aligned_order), so a wrong guess is an error, not a figure.
#ifndef HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST
#if CCCL_VERSION >= 3005000
#define HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST 1
#else
#define HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST 0
#endif
#endif

namespace heapbench::alloc {

inline constexpr std::size_t kHeapAlignment = 16;  // what CUDA's malloc promises

__host__ __device__ constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

struct Malloc {
  static constexpr const ApiTraits& traits = api::kMalloc;
  static constexpr std::size_t min_alignment = kHeapAlignment;
  __device__ void* allocate(std::size_t size, std::size_t) const { return malloc(size); }
  __device__ void deallocate(void* p) const { free(p); }
};

struct Aligned {
  static constexpr const ApiTraits& traits = api::kAligned;
  static constexpr std::size_t min_alignment = kHeapAlignment;
  __device__ void* allocate(std::size_t size, std::size_t align) const { return __nv_aligned_device_malloc(size, align); }
  __device__ void deallocate(void* p) const { free(p); }
};

#if HEAPBENCH_HAVE_CUDA_STD_ALIGNED  // a device function from CCCL 3 on: CMakeLists.txt probes for it
struct CudaStdAligned {
  static constexpr const ApiTraits& traits = api::kCudaStdAligned;
  static constexpr std::size_t min_alignment = kHeapAlignment;
  __device__ void* allocate(std::size_t size, std::size_t align) const {
#if HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST
    return cuda::std::aligned_alloc(align, size);
#else
    return cuda::std::aligned_alloc(size, align);
#endif
  }
  __device__ void deallocate(void* p) const { cuda::std::free(p); }
};
#endif

struct New {
  static constexpr const ApiTraits& traits = api::kNew;
  static constexpr std::size_t min_alignment = kHeapAlignment;
  __device__ void* allocate(std::size_t size, std::size_t) const { return new unsigned char[size]; }
  __device__ void deallocate(void* p) const { delete[] static_cast<unsigned char*>(p); }
};

// The ceiling: one atomicAdd per warp on an arena's top, free a no-op.
struct Bump {
  static constexpr const ApiTraits& traits = api::kBump;
  static constexpr std::size_t min_alignment = kHeapAlignment;
  unsigned char* arena = nullptr;
  unsigned long long* top = nullptr;
  unsigned long long capacity = 0;

  __device__ void* allocate(std::size_t size, std::size_t align) const {
    const unsigned long long bytes = round_up(size == 0 ? 1 : size, kHeapAlignment);
    unsigned long long offset = 0;
    if (align <= kHeapAlignment) {
      const unsigned mask = __activemask();
      int uniform = 0;
      __match_all_sync(mask, bytes, &uniform);
      if (uniform) {
        // Lanes asking for the same size share one atomic: the leader reserves
        // for all, each lane takes its slot by rank.
        const unsigned lane = threadIdx.x & 31u;
        const int leader = __ffs(mask) - 1;
        const unsigned rank = __popc(mask & ((1u << lane) - 1u));
        unsigned long long base = 0;
        if (static_cast<int>(lane) == leader) base = atomicAdd(top, bytes * __popc(mask));
        base = __shfl_sync(mask, base, leader);
        offset = base + rank * bytes;
      } else {
        offset = atomicAdd(top, bytes);
      }
    } else {
      const unsigned long long start = atomicAdd(top, bytes + align);
      const auto addr = reinterpret_cast<std::uintptr_t>(arena) + start;
      offset = round_up(addr, align) - reinterpret_cast<std::uintptr_t>(arena);
    }
    return offset + bytes <= capacity ? arena + offset : nullptr;
  }
  __device__ void deallocate(void*) const {}
};

// Host sides. Heap APIs own nothing; the bump arena is as large as the case's
// heap; a handle that names its own Owner type (an adapter) gets that.
template <class Api, class = void>
struct Owner {
  explicit Owner(const Case&) {}
  Api handle() const { return Api{}; }
  void reset() {}
};

template <class Api>
struct Owner<Api, std::void_t<typename Api::Owner>> : Api::Owner {
  using Api::Owner::Owner;
};

// An adapter's Owner whose reset() waits for the device (upstream's set-up
// synchronizes: Ouroboros's initialize()) declares
// `static constexpr bool reset_synchronizes = true;`. Its rounds are then not
// enqueued behind a held stream (Round::enqueues_only): a wait for the device
// behind the hold would last until the hold timed out, and every batch would
// be dropped as unheld.
template <class O, class = void>
struct ResetSynchronizes : std::false_type {};
template <class O>
struct ResetSynchronizes<O, std::void_t<decltype(O::reset_synchronizes)>> : std::bool_constant<O::reset_synchronizes> {};

template <>
struct Owner<Bump> {
  explicit Owner(const Case& c) : arena(c.arena_bytes()), top(1) {
    h.capacity = c.arena_bytes();
    h.arena = arena.get();
    h.top = top.get();
  }
  Bump handle() const { return h; }
  void reset() { HB_CUDA_CHECK(cudaMemset(h.top, 0, sizeof(unsigned long long))); }
  detail::DeviceBuffer<unsigned char> arena;
  detail::DeviceBuffer<unsigned long long> top;
  Bump h;
};

// A compile-time list of handle types, dispatched on by name once per case.
template <class... Apis>
struct ApiList {};

// The APIs with a handle that every heap pattern is built for: the built-in
// ones, then the adapters of -DHEAPBENCH_ALLOCATORS (heapbench/user_apis.hpp).
using HeapApis = ApiList<Malloc, Aligned,
#if HEAPBENCH_HAVE_CUDA_STD_ALIGNED
                         CudaStdAligned,
#endif
                         New, Bump HEAPBENCH_USER_API_HANDLES>;

// Calls f(Api{}) for the API of `List` named `api`: where a name becomes a type.
template <class First, class... Rest, class F>
auto with_api(ApiList<First, Rest...>, std::string_view api, F&& f) {
  if (api == First::traits.name) return f(First{});
  if constexpr (sizeof...(Rest) == 0) {
    throw std::invalid_argument("no device handle for allocation API '" + std::string(api) + "'");
  } else {
    return with_api(ApiList<Rest...>{}, api, std::forward<F>(f));
  }
}

// Calls f(Api{}) for the heap API named `api` (not alloca, which is no handle).
template <class F>
auto with_heap_api(std::string_view api, F&& f) {
  return with_api(HeapApis{}, api, std::forward<F>(f));
}

// Before a round is made for an API: throws std::runtime_error where the API
// cannot be measured as compiled. Only cuda_std_aligned checks anything.
template <class Api>
void check_usable(Api) {}

#if HEAPBENCH_HAVE_CUDA_STD_ALIGNED
// Fails (CudaError-free, returns a message) if cuda::std::aligned_alloc's
// argument order is not the one compiled in: asks for 48 bytes at 4096, which
// the swapped order reads as alignment 48 (not a power of two: NULL).
std::string check_cuda_std_aligned_order();
inline void check_usable(CudaStdAligned) {
  if (auto why = check_cuda_std_aligned_order(); !why.empty()) throw std::runtime_error(why);
}
#endif

}  // namespace heapbench::alloc
