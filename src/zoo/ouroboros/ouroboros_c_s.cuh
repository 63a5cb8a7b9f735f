#pragma once
// Ouroboros-C-S (GPUPeople/Ouroboros, as the GPUMemManSurvey names it):
// chunks with free pages in the queues, standard array queues (8 Mi entries each).
// docs/zoo.md: upstream, pinned commit, patches, how it differs from
// docs/allocators.md's contract.
#include "heapbench/api_traits.hpp"

namespace heapbench_user {
// own_arena: one allocation of the case's heap (plus its chunk locator, one bit
// per chunk), its queues included. At least 321 MiB (its queues take 320) of heap; blocks of
// at most 8 KiB (upstream relays larger ones to CUDA's malloc). Running out of
// chunks traps (a CUDA error, not nullptr: patches/0005), so the capacity
// patterns are not run (traps_when_full).
inline constexpr heapbench::ApiTraits ouroboros_c_s_traits = heapbench::traps_when_full(heapbench::with_max_size(
    heapbench::with_min_heap(heapbench::ApiTraits{"ouroboros_c_s", heapbench::Source::own_arena, false}, 321ull << 20),
    8192));
}  // namespace heapbench_user

#ifdef __CUDACC__
#include "detail/ouroboros.cuh"

namespace heapbench_user {
struct ouroboros_c_s : heapbench_zoo::ouroboros::Handle<ouroboros_c_s, heapbench_zoo::ouroboros::Chunks<ChunkQueue>> {
  static constexpr const heapbench::ApiTraits& traits = ouroboros_c_s_traits;
};
static_assert(heapbench_zoo::ouroboros::traits_match<ouroboros_c_s>(), "ouroboros_c_s_traits: min_heap or max_size is not the instance's");
}  // namespace heapbench_user
#endif
