#pragma once
// A program allocates through heapbench (docs/apps.md): one header, and the
// program runs on every allocator heapbench has -- CUDA's heap, slab, the
// zoo's families when built, your own adapter, and bump for a program that
// never frees -- and records its trace (docs/trace.md) from the same call sites.
//
// In device code, where the program called malloc / free / new / delete:
//
//   void* p = heapbench::app::malloc(bytes);            heapbench::app::free(p);
//   void* q = heapbench::app::aligned_malloc(bytes, 64);heapbench::app::free(q);
//   Node* n = heapbench::app::make<Node>(key, value);     heapbench::app::destroy(n);
//   float* a = heapbench::app::make_array<float>(count); heapbench::app::destroy_array(a);
//
// make<T> constructs T in a block of the allocator (a class with virtual
// functions included); destroy(p) runs its destructor -- the most derived
// one, through a pointer to a base -- and frees the whole object's block.
//
// On the host, before the first kernel that allocates:
//
//   heapbench::app::Heap heap(512ull << 20);   // the allocator's memory: CUDA's heap limit, or its arena
//
// Which allocator: one per build. heapbench_add_app() (cmake/apps.cmake)
// builds one executable per allocator and defines HEAPBENCH_APP_API to its
// name; built outside it, with no HEAPBENCH_APP_API, the calls are CUDA's
// malloc / free and the header needs only the CUDA toolkit. The choice is per
// build, not per run, so that no call pays for a switch between allocators.
//
// With HEAPBENCH_TRACE=1 each call also appends a trace event
// (heapbench/trace.cuh; make is recorded as kNew, destroy as kDelete).
#include <cuda_runtime.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "heapbench/app_objects.hpp"
#include "heapbench/trace.cuh"

#ifdef HEAPBENCH_APP_API
// heapbench::app::Handle: the handle of the allocator named HEAPBENCH_APP_API,
// from a header heapbench_add_app() generates for its programs (cmake/apps.cmake).
#include "heapbench_app_handle.cuh"
#endif

