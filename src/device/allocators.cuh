#pragma once
// Device allocation APIs as types: a static constexpr name, the alignment the
// API promises, and __device__ allocate/deallocate. Patterns are templates over
// these, so every combination is compiled into the one binary (no #ifdef per
// allocator, no virtual __device__ calls).
#include <cstddef>

namespace heapbench::alloc {

// CUDA's malloc/free on the device heap (cudaLimitMallocHeapSize). The CUDA
// programming guide promises 16-byte alignment.
struct Malloc {
  static constexpr const char* name = "malloc";
  static constexpr std::size_t alignment = 16;
  __device__ static void* allocate(std::size_t size) { return malloc(size); }
  __device__ static void deallocate(void* p) { free(p); }
};

}  // namespace heapbench::alloc
