#pragma once
// The axes of a sweep and the order its cases run in.
#include <cstdint>
#include <vector>

#include "heapbench/case.hpp"

namespace heapbench {

struct Sweep {
  std::vector<std::uint64_t> sizes;
  std::vector<std::uint64_t> threads;
  std::vector<std::uint64_t> heaps;
  // The default sweep leaves out points whose demand (threads x size) exceeds
  // this fraction of the heap: on an H200 such points spend seconds per kernel in
  // failing mallocs (2^20 x 1 KiB on 64 MiB: 13.5 s). Axes given on the command
  // line are taken whole (fraction 0 = keep every point).
  double max_demand_fraction = 0.0;
};

// Default axes of the per-thread family: sizes across the allocator's size
// classes with odd sizes between them, one warp to 2^20 threads, 8 MiB (CUDA's
// default) to 1 GiB heaps.
Sweep default_sweep();

// Cases of one pattern/API over a sweep, ordered heap-major (then size, then
// threads) so a run resets the device once per distinct heap size whatever a
// filter selects from it.
std::vector<Case> plan_cases(const std::string& pattern, const std::string& api, const Sweep& sweep);

// Sorts any case list into run order (heap-major). Stable for equal keys.
void sort_run_order(std::vector<Case>& cases);

}  // namespace heapbench
