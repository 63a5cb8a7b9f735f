// per_thread_latency: per_thread with every call timed on the SM.
//
// Workload: as per_thread, but each thread reads clock64() before and after its
// allocation call and its free, and stores the difference. This is a separate
// family so that per_thread's own figures carry no instrumentation; comparing
// the two at the same point gives the instrumentation's cost.
//
// Counters: those of per_thread, plus lat_p50_ns, lat_p90_ns, lat_p99_ns,
// lat_max_ns (successful allocations) and free_lat_p50_ns ... free_lat_max_ns,
// in ns: cycles over the SM clock the driver reports (cudaDevAttrClockRate).
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits per_thread_latency_traits =
    PatternTraits{"per_thread_latency",
                  "per_thread with clock64 around every call (a separate family: per_thread stays clean)"}
        .with_call_paths();
inline constexpr PatternList<1> per_thread_latency_patterns = {&per_thread_latency_traits};
#else
#include "device/call_paths.cuh"

namespace heapbench::detail {

struct PerThreadLatency : PatternDefaults {
  static constexpr bool has_latency = true;

  template <class Api>
  static void allocate(Api api, const RoundArgs& a) {
    void** table = a.table;
    unsigned long long* lat = a.lat_alloc;
    const std::uint64_t size = a.size, align = a.align;
    const DeviceStats* stats = a.stats;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (!active) return;
      if (!before_deadline(stats)) {
        table[tid] = kNotStarted;
        lat[tid] = kNoLatency;
        return;
      }
      const long long t0 = clock64();
      void* p = api.allocate(size, align);
      const long long t1 = clock64();
      table[tid] = p;
      lat[tid] = p != nullptr ? static_cast<unsigned long long>(t1 - t0) : kNoLatency;
    });
  }

  template <class Api>
  static void release(Api api, const RoundArgs& a) {
    void* const* table = a.table;
    unsigned long long* lat = a.lat_free;
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (!active) return;
      void* p = table[tid];
      if (!is_block(p)) {
        lat[tid] = kNoLatency;
        return;
      }
      const long long t0 = clock64();
      api.deallocate(p);
      const long long t1 = clock64();
      lat[tid] = static_cast<unsigned long long>(t1 - t0);
    });
  }
};

std::unique_ptr<Round> make_per_thread_latency(const PatternTraits&, const Case& c, double budget_s) {
  if (c.api->is_call_path()) {
    return make_for_call_path<ThreePhase<PerThreadLatency>::template Runner>(c, budget_s);
  }
  return make_three_phase<PerThreadLatency>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
