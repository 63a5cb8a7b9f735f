#pragma once
// The object bookkeeping of heapbench/app.cuh that needs no GPU, so that the
// host compiler tests it against its own answers (tests/host/app_objects_test.cpp):
// where an object built by make<T> starts when destroy() is handed a pointer
// to one of its bases, and the count ahead of a make_array<T> block; and the
// hash a program gives its output (also for a file that includes only app.cuh).
#include <cstddef>
#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define HEAPBENCH_APP_HD __host__ __device__
#else
#define HEAPBENCH_APP_HD
#endif

namespace heapbench::app {

// Where destroy() finds the start of an object it is handed a pointer to a
// base of: for a polymorphic class, the object's vtable holds the offset from
// the base subobject to the whole object ("offset to top", the slot before the
// vtable's type_info in the Itanium C++ ABI that nvcc and g++ follow; what
// dynamic_cast<void*> reads, which device code cannot call). A plain class is
// its own start: destroy it through a pointer to the type make() built.
template <class T>
HEAPBENCH_APP_HD inline void* most_derived(T* p) {
  if constexpr (std::is_polymorphic_v<T>) {
    const auto* vtable = *reinterpret_cast<const std::ptrdiff_t* const*>(p);
    return reinterpret_cast<char*>(const_cast<std::remove_cv_t<T>*>(p)) + vtable[-2];
  } else {
    return const_cast<std::remove_cv_t<T>*>(p);
  }
}

// The bytes a make_array<T> block holds ahead of its elements when T has a
// destructor to run: the count (what new[]'s cookie holds), padded to 16 so
// that the elements keep the allocator's alignment.
template <class T>
HEAPBENCH_APP_HD constexpr std::size_t array_cookie_bytes() {
  return std::is_trivially_destructible_v<T> ? 0 : (sizeof(std::size_t) + 15) / 16 * 16;
}

// FNV-1a, 64 bits: the output hash (order-dependent: hash what the program's
// output is, in an order that does not depend on timing).
inline std::uint64_t fnv1a(const void* data, std::size_t bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

}  // namespace heapbench::app
