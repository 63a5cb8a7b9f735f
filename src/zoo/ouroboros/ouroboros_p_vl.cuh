#pragma once
// Ouroboros-P-VL (GPUPeople/Ouroboros, as the GPUMemManSurvey names it):
// free pages in the queues, virtualized linked-list queues.
// docs/zoo.md: upstream, pinned commit, patches, how it differs from
// docs/allocators.md's contract.
#include "heapbench/api_traits.hpp"

namespace heapbench_user {
// own_arena: one allocation of the case's heap (plus its chunk locator, one bit
// per chunk), its queues included. At least 1 MiB of heap; blocks of
// at most 8 KiB (upstream relays larger ones to CUDA's malloc). Running out of
// chunks traps (a CUDA error, not nullptr: patches/0005), so the capacity
// patterns are not run (traps_when_full).
inline constexpr heapbench::ApiTraits ouroboros_p_vl_traits = heapbench::traps_when_full(heapbench::with_max_size(
    heapbench::with_min_heap(heapbench::ApiTraits{"ouroboros_p_vl", heapbench::Source::own_arena, false}, 1ull << 20),
    8192));
}  // namespace heapbench_user

#ifdef __CUDACC__
#include "detail/ouroboros.cuh"

namespace heapbench_user {
struct ouroboros_p_vl : heapbench_zoo::ouroboros::Handle<ouroboros_p_vl, heapbench_zoo::ouroboros::Pages<PageQueueVL>> {
  static constexpr const heapbench::ApiTraits& traits = ouroboros_p_vl_traits;
};
static_assert(heapbench_zoo::ouroboros::traits_match<ouroboros_p_vl>(), "ouroboros_p_vl_traits: min_heap or max_size is not the instance's");
}  // namespace heapbench_user
#endif
