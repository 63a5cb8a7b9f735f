// churn: seeded random allocations and frees of mixed sizes, in one launch.
//
// Workload: every thread keeps kSlots blocks and takes kSteps random steps; a
// step picks a slot, frees its block if it holds one (after checking the
// block's first and last bytes), otherwise allocates a size drawn uniformly
// from [min(16, size), size] and writes those bytes. At the end each thread
// frees what it still holds, so the heap is empty again. The random sequence
// depends only on the thread index and kSeed: two runs make the same requests.
//
// Counters: allocs_per_s and frees_per_s (per second of the one launch's time),
// bytes_per_s, fail_rate (NULL returns / allocation calls), heap_bytes. Each
// thread adds its own counts once, at the end, with one atomic per warp.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits churn_traits{"churn", "seeded random allocations and frees of mixed sizes in one kernel"};
inline constexpr PatternList<1> churn_patterns = {&churn_traits};
#else
#include "device/round.cuh"

namespace heapbench::detail {

inline constexpr int kSlots = 8;
inline constexpr int kSteps = 32;
inline constexpr std::uint64_t kSeed = 0x6865617062656e63ull;  // "heapbenc"
inline constexpr std::uint64_t kEnds = 8;                       // bytes checked at each end

__host__ __device__ constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ inline void write_ends(unsigned char* p, std::uint64_t size, std::uint64_t owner) {
  for (std::uint64_t i = 0; i < size && i < kEnds; ++i) p[i] = static_cast<unsigned char>(pattern_word(owner, i));
  for (std::uint64_t i = size > kEnds ? size - kEnds : 0; i < size; ++i) {
    p[i] = static_cast<unsigned char>(pattern_word(owner, i));
  }
}

__device__ inline bool ends_intact(const unsigned char* p, std::uint64_t size, std::uint64_t owner) {
  bool ok = true;
  for (std::uint64_t i = 0; i < size && i < kEnds; ++i) ok &= p[i] == static_cast<unsigned char>(pattern_word(owner, i));
  for (std::uint64_t i = size > kEnds ? size - kEnds : 0; i < size; ++i) {
    ok &= p[i] == static_cast<unsigned char>(pattern_word(owner, i));
  }
  return ok;
}

template <class Api>
class ChurnRunner final : public OneLaunchRound {
 public:
  ChurnRunner(const Case& c, double budget_s) : OneLaunchRound(c, budget_s), owner_(c) {}

  void begin() override {
    owner_.reset();
    begin_round();
  }

  void allocate() override {
    const RoundArgs a = launch_args();
    const Api api = owner_.handle();
    const std::uint64_t max_size = a.size, align = a.align;
    const std::uint64_t min_size = max_size < 16 ? max_size : 16;
    const std::uint64_t alignment = align > Api::min_alignment ? align : Api::min_alignment;
    DeviceStats* stats = a.stats;
    {
      launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
        if (!active) return;
        void* slot[kSlots] = {};
        std::uint64_t slot_size[kSlots] = {};
        std::uint64_t state = kSeed ^ (tid * 0xD1B54A32D192ED03ull);
        unsigned attempts = 0, successes = 0, frees = 0, bad = 0, misaligned = 0;
        unsigned long long bytes = 0;
        bool stopped = false;
        for (int step = 0; step < kSteps; ++step) {
          if (!before_deadline(stats)) {
            stopped = true;
            break;
          }
          const std::uint64_t r = splitmix64(state);
          const int k = static_cast<int>(r % kSlots);
          const std::uint64_t owner = tid * kSlots + k;
          if (slot[k] != nullptr) {
            bad += !ends_intact(static_cast<unsigned char*>(slot[k]), slot_size[k], owner);
            api.deallocate(slot[k]);
            slot[k] = nullptr;
            ++frees;
          } else {
            const std::uint64_t size = min_size + (r >> 8) % (max_size - min_size + 1);
            void* p = api.allocate(size, align);
            ++attempts;
            if (p != nullptr) {
              misaligned += reinterpret_cast<std::uintptr_t>(p) % alignment != 0;
              write_ends(static_cast<unsigned char*>(p), size, owner);
              slot[k] = p;
              slot_size[k] = size;
              ++successes;
              bytes += size;
            }
          }
        }
        // Past the deadline too: a thread never leaves blocks behind.
        for (int k = 0; k < kSlots; ++k) {
          if (slot[k] == nullptr) continue;
          bad += !ends_intact(static_cast<unsigned char*>(slot[k]), slot_size[k], tid * kSlots + k);
          api.deallocate(slot[k]);
          ++frees;
        }
        warp_add(&stats->attempts, attempts);
        warp_add(&stats->successes, successes);
        warp_add(&stats->frees, frees);
        warp_add(&stats->misaligned, misaligned);
        warp_add(&stats->corrupted, bad);
        warp_add(&stats->not_started, stopped);
        atomicAdd(&stats->bytes, bytes);
      });
    }
  }

  IterationResult collect() override {
    DeviceStats s{};
    IterationResult out = read_batch(s);
    if (s.frees != s.successes) {
      out.fault = "churn freed " + std::to_string(s.frees) + " blocks of " + std::to_string(s.successes) + " allocated";
    }
    out.tally.frees = s.frees;
    out.tally.bytes = s.bytes;
    // Allocations and frees share the one launch: both rates are per second of it.
    out.tally.alloc_seconds = out.timed_seconds;
    out.tally.free_seconds = out.timed_seconds;
    return out;
  }
  // frees_per_s all the same: the one launch frees too (allocation_reducer's default).
  double reset_seconds() override { return timed_reset(owner_); }

 private:
  alloc::Owner<Api> owner_;
};

std::unique_ptr<Round> make_churn(const PatternTraits&, const Case& c, double budget_s) { return make_for_api<ChurnRunner>(c, budget_s); }

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
