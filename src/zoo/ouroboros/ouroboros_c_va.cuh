#pragma once
// Ouroboros-C-VA (GPUPeople/Ouroboros, as the GPUMemManSurvey names it):
// chunk-based queues, virtualized array queues. docs/zoo.md: upstream, pinned commit, patches, how it differs
// from docs/allocators.md's contract.
#include "heapbench/api_traits.hpp"

namespace heapbench_user {
// own_arena: one allocation of the case's heap (plus its chunk locator, one
// bit per 8 KiB chunk). Requests above 8 KiB get nullptr; running out of
// chunks traps (a CUDA error, not nullptr: patches/0005).
inline constexpr heapbench::ApiTraits ouroboros_c_va_traits{"ouroboros_c_va", heapbench::Source::own_arena, false};
}  // namespace heapbench_user

#ifdef __CUDACC__
#include "detail/ouroboros.cuh"

namespace heapbench_user {
struct ouroboros_c_va : heapbench_zoo::ouroboros::Handle<ouroboros_c_va, heapbench_zoo::ouroboros::Chunks<ChunkQueueVA>> {
  static constexpr const heapbench::ApiTraits& traits = ouroboros_c_va_traits;
};
}  // namespace heapbench_user
#endif
