#pragma once
// Small device helpers shared by the pattern kernels.
#include <cstdint>

namespace heapbench::detail {

// %globaltimer: nanoseconds, the same clock on every SM, so a deadline written by
// one kernel can be read by the threads of the next.
__device__ __forceinline__ std::uint64_t globaltimer_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ std::uint64_t global_thread_id() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// Adds `v` from every active lane of the warp with one atomic per warp.
__device__ __forceinline__ void warp_add(unsigned long long* counter, unsigned v) {
  const unsigned mask = __activemask();
  const unsigned sum = __reduce_add_sync(mask, v);
  if ((threadIdx.x & 31u) == static_cast<unsigned>(__ffs(mask) - 1) && sum != 0) atomicAdd(counter, sum);
}

// The 32-bit word a thread writes at word `i` of its block: distinct owners
// write distinct values at the same i (odd multiplier: a bijection on 32 bits),
// so where two live blocks overlap, one of them reads back a word it did not
// write (short of a 1-in-2^32 coincidence between different offsets).
__host__ __device__ constexpr std::uint32_t pattern_word(std::uint64_t owner, std::uint64_t i) {
  return static_cast<std::uint32_t>(owner * 0x9E3779B1u) ^ static_cast<std::uint32_t>(i * 0x85EBCA77u + 0x165667B1u);
}

}  // namespace heapbench::detail
