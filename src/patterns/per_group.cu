// per_warp and per_block: one thread allocates for its group, the group shares the block.
//
// Workload: the group's first thread (lane 0 of each warp; thread 0 of each
// 256-thread block) makes one call for group x `size` bytes (timed launch) and
// hands the pointer to the group (per_warp by __shfl_sync, per_block through
// __shared__ after __syncthreads); each thread owns the `size`-byte slice at
// its rank in the group x size. Two untimed launches write and read back every
// slice; a timed launch has the first thread free the block once (per_block:
// after the block meets at a barrier).
//
// Counters: allocs_per_s and frees_per_s count calls (one per group),
// bytes_per_s counts whole group x size blocks, fail_rate, heap_bytes.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits per_warp_traits =
    PatternTraits{"per_warp", "lane 0 allocates for the warp, shares by shuffle, frees once"}.shared_by(32);
// 256 threads share a call: kThreadsPerBlock (src/device/kernels.cuh), checked below.
inline constexpr PatternTraits per_block_traits =
    PatternTraits{"per_block", "thread 0 allocates for the block, shares through __shared__"}.shared_by(256);
inline constexpr PatternList<2> per_group_patterns = {&per_warp_traits, &per_block_traits};
#else
#include "device/round.cuh"

namespace heapbench::detail {

// kBlockWide: the group is the thread block, else the warp.
template <bool kBlockWide>
struct PerGroup : PatternDefaults {
  static constexpr const PatternTraits& traits = kBlockWide ? patterns::per_block_traits : patterns::per_warp_traits;
  static constexpr unsigned call_stride =
      kBlockWide ? patterns::per_block_traits.threads_per_call : patterns::per_warp_traits.threads_per_call;
  static_assert(!kBlockWide || call_stride == kThreadsPerBlock,
                "per_block_traits.threads_per_call is the block size the kernels run with: make it kThreadsPerBlock");
  static_assert(kBlockWide || call_stride == 32, "per_warp's group is a warp");

  template <class Api>
  static void allocate(Api api, const RoundArgs& a) {
    const CallArgs c = call_args(a);
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      const unsigned rank = threadIdx.x % call_stride;
      void* base = nullptr;
      // The first thread is active whenever any thread of its group is.
      if (rank == 0 && active) base = before_deadline(c.stats) ? api.allocate(call_stride * c.size, c.align) : kNotStarted;
      if constexpr (kBlockWide) {
        __shared__ void* shared_base;
        if (rank == 0) shared_base = base;
        __syncthreads();
        base = shared_base;
      } else {
        // Every lane of the warp is here (kThreadsPerBlock is a multiple of 32 and no
        // lane returned early), so the full mask is exact.
        base = reinterpret_cast<void*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(base), 0));
      }
      if (!active) return;
      c.table[tid] = is_block(base) ? static_cast<unsigned char*>(base) + rank * c.size : base;
    });
  }

  template <class Api>
  static void release(Api api, const RoundArgs& a) {
    void* const* table = a.table;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if constexpr (kBlockWide) __syncthreads();
      if (active && threadIdx.x % call_stride == 0 && is_block(table[tid])) api.deallocate(table[tid]);
    });
  }
};

std::unique_ptr<Round> make_per_group(const PatternTraits& pattern, const Case& c, double budget_s) {
  if (&pattern == &PerGroup<true>::traits) return make_three_phase<PerGroup<true>>(c, budget_s);
  return make_three_phase<PerGroup<false>>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
