#pragma once
// The seeded size distribution of the *_mixed families: thread `tid` asks for
// a size drawn uniformly from [min(16, max), max], the same on every run. Used
// by kernels and by host tests alike.
#include <cstdint>

#if defined(__CUDACC__)
#define HEAPBENCH_HD __host__ __device__
#else
#define HEAPBENCH_HD
#endif

namespace heapbench {

inline constexpr std::uint64_t kMixedSeed = 0x6d69786564ull;  // "mixed"

HEAPBENCH_HD constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

HEAPBENCH_HD constexpr std::uint64_t mixed_size(std::uint64_t tid, std::uint64_t max) {
  const std::uint64_t lo = max < 16 ? max : 16;
  return lo + mix64(tid * 0x9E3779B97F4A7C15ull + kMixedSeed) % (max - lo + 1);
}

}  // namespace heapbench
