#pragma once
// ScatterAlloc without warp coalescing: mallocMC 2.2's Scatter creation policy
// with the Noop distribution policy, every call its own chunk. The same heap
// as scatteralloc; the pair separates the allocator from the coalescing.
// docs/zoo.md: upstream, pinned commit, how it differs from docs/allocators.md's contract.
#include "heapbench/api_traits.hpp"

namespace heapbench_user {
inline constexpr heapbench::ApiTraits scatteralloc_percall_traits{"scatteralloc_percall", heapbench::Source::own_arena,
                                                                  false};
}  // namespace heapbench_user

#ifdef __CUDACC__
#include "detail/scatteralloc.cuh"

namespace heapbench_user {
struct scatteralloc_percall
    : heapbench_zoo::scatteralloc::Handle<scatteralloc_percall,
                                          heapbench_zoo::scatteralloc::Allocator<heapbench_zoo::scatteralloc::PerCall>> {
  static constexpr const heapbench::ApiTraits& traits = scatteralloc_percall_traits;
};
}  // namespace heapbench_user
#endif
