#pragma once
// replay's counters (docs/trace.md, docs/metrics.md "Replay"): what a round
// of a recorded trace's launches observed, and the reducer of its figures.
#include <cstdint>
#include <memory>
#include <vector>

#include "measure/iteration_result.hpp"
#include "measure/reducer.hpp"

namespace heapbench {

// What a replay round counted (only what went wrong; CUDA's atomics take
// unsigned long long).
struct ReplayCounts {
  unsigned long long nulls;      // allocations that returned NULL
  unsigned long long new_nulls;  // ... where the recording had a block
  unsigned long long misaligned, corrupted;
  unsigned long long timed_out;  // threads that found the kernel's deadline passed (a release still waiting, or a call)
};

// The trace's work, known from its plan (trace_reader.hpp).
struct ReplayShape {
  std::uint64_t allocations = 0, releases = 0, launches = 0, peak_bytes = 0;
  std::uint64_t unmatched_releases = 0;  // releases the plan could not pair (not replayed)
};

// One round's result: the verdict and what the reducer reads. `floor` and
// `floor_seconds`: the same launches walked with no allocator (the floor,
// docs/trace.md), none where the trace's arena is too large (plan_floor): then
// the reducer writes no floor_s or net_launch_s; a check that fails there fails
// the round too, and the NULLs it hands out where the recording got NULL count
// for nothing. `empty_seconds`: an empty kernel launched with each launch's grid
// and block, timed the same way (what any launch of that shape costs, which no
// walk can make smaller).
IterationResult replay_result(const ReplayCounts& c, const ReplayCounts& floor, const ReplayShape& shape,
                              const std::vector<double>& launch_seconds, const std::vector<double>& floor_seconds,
                              const std::vector<double>& empty_seconds);

// launch_s (seconds per launch, the mean over the trace's launches and the
// rounds), floor_s (the same of the floor), net_launch_s (launch_s - floor_s:
// the allocator's share of a launch, below 0 only within the two figures'
// noise), empty_launch_s (the same of an empty kernel of each launch's shape:
// the part of floor_s that is the launch itself), allocs_per_s and frees_per_s (per second of the launches),
// fail_rate (NULL returns / allocations), new_nulls (per round: NULLs where the
// recording had a block), unmatched_releases (the trace's releases of an
// address no recorded block held: not replayed), peak_bytes (the most the
// recording held live: against heap_bytes, how full the replay ran the
// heap), heap_bytes.
std::unique_ptr<Reducer> replay_reducer();

}  // namespace heapbench
