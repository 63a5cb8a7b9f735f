#pragma once
// HB_ZOO_OUROBOROS_ADAPTER(stem, Kind, Queue, min_heap): what each of the six
// Ouroboros adapters declares (docs/allocators.md's contract), so that each
// <stem>.cuh in the family's folder is the one line that names its variant.
// Not an adapter itself (it lies below the family's folder, which
// cmake/zoo.cmake globs for them).
//   stem      the adapter's file stem and API name (heapbench_user::<stem>, <stem>_traits);
//   Kind      Pages or Chunks: what the queues hold (detail/ouroboros.cuh);
//   Queue     upstream's queue for that kind (PageQueue/ChunkQueue, ...VA, ...VL);
//   min_heap  the least heap, in bytes: its queues and a chunk per size class
//             (checked against the instance where the adapter is compiled).
// own_arena: one allocation of the case's heap (plus its chunk locator, one bit
// per chunk), its queues included. Blocks of at most 8 KiB (upstream relays
// larger ones to CUDA's malloc). Running out of chunks traps (a CUDA error, not
// nullptr: patches/0005), so the patterns that fill the heap to the first NULL
// are not run (traps_when_full).
#include "heapbench/api_traits.hpp"

namespace heapbench_zoo::ouroboros {
inline constexpr unsigned long long kMaxSize = 8192;  // the largest page (checked: traits_match)

constexpr heapbench::ApiTraits traits(std::string_view stem, unsigned long long min_heap) {
  return heapbench::traps_when_full(heapbench::with_max_size(
      heapbench::with_min_heap(heapbench::ApiTraits{stem, heapbench::Source::own_arena, false}, min_heap), kMaxSize));
}
}  // namespace heapbench_zoo::ouroboros

// The traits, for plain C++ as for CUDA.
#define HB_ZOO_OUROBOROS_TRAITS(stem, min_heap)                                                        \
  namespace heapbench_user {                                                                           \
  inline constexpr heapbench::ApiTraits stem##_traits = heapbench_zoo::ouroboros::traits(#stem, min_heap); \
  }

#ifdef __CUDACC__
#include "ouroboros.cuh"

// The handle over upstream's instance of Kind<Queue>, checked against the traits;
// rebuild: a fresh instance before every round (detail/ouroboros.cuh, Handle).
#define HB_ZOO_OUROBOROS_ADAPTER_REBUILT(stem, Kind, Queue, min_heap, rebuild)                         \
  HB_ZOO_OUROBOROS_TRAITS(stem, min_heap)                                                              \
  namespace heapbench_user {                                                                           \
  struct stem : heapbench_zoo::ouroboros::Handle<stem, heapbench_zoo::ouroboros::Kind<Queue>, rebuild> { \
    static constexpr const heapbench::ApiTraits& traits = stem##_traits;                               \
  };                                                                                                   \
  static_assert(heapbench_zoo::ouroboros::traits_match<stem>(),                                        \
                #stem "_traits: min_heap or max_size is not the instance's (detail/ouroboros.cuh)");  \
  }
#else
#define HB_ZOO_OUROBOROS_ADAPTER_REBUILT(stem, Kind, Queue, min_heap, rebuild) HB_ZOO_OUROBOROS_TRAITS(stem, min_heap)
#endif
// The survey's six, rebuilt before every round; the `_kept` ones, one instance per case.
#define HB_ZOO_OUROBOROS_ADAPTER(stem, Kind, Queue, min_heap) \
  HB_ZOO_OUROBOROS_ADAPTER_REBUILT(stem, Kind, Queue, min_heap, true)
#define HB_ZOO_OUROBOROS_KEPT_ADAPTER(stem, Kind, Queue, min_heap) \
  HB_ZOO_OUROBOROS_ADAPTER_REBUILT(stem, Kind, Queue, min_heap, false)
