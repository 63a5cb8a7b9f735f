#pragma once
// What the workloads' per-thread bodies share, for the GPU and the CPU alike
// (the host tests run the same bodies on CPU threads): atomics that are the
// device's under nvcc and the compiler's builtins on the host.
#include <cstdint>

#include "cases/mixed_sizes.hpp"  // HEAPBENCH_HD, mix64

namespace heapbench::workloads {

HEAPBENCH_HD inline unsigned hd_cas(unsigned* p, unsigned expected, unsigned desired) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(p, expected, desired);
#else
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected;  // the value found: `expected` as given where the exchange happened
#endif
}

HEAPBENCH_HD inline void hd_store_release(unsigned* p, unsigned v) {
#if defined(__CUDA_ARCH__)
  __threadfence();
  atomicExch(p, v);
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}

HEAPBENCH_HD inline void hd_fence() {
#if defined(__CUDA_ARCH__)
  __threadfence();
#else
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

// The bytes a body writes and a verifier reads: byte i of the block stamped
// with `owner` (a key, a thread): distinct owners write distinct bytes at most
// offsets, so a block two owners share reads back wrong for one of them.
HEAPBENCH_HD constexpr unsigned char stamp_byte(std::uint64_t owner, std::uint64_t i) {
  return static_cast<unsigned char>(mix64(owner * 0x9E3779B97F4A7C15ull + (i >> 3)) >> (8 * (i & 7)));
}

}  // namespace heapbench::workloads
