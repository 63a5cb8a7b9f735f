// capacity: how much of the heap one block size can use, and what freeing leaves.
//
// Workload, one round: T threads allocate blocks of `size` until each gets NULL
// (the first fill; timed). The addresses come back to the host, sorted. Every
// other block by address is freed; then blocks of 2x, 4x and 8x `size` are
// allocated until NULL (each refill freed before the next); then the rest of
// the first fill is freed, and a fill of `size` blocks measures what is
// allocatable again and how fast (recovery). Of that fill a seeded random half
// is freed and 2x blocks are allocated into the room (ext_frag_random); then
// everything is freed. Kernels report only counts and
// addresses; the figures are computed on the host (capacity_figures,
// docs/metrics.md).
//
// Counters: utilization, overhead_bytes, addr_range_ratio, ext_frag (2x),
// ext_frag_4x, ext_frag_8x, ext_frag_random, recovery, recovery_allocs_per_s,
// allocs_per_s (of the first fill), heap_bytes.
//
// capacity_fill: the first fill alone, then every block freed; counters
// utilization, overhead_bytes, addr_range_ratio(_rounds), allocs_per_s. A 1 GiB
// heap of 64 B blocks is 13 M blocks: the refills would multiply the time.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits capacity_traits =
    PatternTraits{"capacity", "fill to the first NULL, free every other block, refill larger: utilisation, fragmentation"}
        .filling_heap();
inline constexpr PatternTraits capacity_fill_traits =
    PatternTraits{"capacity_fill", "capacity's first fill only, then free: utilisation of heaps too large for the refills"}
        .filling_heap();
inline constexpr PatternList<2> capacity_patterns = {&capacity_traits, &capacity_fill_traits};
#else
#include <algorithm>
#include <chrono>
#include <random>

#include "device/round.cuh"

namespace heapbench::detail {

inline constexpr std::uint64_t kShuffleSeed = 0x6361706163697479ull;  // "capacity"

template <class Api>
class CapacityRunner final : public TimedLaunchRound {
 public:
  CapacityRunner(const Case& c, double budget_s, bool fill_only)
      : owner_(c), buffers_(c, 1), budget_ns_(budget_ns(budget_s)), c_(c),
        // Every block takes at least 16 bytes of the heap (or arena), so this
        // many slots hold any fill; the T extra cover the last round of calls.
        capacity_(c.malloc_heap() / 16 + c.threads), fill_only_(fill_only),
        blocks_buffer_(capacity_), list_buffer_(capacity_), refill_buffer_(capacity_), count_buffer_(1),
        blocks_(blocks_buffer_.get()), list_(list_buffer_.get()), refill_(refill_buffer_.get()),
        count_(count_buffer_.get()) {}

  double reset_seconds() override { return timed_reset(owner_); }
  void begin() override {
    owner_.reset();
    buffers_.begin(budget_ns_);
    raw_ = CapacityRaw{};
    overflowed_ = false;
    raw_.size = c_.size;
    raw_.fill_only = fill_only_;
  }

  // The first fill, timed by the kernel's own stamps (SpanTimer): an event
  // pair would also time the count's reset, the deadline's launch and the
  // host's launch latency, which at 55 us fills (bump, 64 K threads) moved
  // the figure with the host's code.
  void launch() override {
    spans_.begin_batch();
    first_fill_ = fill(blocks_, c_.size, spans_.at(0, kFirstFill));
  }

  // Everything after the first fill, untimed but for the recovery fill: halve,
  // refill larger, free, refill again.
  void refill() {
    const std::uint64_t n = read_count();
    std::vector<void*> host(n);
    HB_CUDA_CHECK(cudaMemcpy(host.data(), blocks_, n * sizeof(void*), cudaMemcpyDeviceToHost));
    std::sort(host.begin(), host.end());
    raw_.addresses.reserve(n);
    for (void* p : host) raw_.addresses.push_back(reinterpret_cast<std::uint64_t>(p));
    if (fill_only_) {
      free_device_list(blocks_, n);
      return;
    }

    std::vector<void*> odd, even;
    for (std::size_t i = 0; i < host.size(); ++i) (i % 2 ? odd : even).push_back(host[i]);
    free_host_list(odd);
    raw_.freed_bytes = odd.size() * c_.size;
    for (int k = 0; k < 3; ++k) {
      const std::uint64_t bigger = c_.size << (k + 1);
      const std::uint64_t got = fill(refill_, bigger);
      raw_.refill_bytes[k] = got * bigger;
      free_device_list(refill_, got);
    }
    free_host_list(even);
    raw_.recovery_blocks = fill(blocks_, c_.size, spans_.at(0, kRecovery));

    // The recovered fill once more, freeing a seeded random half instead of
    // every other block by address, then 2x blocks into what was freed.
    std::vector<void*> again(raw_.recovery_blocks);
    HB_CUDA_CHECK(cudaMemcpy(again.data(), blocks_, again.size() * sizeof(void*), cudaMemcpyDeviceToHost));
    std::mt19937_64 rng(kShuffleSeed);
    std::shuffle(again.begin(), again.end(), rng);
    const auto half = static_cast<std::ptrdiff_t>(again.size() / 2);
    free_host_list(std::vector<void*>(again.begin(), again.begin() + half));
    raw_.random_freed_bytes = static_cast<std::uint64_t>(half) * c_.size;
    const std::uint64_t got = fill(refill_, 2 * c_.size);
    raw_.random_refill_bytes = got * 2 * c_.size;
    free_device_list(refill_, got);
    free_host_list(std::vector<void*>(again.begin() + half, again.end()));
  }

