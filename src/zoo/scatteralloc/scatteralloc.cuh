#pragma once
// ScatterAlloc as the GPUMemManSurvey measured it: mallocMC 2.2's Scatter
// creation policy with the XMallocSIMD distribution policy, which lets the
// lanes of a warp that ask for small blocks (under 128 B) at once share one
// allocation (patches/0001 makes that safe on sm_70 and later). docs/zoo.md:
// upstream, pinned commit, patches, how it differs from docs/allocators.md's contract.
#include "heapbench/api_traits.hpp"

namespace heapbench_user {
// own_arena: one cudaMalloc of the case's heap. Pages freed are not reset to
// serve another size (upstream's default, resetfreedpages=false).
inline constexpr heapbench::ApiTraits scatteralloc_traits{"scatteralloc", heapbench::Source::own_arena, false};
}  // namespace heapbench_user

#ifdef __CUDACC__
#include "detail/scatteralloc.cuh"

namespace heapbench_user {
struct scatteralloc
    : heapbench_zoo::scatteralloc::Handle<
          scatteralloc, heapbench_zoo::scatteralloc::Allocator<heapbench_zoo::scatteralloc::Coalescing>> {
  static constexpr const heapbench::ApiTraits& traits = scatteralloc_traits;
};
}  // namespace heapbench_user
#endif
