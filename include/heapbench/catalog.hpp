#pragma once
// What heapbench can measure: allocation patterns and device allocation APIs,
// by the names that appear in benchmark names, JSON and plots. The APIs and
// their traits are listed once, in heapbench/api_traits.hpp (kApiTraits, kApis).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "heapbench/api_traits.hpp"
#include "heapbench/case.hpp"

namespace heapbench {

inline constexpr std::array<std::string_view, 12> kPatterns = {
    "per_thread",    // each thread allocates, uses and frees its own block
    "per_thread_mixed",    // per_thread with seeded sizes uniform over [min(16, size), size]
    "per_thread_latency",  // per_thread with clock64 around every call (a separate family: per_thread stays clean)
    "per_warp",      // lane 0 allocates for the warp, shares by shuffle, frees once
    "per_block",     // thread 0 allocates for the block, shares through __shared__
    "cross_kernel",  // allocate, use and free in three launches via a __device__ table
    "cross_kernel_remote_free",  // the same, each block freed by a different thread
    "churn",         // seeded random allocations and frees of mixed sizes in one kernel
    "capacity",      // fill to the first NULL, free every other block, refill larger: utilisation, fragmentation
    "capacity_fill", // capacity's first fill only, then free: utilisation of heaps too large for the refills
    "size_map",      // per_thread plus the median address stride between blocks: the allocator's size classes (--sweep=size_map)
    "printf",        // not the heap: device printf into its FIFO (cudaLimitPrintfFifoSize), lines delivered and lost
};


bool is_pattern(std::string_view name);
bool is_api(std::string_view name);
// The API takes an alignment (and the case name carries align:<bytes>).
bool takes_align(std::string_view api);
// Whether a pattern x API pair exists: stack memory belongs to one thread and
// one frame, so alloca is measured per thread only.
bool supported(std::string_view pattern, std::string_view api);

// capacity and capacity_fill: fills to the first NULL, measured against the
// heap's size rather than per round of allocate/use/free.
bool is_capacity_family(std::string_view pattern);

// malloc_fnptr, bump_fnptr, malloc_nvfunction, bump_nvfunction: an allocator
// reached through an indirect call, measured in per_thread and per_thread_latency.
bool is_call_path(std::string_view api);

// Why an API that heapbench knows is missing from this build's kApis (the
// toolkit it was configured with cannot build it), or "" if it is built or
// unknown. --help and --apis tell the user this instead of "unknown name".
std::string not_built_reason(std::string_view api);

// Whether `size` means something for the pattern: printf's size is the bytes of
// arguments per call, whole 8-byte arguments from 8 to 64; any size > 0 elsewhere.
bool valid_size(std::string_view pattern, std::uint64_t size);

// The device limit a pattern's cases set (the one place a pattern maps to it):
// printf sets its FIFO (cudaLimitPrintfFifoSize), every other pattern the
// device heap (cudaLimitMallocHeapSize). Either is given in MiB by --heaps.
Limit limit_of(std::string_view pattern);

}  // namespace heapbench
