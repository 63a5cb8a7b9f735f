#pragma once
// The allocation APIs heapbench knows, by name and traits: what an API is
// (ApiTraits) and the built-in ones (api::). Plain C++: the host side cannot
// include CUDA headers, so each device handle (src/device/allocators.cuh,
// call_paths.cuh, and the adapters of -DHEAPBENCH_ALLOCATORS,
// docs/allocators.md) points at its entry as `static constexpr const
// ApiTraits& traits`. The list of every API, these and the adapters', is
// cases/api_list.hpp (internal); src/device/api_registry.cu checks at
// compile time that it and the device handles agree.
#include <array>
#include <cstddef>
#include <string_view>

namespace heapbench {

// Where an API's memory comes from. Decides the patterns it joins and what a
// capacity case measures it against.
enum class Source {
  device_heap,  // CUDA's device heap (cudaLimitMallocHeapSize): heap_bytes is the limit the device reports
  own_arena,    // memory its owner reserves, as large as the case's heap: heap_bytes is that size
  stack,        // the thread's stack (alloca): one thread, one frame, so per_thread only
  printf_fifo,  // not an allocator: the printf pattern's FIFO
  strategy,     // not an allocator a kernel calls per request: a way to produce variable-size output
                // (the output workload's warp_aggregated and two_pass strategies, src/workloads/output.cu)
};

// How a pattern reaches allocate(): inlined through the template (direct), or
// through an indirect call whose cost is what is measured (per_thread and
// per_thread_latency only).
enum class CallPath { direct, function_pointer, nvfunction };

struct ApiTraits {
  std::string_view name;      // as it appears in case names, JSON and plots
  Source source = Source::device_heap;
  bool takes_align = false;   // allocate(size, align) honours align; case names carry align:<bytes>
  CallPath call_path = CallPath::direct;
  std::string_view inner{};   // for an indirect call path: the direct API it calls
  bool built = true;          // compiled into this build (see not_built_reason)
  // deallocate gives the block back for reuse. false (bump): heapbench check
  // reports the rows that need a free that works as NOT SUPPORTED, not FAIL.
  bool frees = true;
  // Where an allocator's contract is narrower than CUDA's malloc (docs/zoo.md):
  // the smallest heap (its arena) it can be set up on, and the largest block it
  // serves, in bytes; 0 for no limit. A case outside them is not measured: it
  // is reported as an error with the reason (contract_skip_reason,
  // cases/catalog.hpp). Set them with with_min_heap / with_max_size.
  unsigned long long min_heap = 0;
  unsigned long long max_size = 0;
  // false: an allocator that cannot return nullptr when its heap runs out (it
  // traps: Ouroboros). The patterns that fill the heap to the first NULL
  // (PatternTraits::fills_heap) are then reported as an error with that reason,
  // never run. Set it with traps_when_full.
  bool null_when_full = true;
  // A reference point, not an allocator one would choose (bump: no reuse; alloca:
  // the stack): figures draw it as a ceiling. Written to every results file's
  // "apis" block, which plot/ reads.
  bool baseline = false;
  std::string_view display_name{};  // how figures and tables name it; empty: `name`

  constexpr std::string_view label() const { return display_name.empty() ? name : display_name; }
  // For the definitions: a copy marked as a baseline.
  constexpr ApiTraits as_baseline() const {
    ApiTraits t = *this;
    t.baseline = true;
    return t;
  }

  constexpr bool heap_backed() const { return source == Source::device_heap; }
  constexpr bool owns_arena() const { return source == Source::own_arena; }
  constexpr bool is_call_path() const { return call_path != CallPath::direct; }
  // A trivially copyable device handle with allocate/deallocate (alloca and
  // printf are measured by runners of their own).
  constexpr bool has_handle() const { return source == Source::device_heap || source == Source::own_arena; }
};

// `t` with a smallest heap or a largest block (ApiTraits::min_heap, max_size):
// an adapter's traits stay `ApiTraits{name, source, takes_align}` whatever
// fields come before these.
constexpr ApiTraits with_min_heap(ApiTraits t, unsigned long long bytes) {
  t.min_heap = bytes;
  return t;
}
constexpr ApiTraits with_max_size(ApiTraits t, unsigned long long bytes) {
  t.max_size = bytes;
  return t;
}
constexpr ApiTraits traps_when_full(ApiTraits t) {
  t.null_when_full = false;
  return t;
}

namespace api {
inline constexpr ApiTraits kMalloc{"malloc", Source::device_heap};     // malloc/free on CUDA's device heap
inline constexpr ApiTraits kAligned{"aligned", Source::device_heap, true};  // __nv_aligned_device_malloc(size, align) / free
// cuda::std::aligned_alloc / cuda::std::free: a device function from CCCL 3 on (see not_built_reason)
inline constexpr ApiTraits kCudaStdAligned{"cuda_std_aligned", Source::device_heap, true, CallPath::direct, {},
                                           HEAPBENCH_HAVE_CUDA_STD_ALIGNED != 0};
inline constexpr ApiTraits kNew{"new", Source::device_heap};           // device operator new[] / delete[]
// baseline: warp-aggregated atomic bump over a cudaMalloc arena, free a no-op
inline constexpr ApiTraits kBump =
    ApiTraits{"bump", Source::own_arena, false, CallPath::direct, {}, true, /*frees=*/false}.as_baseline();
inline constexpr ApiTraits kAlloca = ApiTraits{"alloca", Source::stack}.as_baseline();  // baseline: the thread's stack (cudaLimitStackSize)
inline constexpr ApiTraits kPrintf{"printf", Source::printf_fifo};     // the printf pattern's only API: device printf
// Call paths: malloc and bump reached through a device function pointer, or an nvstd::function.
inline constexpr ApiTraits kMallocFnptr{"malloc_fnptr", Source::device_heap, false, CallPath::function_pointer, "malloc"};
inline constexpr ApiTraits kBumpFnptr{"bump_fnptr", Source::own_arena, false, CallPath::function_pointer, "bump"};
inline constexpr ApiTraits kMallocNvfunction{"malloc_nvfunction", Source::device_heap, false, CallPath::nvfunction,
                                             "malloc", HEAPBENCH_HAVE_NVFUNCTIONAL != 0};
inline constexpr ApiTraits kBumpNvfunction{"bump_nvfunction", Source::own_arena, false, CallPath::nvfunction, "bump",
                                           HEAPBENCH_HAVE_NVFUNCTIONAL != 0};
// The output workload's strategies that are not one allocation per thread:
// one malloc per warp, carved by its lanes; and doing without an allocator in
// the kernel: count, scan, one buffer, write (its buffer kept across rounds, or
// from cudaMallocAsync / cudaFreeAsync every round). The two_pass pair is the
// reference an in-kernel allocator is measured against.
inline constexpr ApiTraits kWarpAggregated{"warp_aggregated", Source::strategy};
inline constexpr ApiTraits kTwoPass = ApiTraits{"two_pass", Source::strategy}.as_baseline();
inline constexpr ApiTraits kTwoPassAsync = ApiTraits{"two_pass_async", Source::strategy}.as_baseline();
}  // namespace api

}  // namespace heapbench
