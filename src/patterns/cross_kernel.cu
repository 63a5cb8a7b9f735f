// cross_kernel and cross_kernel_remote_free: blocks that outlive the launch
// that allocated them.
//
// Workload: one launch has every thread allocate `size` bytes into a
// __device__ pointer table (timed); a later launch pair uses every block,
// writing and reading back every byte (timed: the use phase); a third launch
// frees them (timed). In cross_kernel_remote_free the block thread i allocated
// is freed by thread N-1-i, which usually sits in another warp and another SM.
//
// Counters: allocs_per_s, frees_per_s, bytes_per_s, fail_rate, heap_bytes, and
// use_bytes_per_s (bytes written plus bytes read per second of use-phase time).
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits cross_kernel_traits{"cross_kernel",
                                                   "allocate, use and free in three launches via a __device__ table"};
inline constexpr PatternTraits cross_kernel_remote_free_traits{"cross_kernel_remote_free",
                                                               "the same, each block freed by a different thread"};
inline constexpr PatternList<2> cross_kernel_patterns = {&cross_kernel_traits, &cross_kernel_remote_free_traits};
#else
#include "device/round.cuh"

namespace heapbench::detail {

// The table the allocating launch fills and the freeing launch reads: a
// __device__ symbol, as a program that keeps blocks across launches would have.
__device__ void** g_cross_kernel_table;

template <bool kRemoteFree>
struct CrossKernel : PatternDefaults {
  static constexpr const PatternTraits& traits =
      kRemoteFree ? patterns::cross_kernel_remote_free_traits : patterns::cross_kernel_traits;
  static constexpr bool times_use = true;
  static void prepare(const RoundArgs& a) {
    HB_CUDA_CHECK(cudaMemcpyToSymbolAsync(g_cross_kernel_table, &a.table, sizeof(void**)));
  }

  template <class Api>
  static void allocate(Api api, const RoundArgs& a) {
    const std::uint64_t size = a.size, align = a.align;
    const DeviceStats* stats = a.stats;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (!active) return;
      g_cross_kernel_table[tid] = before_deadline(stats) ? api.allocate(size, align) : kNotStarted;
    });
  }

  template <class Api>
  static void release(Api api, const RoundArgs& a) {
    const std::uint64_t n = a.n;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (!active) return;
      void* p = g_cross_kernel_table[kRemoteFree ? n - 1 - tid : tid];
      if (is_block(p)) api.deallocate(p);
    });
  }
};

std::unique_ptr<Round> make_cross_kernel(const PatternTraits& pattern, const Case& c, double budget_s) {
  if (&pattern == &CrossKernel<true>::traits) return make_three_phase<CrossKernel<true>>(c, budget_s);
  return make_three_phase<CrossKernel<false>>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