  IterationResult finish() override {
    HB_CUDA_CHECK(cudaDeviceSynchronize());
    const auto refill_start = std::chrono::steady_clock::now();
    refill();
    const double refill_s = seconds_since(refill_start);
    spans_.fetch();
    raw_.recovery_seconds = spans_.seconds(0, kRecovery);
    const double fill_s = spans_.seconds(0, kFirstFill);
    const DeviceStats s = buffers_.read_stats();
    IterationResult out;
    out.not_started = s.not_started;
    if (overflowed_) {
      out.fault = "a fill returned more blocks than the heap can hold";
    } else if (fill_s <= 0) {
      out.fault = "the first fill's launch left no time stamps";
    }
    out.tally.attempts = first_fill_;
    out.tally.successes = first_fill_;
    out.tally.bytes = first_fill_ * c_.size;
    out.tally.alloc_seconds = fill_s;
    out.timed_seconds = out.tally.alloc_seconds;
    out.measuring_seconds = refill_s;
    size_t limit = c_.arena_bytes();
    // An arena is exactly the case's heap; the device heap is what the device reports.
    if constexpr (!Api::traits.owns_arena()) HB_CUDA_CHECK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
    raw_.heap_bytes = limit;
    out.observed.put(std::move(raw_));
    return out;
  }

  std::unique_ptr<Reducer> reducer() const override {
    AllocationCounters which;
    which.frees = false;
    which.fail_rate = false;
    return combine(allocation_reducer(which), capacity_reducer());
  }
  bool small_warmup() const override { return false; }

  // Public only because CUDA requires it: a member function enclosing an
  // extended __device__ lambda must not be private or protected.
  // T threads allocate `size` until NULL into `out`; returns the blocks held.
  // The launch stamps `span` (nullptr: untimed).
  std::uint64_t fill(void** out, std::uint64_t size, KernelSpan* span = nullptr) {
    HB_CUDA_CHECK(cudaMemset(count_, 0, sizeof(unsigned long long)));
    set_deadline<<<1, 1>>>(buffers_.args().stats, budget_ns_);
    HB_CUDA_CHECK_LAUNCH();
    const Api api = owner_.handle();
    const std::uint64_t align = c_.align, cap = capacity_;
    unsigned long long* count = count_;
    DeviceStats* stats = buffers_.args().stats;
    RoundArgs a = buffers_.args();
    a.span = span;
    launch_each(a, [=] __device__(std::uint64_t, bool active) {
      if (!active) return;
      while (true) {
        if (!before_deadline(stats)) {
          atomicAdd(&stats->not_started, 1ull);
          return;
        }
        void* p = api.allocate(size, align);
        if (p == nullptr) return;
        const unsigned long long i = atomicAdd(count, 1ull);
        if (i >= cap) {  // cannot happen: every block takes 16 bytes or more (read_count says so)
          api.deallocate(p);
          return;
        }
        out[i] = p;
      }
    });
    return read_count();
  }

  std::uint64_t read_count() {
    unsigned long long n = 0;
    HB_CUDA_CHECK(cudaMemcpy(&n, count_, sizeof n, cudaMemcpyDeviceToHost));
    overflowed_ |= n > capacity_;
    return std::min<std::uint64_t>(n, capacity_);
  }

  void free_device_list(void* const* list, std::uint64_t n) {
    if (n == 0) return;
    const Api api = owner_.handle();
    RoundArgs a = buffers_.args();
    a.n = n;
    a.grid = static_cast<unsigned>((n + kThreadsPerBlock - 1) / kThreadsPerBlock);
    launch_each(a, [=] __device__(std::uint64_t tid, bool active) {
      if (active) api.deallocate(list[tid]);
    });
  }

  void free_host_list(const std::vector<void*>& ptrs) {
    if (ptrs.empty()) return;
    HB_CUDA_CHECK(cudaMemcpy(list_, ptrs.data(), ptrs.size() * sizeof(void*), cudaMemcpyHostToDevice));
    free_device_list(list_, ptrs.size());
  }

 private:
  alloc::Owner<Api> owner_;
  RoundBuffers buffers_;
  std::uint64_t budget_ns_;
  Case c_;
  std::uint64_t capacity_;
  bool fill_only_;
  DeviceBuffer<void*> blocks_buffer_, list_buffer_, refill_buffer_;
  DeviceBuffer<unsigned long long> count_buffer_;
  void** blocks_ = nullptr;
  void** list_ = nullptr;
  void** refill_ = nullptr;
  unsigned long long* count_ = nullptr;
  std::uint64_t first_fill_ = 0;
  bool overflowed_ = false;  // a fill counted more blocks than capacity_ slots
  CapacityRaw raw_;
  enum { kFirstFill, kRecovery };
  SpanTimer spans_{1, 2};  // one round: the first fill and the recovery fill
};

std::unique_ptr<Round> make_capacity(const PatternTraits& pattern, const Case& c, double budget_s) {
  return make_for_api<CapacityRunner>(c, budget_s, &pattern == &patterns::capacity_fill_traits);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
