// per_warp: lane 0 allocates for its warp, the warp shares the block.
//
// Workload: lane 0 of every warp makes one call for 32 x `size` bytes (timed
// launch) and hands the pointer to its lanes with __shfl_sync; each lane owns
// the `size`-byte slice at lane x size. Two untimed launches write and read
// back every slice; a timed launch has lane 0 free the block once.
//
// Counters: allocs_per_s and frees_per_s count calls (one per warp),
// bytes_per_s counts the whole 32 x size block, fail_rate, heap_bytes.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits per_warp_traits =
    PatternTraits{"per_warp", "lane 0 allocates for the warp, shares by shuffle, frees once"}.shared_by(32);
inline constexpr PatternList<1> per_warp_patterns = {&per_warp_traits};
#else
#include "round.cuh"

namespace heapbench::detail {

struct PerWarp : PatternDefaults {
  static constexpr unsigned call_stride = patterns::per_warp_traits.threads_per_call;

  template <class Api>
  static void allocate(Api api, const RoundArgs& a) {
    // Copies, not `a` itself: the closure the kernel gets stays these four
    // values, as it was when the committed H200 figures were measured.
    void** table = a.table;
    const std::uint64_t size = a.size, align = a.align;
    const DeviceStats* stats = a.stats;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      const unsigned lane = threadIdx.x & 31u;
      void* base = nullptr;
      if (lane == 0 && active) base = before_deadline(stats) ? api.allocate(32 * size, align) : kNotStarted;
      // Every lane of the warp is here (kBlock is a multiple of 32 and no lane
      // returned early), so the full mask is exact.
      base = reinterpret_cast<void*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(base), 0));
      if (!active) return;
      table[tid] = is_block(base) ? static_cast<unsigned char*>(base) + lane * size : base;
    });
  }

  template <class Api>
  static void release(Api api, const RoundArgs& a) {
    void* const* table = a.table;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (active && (threadIdx.x & 31u) == 0 && is_block(table[tid])) api.deallocate(table[tid]);
    });
  }
};

std::unique_ptr<Round> make_per_warp(const PatternTraits&, const Case& c, double budget_s) {
  return make_three_phase<PerWarp>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
