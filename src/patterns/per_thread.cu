// per_thread: every thread allocates its own block, uses it, and frees it.
//
// Workload: N threads each make one allocation call for `size` bytes in one
// launch (timed: the kernel stamps its start and end), two more launches write a pattern unique to
// the owner into every byte and read it back (untimed; catch overlapping or
// unwritable blocks), and one more launch frees every block (timed).
// alloca: one launch in which each thread takes `size` bytes of its stack,
// writes and reads back every byte (timed together: stack memory cannot
// outlive the frame, so there is nothing to hand to a later launch or free).
//
// Counters: allocs_per_s (successful calls per second of allocating-launch
// time), frees_per_s (per second of freeing-launch time; not for alloca),
// bytes_per_s, fail_rate (NULL returns / calls), heap_bytes; size_map adds
// stride_bytes (median distance between neighbouring blocks by address).
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits per_thread_traits =
    PatternTraits{"per_thread", "each thread allocates, uses and frees its own block"}.with_stack().with_call_paths();
inline constexpr PatternTraits per_thread_mixed_traits{
    "per_thread_mixed", "per_thread with seeded sizes uniform over [min(16, size), size]"};
inline constexpr PatternTraits size_map_traits =
    PatternTraits{"size_map",
                  "per_thread plus the median address stride between blocks: the allocator's size classes "
                  "(--sweep=size_map)"}
        .in_own_sweep();
inline constexpr PatternList<3> per_thread_patterns = {&per_thread_traits, &per_thread_mixed_traits, &size_map_traits};
#else
#include "device/call_paths.cuh"

namespace heapbench::detail {

// kMixed (per_thread_mixed): each thread asks for mixed_size(tid, size) bytes
// (uniform over [min(16, size), size], seeded) instead of `size`: failure curves
// under a spread of request sizes rather than one.
template <bool kMixed>
struct PerThreadT : PatternDefaults {
  static constexpr const PatternTraits& traits = kMixed ? patterns::per_thread_mixed_traits : patterns::per_thread_traits;
  static constexpr bool mixed_sizes = kMixed;

  template <class Api>
  static void allocate(Api api, const RoundArgs& a) {
    const CallArgs c = call_args(a);
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (!active) return;
      const std::uint64_t bytes = kMixed ? mixed_size(tid, c.size) : c.size;
      c.table[tid] = before_deadline(c.stats) ? api.allocate(bytes, c.align) : kNotStarted;
    });
  }

  template <class Api>
  static void release(Api api, const RoundArgs& a) {
    void* const* table = a.table;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (active && is_block(table[tid])) api.deallocate(table[tid]);
    });
  }
};
using PerThread = PerThreadT<false>;
using PerThreadMixed = PerThreadT<true>;

// size_map: per_thread, plus the last round's block addresses of each batch, for
// the median stride between neighbouring blocks (the bytes a block really
// takes). A family of its own so per_thread pays no copy.
struct SizeMap : PerThread {
  static constexpr const PatternTraits& traits = patterns::size_map_traits;
  static constexpr bool reports_addresses = true;
};

// The stack baseline. cudaLimitStackSize is raised to hold `size` bytes plus the
// frame for the runner's lifetime and put back afterwards.
class AllocaRunner final : public OneLaunchRound {
 public:
  AllocaRunner(const Case& c, double budget_s) : OneLaunchRound(c, budget_s), c_(c) {
    HB_CUDA_CHECK(cudaDeviceGetLimit(&saved_stack_, cudaLimitStackSize));
    HB_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, static_cast<size_t>(c.size) + kFrameSlack));
  }
  ~AllocaRunner() override {
    cudaDeviceSetLimit(cudaLimitStackSize, saved_stack_);
    (void)cudaGetLastError();
  }

  void begin() override { begin_round(); }
  void allocate() override {
    const RoundArgs a = launch_args();
    const std::uint64_t size = a.size;
    DeviceStats* stats = a.stats;
        launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (!active) return;
      if (!before_deadline(stats)) {
        warp_add(&stats->not_started, 1);
        return;
      }
      // ptxas from CUDA 13.5 on warns that this kernel's "stack size cannot be
      // statically determined": expected, and left visible rather than silenced
      // for the whole file. `size` is the case's, known only at run time; the
      // constructor sets cudaLimitStackSize to it plus kFrameSlack before launch.
      auto* p = static_cast<unsigned char*>(alloca(size));
      auto* words = reinterpret_cast<volatile std::uint32_t*>(p);
      const std::uint64_t nwords = size / 4;
      for (std::uint64_t i = 0; i < nwords; ++i) words[i] = pattern_word(tid, i);
      volatile unsigned char* bytes = p;
      for (std::uint64_t i = nwords * 4; i < size; ++i) bytes[i] = static_cast<unsigned char>(pattern_word(tid, i));
      bool bad = false;
      for (std::uint64_t i = 0; i < nwords && !bad; ++i) bad = words[i] != pattern_word(tid, i);
      for (std::uint64_t i = nwords * 4; i < size && !bad; ++i) {
        bad = bytes[i] != static_cast<unsigned char>(pattern_word(tid, i));
      }
      warp_add(&stats->attempts, 1);
      warp_add(&stats->successes, 1);
      warp_add(&stats->misaligned, reinterpret_cast<std::uintptr_t>(p) % alloc::kHeapAlignment != 0);
      warp_add(&stats->corrupted, bad);
    });
  }
  IterationResult collect() override {
    HB_CUDA_CHECK(cudaDeviceSynchronize());
    DeviceStats s{};
    IterationResult out = read_batch(s);
    out.tally.bytes = s.successes * c_.size;
    out.tally.alloc_seconds = out.timed_seconds;
    return out;
  }
  std::unique_ptr<Reducer> reducer() const override {
    AllocationCounters which;
    which.frees = false;  // a frame frees by returning
    return allocation_reducer(which);
  }

 private:
  static constexpr size_t kFrameSlack = 4096;  // the lambda's own frame and the verification locals
  Case c_;
  size_t saved_stack_ = 0;
};

std::unique_ptr<Round> make_per_thread(const PatternTraits& pattern, const Case& c, double budget_s) {
  if (c.api->source == Source::stack) return std::make_unique<AllocaRunner>(c, budget_s);
  if (c.api->is_call_path()) {
    return make_for_call_path<ThreePhase<PerThread>::template Runner>(c, budget_s);
  }
  if (&pattern == &PerThreadMixed::traits) return make_three_phase<PerThreadMixed>(c, budget_s);
  if (&pattern == &SizeMap::traits) return make_three_phase<SizeMap>(c, budget_s);
  return make_three_phase<PerThread>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
