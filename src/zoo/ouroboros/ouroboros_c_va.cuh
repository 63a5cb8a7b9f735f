#pragma once
// Ouroboros-C-VA (GPUPeople/Ouroboros, as the GPUMemManSurvey names it):
// chunks with free pages in the queues, virtualized array queues.
// docs/zoo.md: upstream, pinned commit, patches, how it differs from
// docs/allocators.md's contract.
#include "heapbench/api_traits.hpp"

namespace heapbench_user {
// own_arena: one allocation of the case's heap (plus its chunk locator, one bit
// per chunk), its queues included. At least 1 MiB of heap; blocks of
// at most 8 KiB (upstream relays larger ones to CUDA's malloc). Running out of
// chunks traps (a CUDA error, not nullptr: patches/0005), so the capacity
// patterns are not run (traps_when_full).
inline constexpr heapbench::ApiTraits ouroboros_c_va_traits = heapbench::traps_when_full(heapbench::with_max_size(
    heapbench::with_min_heap(heapbench::ApiTraits{"ouroboros_c_va", heapbench::Source::own_arena, false}, 1ull << 20),
    8192));
}  // namespace heapbench_user

#ifdef __CUDACC__
#include "detail/ouroboros.cuh"

namespace heapbench_user {
struct ouroboros_c_va : heapbench_zoo::ouroboros::Handle<ouroboros_c_va, heapbench_zoo::ouroboros::Chunks<ChunkQueueVA>> {
  static constexpr const heapbench::ApiTraits& traits = ouroboros_c_va_traits;
};
static_assert(heapbench_zoo::ouroboros::traits_match<ouroboros_c_va>(), "ouroboros_c_va_traits: min_heap or max_size is not the instance's");
}  // namespace heapbench_user
#endif
