#pragma once
// Counter math: from raw counts and GPU seconds to the figures in the JSON.
// Definitions (docs/METRICS.md): rates are successful operations per second of
// GPU time of the kernel that did them (CUDA events around that kernel).
#include <cstdint>
#include <vector>

namespace heapbench {

// What one timed iteration (or the sum of many) observed.
struct Tally {
  std::uint64_t attempts = 0;   // allocation calls made
  std::uint64_t successes = 0;  // non-NULL returns
  std::uint64_t bytes = 0;      // bytes successfully allocated
  std::uint64_t frees = 0;      // free calls made (one per success)
  double alloc_seconds = 0.0;   // GPU time of the allocating kernels
  double free_seconds = 0.0;    // GPU time of the freeing kernels
  std::uint64_t use_bytes = 0;  // bytes written plus bytes read back by the use kernels
  double use_seconds = 0.0;     // GPU time of the use kernels (where the pattern times them)

  Tally& operator+=(const Tally& o);
};

struct Figures {
  double allocs_per_s = 0.0;
  double frees_per_s = 0.0;
  double bytes_per_s = 0.0;
  double fail_rate = 0.0;
  double use_bytes_per_s = 0.0;
};

// Rates are 0 where no time was measured; fail_rate is 0 with no attempts.
Figures compute_figures(const Tally& t);

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles (the smallest sample with at least p% of samples at
// or below it). Reorders `samples`. All zero for no samples.
Percentiles percentiles(std::vector<double>& samples);

}  // namespace heapbench
