#pragma once
// The same allocators reached through an indirect call: what it costs to hand
// a kernel its allocation routine as a device function pointer or as an
// nvstd::function, against the templated call every other API gets (the
// pattern's extended __device__ lambda calls Api::allocate directly, and the
// compiler inlines it).
//
//   malloc_fnptr, bump_fnptr            a device function pointer, read on the host
//                                       from a __device__ variable and passed to the
//                                       kernel, so the compiler cannot see its target
//   malloc_nvfunction, bump_nvfunction  an nvstd::function (<nvfunctional>) built once
//                                       on the device by a set-up kernel, called by
//                                       every thread; only where the header exists
//                                       (HEAPBENCH_HAVE_NVFUNCTIONAL)
//
// Measured in per_thread (throughput) and per_thread_latency (clock64 around
// each call), where the call itself is all a thread does.
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cases/catalog.hpp"
#include "device/round.cuh"

#if HEAPBENCH_HAVE_NVFUNCTIONAL
#include <nvfunctional>
#endif

namespace heapbench::alloc {

using AllocateFn = void* (*)(const void* inner, std::size_t size, std::size_t align);
using DeallocateFn = void (*)(const void* inner, void* p);

template <class Inner>
__device__ void* allocate_through(const void* inner, std::size_t size, std::size_t align) {
  return static_cast<const Inner*>(inner)->allocate(size, align);
}
template <class Inner>
__device__ void deallocate_through(const void* inner, void* p) {
  static_cast<const Inner*>(inner)->deallocate(p);
}

// Device addresses of the two routines per allocator; the host reads them.
static __device__ AllocateFn g_malloc_allocate = &allocate_through<Malloc>;
static __device__ DeallocateFn g_malloc_deallocate = &deallocate_through<Malloc>;
static __device__ AllocateFn g_bump_allocate = &allocate_through<Bump>;
static __device__ DeallocateFn g_bump_deallocate = &deallocate_through<Bump>;

// The entry of cases/api_list.hpp for `path` over Inner.
template <class Inner, CallPath path>
constexpr const ApiTraits& call_path_traits() {
  static_assert(find_call_path(Inner::traits.name, path) != nullptr,
                "add this call path over Inner to kApiTraits in cases/api_list.hpp");
  return *find_call_path(Inner::traits.name, path);
}

template <class Inner>
struct FnPtr {
  static constexpr const ApiTraits& traits = call_path_traits<Inner, CallPath::function_pointer>();
  static constexpr std::size_t min_alignment = Inner::min_alignment;
  Inner inner;
  AllocateFn allocate_fn = nullptr;
  DeallocateFn deallocate_fn = nullptr;
  __device__ void* allocate(std::size_t size, std::size_t align) const { return allocate_fn(&inner, size, align); }
  __device__ void deallocate(void* p) const { deallocate_fn(&inner, p); }
};

template <class Inner>
struct Owner<FnPtr<Inner>> {
  explicit Owner(const Case& c) : inner(c) {
    // Each inner API has its own __device__ pointers above; a new one needs its pair there and a branch here.
    static_assert(std::is_same_v<Inner, Malloc> || std::is_same_v<Inner, Bump>,
                  "FnPtr: no __device__ function pointers for this inner API (add a g_*_allocate pair)");
    if constexpr (std::is_same_v<Inner, Malloc>) {
      HB_CUDA_CHECK(cudaMemcpyFromSymbol(&allocate_fn, g_malloc_allocate, sizeof allocate_fn));
      HB_CUDA_CHECK(cudaMemcpyFromSymbol(&deallocate_fn, g_malloc_deallocate, sizeof deallocate_fn));
    } else if constexpr (std::is_same_v<Inner, Bump>) {
      HB_CUDA_CHECK(cudaMemcpyFromSymbol(&allocate_fn, g_bump_allocate, sizeof allocate_fn));
      HB_CUDA_CHECK(cudaMemcpyFromSymbol(&deallocate_fn, g_bump_deallocate, sizeof deallocate_fn));
    }
  }
  FnPtr<Inner> handle() const { return FnPtr<Inner>{inner.handle(), allocate_fn, deallocate_fn}; }
  void reset() { inner.reset(); }
  Owner<Inner> inner;
  AllocateFn allocate_fn = nullptr;
  DeallocateFn deallocate_fn = nullptr;
};

#if HEAPBENCH_HAVE_NVFUNCTIONAL
using AllocateFunction = nvstd::function<void*(std::size_t, std::size_t)>;
using DeallocateFunction = nvstd::function<void(void*)>;

template <class Inner>
__global__ void construct_functions(AllocateFunction* allocate, DeallocateFunction* deallocate, Inner inner) {
  new (allocate) AllocateFunction([inner](std::size_t size, std::size_t align) { return inner.allocate(size, align); });
  new (deallocate) DeallocateFunction([inner](void* p) { inner.deallocate(p); });
}

__global__ inline void destroy_functions(AllocateFunction* allocate, DeallocateFunction* deallocate) {
  allocate->~AllocateFunction();
  deallocate->~DeallocateFunction();
}

template <class Inner>
struct NvFunction {
  static constexpr const ApiTraits& traits = call_path_traits<Inner, CallPath::nvfunction>();
  static constexpr std::size_t min_alignment = Inner::min_alignment;
  const AllocateFunction* allocate_fn = nullptr;
  const DeallocateFunction* deallocate_fn = nullptr;
  __device__ void* allocate(std::size_t size, std::size_t align) const { return (*allocate_fn)(size, align); }
  __device__ void deallocate(void* p) const { (*deallocate_fn)(p); }
};

// The functions live in device memory, built by one device thread: an
// nvstd::function made on the host cannot be called on the device.
template <class Inner>
struct Owner<NvFunction<Inner>> {
  explicit Owner(const Case& c) : inner(c), allocate_fn(1), deallocate_fn(1) {
    construct_functions<<<1, 1>>>(allocate_fn.get(), deallocate_fn.get(), inner.handle());
    HB_CUDA_CHECK_LAUNCH();
    HB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~Owner() {
    destroy_functions<<<1, 1>>>(allocate_fn.get(), deallocate_fn.get());
    (void)cudaDeviceSynchronize();  // then the buffers free themselves
    (void)cudaGetLastError();
  }
  Owner(const Owner&) = delete;
  Owner& operator=(const Owner&) = delete;
  NvFunction<Inner> handle() const { return NvFunction<Inner>{allocate_fn.get(), deallocate_fn.get()}; }
  void reset() { inner.reset(); }  // the bump arena's top; the functions hold the same arena
  Owner<Inner> inner;
  detail::DeviceBuffer<AllocateFunction> allocate_fn;
  detail::DeviceBuffer<DeallocateFunction> deallocate_fn;
};
#endif

// The indirect call paths, measured in per_thread and per_thread_latency.
using CallPathApis = ApiList<FnPtr<Malloc>, FnPtr<Bump>
#if HEAPBENCH_HAVE_NVFUNCTIONAL
                             , NvFunction<Malloc>, NvFunction<Bump>
#endif
                             >;

// Calls f(Api{}) for the call-path API named `api`.
template <class F>
auto with_call_path_api(std::string_view api, F&& f) {
  return with_api(CallPathApis{}, api, std::forward<F>(f));
}

}  // namespace heapbench::alloc

namespace heapbench::detail {

// Runner<Api> for the call-path API the case names.
template <template <class> class Runner>
std::unique_ptr<Round> make_for_call_path(const Case& c, double budget_s) {
  return make_for_dispatch<Runner>(c, budget_s,
                                   [](std::string_view api, auto&& f) { return alloc::with_call_path_api(api, f); });
}

}  // namespace heapbench::detail