namespace heapbench::app {

#ifndef HEAPBENCH_APP_API
// Built outside heapbench: CUDA's device heap.
struct Handle {
  static constexpr std::size_t min_alignment = 16;
  __device__ void* allocate(std::size_t size, std::size_t) const { return ::malloc(size); }
  __device__ void deallocate(void* p) const { ::free(p); }
};
#endif

inline constexpr std::size_t kMinAlignment = Handle::min_alignment;
// The allocator honours an alignment argument (ApiTraits::takes_align).
#ifdef HEAPBENCH_APP_API
inline constexpr bool kTakesAlign = Handle::traits.takes_align;
#else
inline constexpr bool kTakesAlign = false;
#endif

// What every kernel reads: the handle, and the counter of NULL returns (added
// to only when a call fails, so a call that succeeds pays nothing for it).
struct Bound {
  Handle handle;
  unsigned long long* nulls;
};
static_assert(std::is_trivially_copyable_v<Bound>, "an allocator handle must be trivially copyable (docs/allocators.md)");

namespace detail {
// The host's list of every translation unit's binder (one per file that
// includes this header): Heap hands each the bound handle.
using Binder = void (*)(const Bound&);
inline std::vector<Binder>& binders() {
  static std::vector<Binder> list;
  return list;
}
}  // namespace detail

// Each translation unit has its own copy (internal linkage) of the constant
// the kernels read, and registers the function that sets it; so a program of
// several .cu files (without relocatable device code) needs nothing more.
namespace {
__constant__ alignas(16) unsigned char g_bound[sizeof(Bound)];

void bind_this_unit(const Bound& b) {
  const cudaError_t e = cudaMemcpyToSymbol(g_bound, &b, sizeof b);
  if (e != cudaSuccess) throw std::runtime_error(std::string("heapbench::app: binding the allocator: ") + cudaGetErrorString(e));
}
[[maybe_unused]] const bool g_registered = (detail::binders().push_back(&bind_this_unit), true);

__device__ inline const Bound& bound() { return *reinterpret_cast<const Bound*>(g_bound); }

__device__ inline void* allocate(std::size_t size, std::size_t align, std::uint32_t op) {
  void* p = bound().handle.allocate(size, align);
  if (p == nullptr) atomicAdd(bound().nulls, 1ull);
  if (HEAPBENCH_TRACE) trace::detail::record(op, p, size, op == trace::kAligned ? static_cast<std::uint32_t>(align) : 0);
  return p;
}
__device__ inline void release(void* p, std::uint32_t op) {
  if (p == nullptr) return;
  if (HEAPBENCH_TRACE) trace::detail::record(op, p, 0, 0);
  bound().handle.deallocate(p);
}
}  // namespace

// --- Device: what a program calls -------------------------------------------

namespace {
__device__ inline void* malloc(std::size_t size) { return allocate(size, kMinAlignment, trace::kMalloc); }
__device__ inline void free(void* p) { release(p, trace::kFree); }
// An allocator that does not honour alignment (ApiTraits::takes_align false)
// still gives kMinAlignment; a larger alignment is then served by asking for
// align - kMinAlignment more and rounding up inside the block, whose start is
// kept ahead of the rounded address so that free() finds it.
__device__ inline void* aligned_malloc(std::size_t size, std::size_t align) {
  if (align <= kMinAlignment) return allocate(size, kMinAlignment, trace::kAligned);
  if constexpr (kTakesAlign) return allocate(size, align, trace::kAligned);
  if (size > ~std::size_t{0} - align) return nullptr;
  auto* block = static_cast<unsigned char*>(allocate(size + align, kMinAlignment, trace::kAligned));
  if (block == nullptr) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(block);
  const std::uintptr_t user = (start + sizeof(void*) + align - 1) / align * align;
  reinterpret_cast<void**>(user)[-1] = block;
  return reinterpret_cast<void*>(user);
}
// Frees what aligned_malloc returned (free() is for malloc's blocks).
__device__ inline void aligned_free(void* p, std::size_t align) {
  if (p == nullptr) return;
  if constexpr (kTakesAlign) {
    release(p, trace::kFree);
    return;
  }
  release(align <= kMinAlignment ? p : reinterpret_cast<void**>(p)[-1], trace::kFree);
}

// A T built in a block of the allocator, or nullptr when it has none.
template <class T, class... Args>
__device__ inline T* make(Args&&... args) {
  static_assert(alignof(T) <= kMinAlignment, "make<T>: T needs more alignment than the allocator gives: use aligned_malloc and placement new");
  void* p = allocate(sizeof(T), kMinAlignment, trace::kNew);
  return p == nullptr ? nullptr : ::new (p) T(static_cast<Args&&>(args)...);
}
// Destroys what make<T> (or make<Derived>) built and frees its block; nullptr does nothing.
template <class T>
__device__ inline void destroy(T* p) {
  if (p == nullptr) return;
  void* block = most_derived(p);
  p->~T();
  release(block, trace::kDelete);
}
// n default-constructed Ts, or nullptr.
template <class T>
__device__ inline T* make_array(std::size_t n) {
  static_assert(alignof(T) <= kMinAlignment, "make_array<T>: T needs more alignment than the allocator gives");
  constexpr std::size_t cookie = array_cookie_bytes<T>();
  if (n > (~std::size_t{0} - cookie) / (sizeof(T) == 0 ? 1 : sizeof(T))) return nullptr;
  auto* block = static_cast<unsigned char*>(allocate(cookie + n * sizeof(T), kMinAlignment, trace::kNew));
  if (block == nullptr) return nullptr;
  if constexpr (cookie != 0) *reinterpret_cast<std::size_t*>(block) = n;
  T* first = reinterpret_cast<T*>(block + cookie);
  for (std::size_t i = 0; i < n; ++i) ::new (first + i) T();
  return first;
}
template <class T>
__device__ inline void destroy_array(T* first) {
  if (first == nullptr) return;
  constexpr std::size_t cookie = array_cookie_bytes<T>();
  unsigned char* block = reinterpret_cast<unsigned char*>(first) - cookie;
  if constexpr (cookie != 0) {
    const std::size_t n = *reinterpret_cast<const std::size_t*>(block);
    for (std::size_t i = n; i-- > 0;) first[i].~T();
  }
  release(block, trace::kDelete);
}
}  // namespace

// --- Host: the allocator's memory --------------------------------------------

// The allocator's name, as in case names and results files ("malloc" built outside heapbench).
inline std::string_view api_name() {
#ifdef HEAPBENCH_APP_API
  return HEAPBENCH_APP_API;
#else
  return "malloc";
#endif
}

// The heap a run asks for: HEAPBENCH_APP_HEAP_MIB (the runner's heap axis,
// whole MiB) where it is set, else `fallback` bytes. Throws
// std::invalid_argument for a value that is not a whole number from 1 to 2^40.
inline std::size_t heap_bytes_from_env(std::size_t fallback) {
  const char* v = std::getenv("HEAPBENCH_APP_HEAP_MIB");
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long mib = std::strtoull(v, &end, 10);
  if (errno != 0 || *end != '\0' || *v < '0' || *v > '9' || mib == 0 || mib > (1ull << 40)) {
    throw std::invalid_argument(std::string("HEAPBENCH_APP_HEAP_MIB='") + v + "': a whole number of MiB, 1 or more");
  }
  return static_cast<std::size_t>(mib) << 20;
}

// Sets up the allocator over `bytes` and binds it in every translation unit of
// the program: CUDA's heap limit for an API on the device heap (made before any
// kernel that calls malloc has run, as CUDA requires), the owner's arena
// otherwise. Throws std::runtime_error naming the failed call (std::invalid_argument
// where the allocator refuses `bytes`: slab's arena must hold its metadata). One per process.
class Heap {
 public:
  explicit Heap(std::size_t bytes) {
#ifdef HEAPBENCH_APP_API
    if constexpr (Handle::traits.heap_backed()) set_limit(bytes);
    Case c;
    c.limit_bytes = bytes;
    owner_ = std::make_unique<alloc::Owner<Handle>>(c);
    owner_->reset();
    const Handle h = owner_->handle();
#else
    set_limit(bytes);
    const Handle h{};
#endif
    check(cudaMalloc(&nulls_, sizeof *nulls_), "cudaMalloc of the NULL counter");
    check(cudaMemset(nulls_, 0, sizeof *nulls_), "cudaMemset of the NULL counter");
    const Bound b{h, nulls_};
    for (detail::Binder bind : detail::binders()) bind(b);
    check(cudaDeviceSynchronize(), "the allocator's set-up");
  }
  ~Heap() {
#ifdef HEAPBENCH_APP_API
    owner_.reset();
#endif
    if (nulls_ != nullptr) cudaFree(nulls_);
    (void)cudaGetLastError();
  }
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  // Calls that returned NULL so far (waits for the device).
  unsigned long long nulls() const {
    unsigned long long n = 0;
    check(cudaMemcpy(&n, nulls_, sizeof n, cudaMemcpyDeviceToHost), "reading the NULL counter");
    return n;
  }

 private:
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string("heapbench::app: ") + what + ": " + cudaGetErrorString(e));
  }
  static void set_limit(std::size_t bytes) {
    check(cudaDeviceSetLimit(cudaLimitMallocHeapSize, bytes),
          "cudaDeviceSetLimit(cudaLimitMallocHeapSize) (before any kernel that allocates)");
  }
#ifdef HEAPBENCH_APP_API
  std::unique_ptr<alloc::Owner<Handle>> owner_;
#endif
  unsigned long long* nulls_ = nullptr;
};

}  // namespace heapbench::app
