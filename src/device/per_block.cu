// per_block: thread 0 allocates for its block, the block shares the block.
//
// Workload: thread 0 of every 256-thread block makes one call for 256 x `size`
// bytes (timed launch) and publishes the pointer through __shared__; after
// __syncthreads each thread owns the slice at threadIdx.x x size. Two untimed
// launches write and read back every slice; in a timed launch the block meets
// at a barrier and thread 0 frees the block.
//
// Counters: allocs_per_s and frees_per_s count calls (one per thread block),
// bytes_per_s counts whole 256 x size blocks, fail_rate, heap_bytes.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
// 256 threads share a call: kBlock (src/device/kernels.cuh), checked below.
inline constexpr PatternTraits per_block_traits =
    PatternTraits{"per_block", "thread 0 allocates for the block, shares through __shared__"}.shared_by(256);
inline constexpr PatternList<1> per_block_patterns = {&per_block_traits};
#else
#include "round.cuh"

namespace heapbench::detail {

struct PerBlock : PatternDefaults {
  static constexpr unsigned call_stride = kBlock;
  static_assert(call_stride == patterns::per_block_traits.threads_per_call,
                "per_block_traits.threads_per_call is the block size the kernels run with: make it kBlock");

  template <class Api>
  static void allocate(Api api, const RoundArgs& a) {
    // Copies, not `a` itself: the closure the kernel gets stays these four
    // values, as it was when the committed H200 figures were measured.
    void** table = a.table;
    const std::uint64_t size = a.size, align = a.align;
    const DeviceStats* stats = a.stats;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      __shared__ void* shared_base;
      if (threadIdx.x == 0) {
        // Thread 0 is active whenever any thread of its block is.
        shared_base = !active ? nullptr : before_deadline(stats) ? api.allocate(kBlock * size, align) : kNotStarted;
      }
      __syncthreads();
      void* base = shared_base;
      if (!active) return;
      table[tid] = is_block(base) ? static_cast<unsigned char*>(base) + threadIdx.x * size : base;
    });
  }

  template <class Api>
  static void release(Api api, const RoundArgs& a) {
    void* const* table = a.table;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      __syncthreads();
      if (active && threadIdx.x == 0 && is_block(table[tid])) api.deallocate(table[tid]);
    });
  }
};

std::unique_ptr<Round> make_per_block(const PatternTraits&, const Case& c, double budget_s) {
  return make_three_phase<PerBlock>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
