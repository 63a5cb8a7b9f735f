#pragma once
// The three-phase round most patterns share: an allocating launch (timed), a
// use launch pair that writes and reads back every byte (timed as a phase where
// the pattern says so, always checked), and a freeing launch (timed). A pattern
// supplies the two launches as static member templates of a tag type:
//
//   struct Tag : PatternDefaults {
//     static constexpr unsigned call_stride;   // threads per allocation call
//     template <class Api> static void allocate(Api, const RoundArgs&);
//     template <class Api> static void release(Api, const RoundArgs&);
//   };
//
// and may override what PatternDefaults says (times_use, has_latency,
// reports_addresses, prepare). The flags compose the runner at compile time:
// each selects an observer (PhaseTimes, LatencyObserver, StrideObserver) that
// reads its part back after the batch and brings the reducer of its counters.
//
// The harness calls the phases (Round) and names them on the timeline.
#include <algorithm>
#include <chrono>
#include <memory>
#include <tuple>
#include <type_traits>
#include <vector>

#include "device/allocators.cuh"
#include "heapbench/cuda_check.cuh"
#include "device/device_buffer.cuh"
#include "cases/catalog.hpp"
#include "device/device.hpp"
#include "device/kernels.cuh"

namespace heapbench::detail {

struct RoundArgs {
  void** table = nullptr;        // per-thread slice pointers (what verification reads)
  std::uint64_t n = 0;           // threads
  std::uint64_t size = 0;        // bytes per thread
  std::uint64_t align = 0;       // alignment asked of aligned APIs (0: none)
  DeviceStats* stats = nullptr;
  unsigned grid = 0;
  unsigned long long* lat_alloc = nullptr;  // latency families: cycles per call, per thread
  unsigned long long* lat_free = nullptr;
  KernelSpan* span = nullptr;  // the timed launch stamps its start and end here (nullptr: untimed)
};

// What an allocating kernel reads of RoundArgs: a pattern's lambda captures
// this by value, so its closure holds these four values and nothing else.
struct CallArgs {
  void** table;
  std::uint64_t size;
  std::uint64_t align;
  const DeviceStats* stats;
};
inline CallArgs call_args(const RoundArgs& a) { return {a.table, a.size, a.align, a.stats}; }

struct PatternDefaults {
  static constexpr unsigned call_stride = 1;
  static constexpr bool times_use = false;    // time the use launches as a phase
  static constexpr bool has_latency = false;  // fills RoundArgs::lat_* with clock64 cycles
  static constexpr bool mixed_sizes = false;  // thread tid asks for mixed_size(tid, size) bytes
  static constexpr bool reports_addresses = false;  // collect() copies the last round's table back (size_map)
  static void prepare(const RoundArgs&) {}    // before every batch (enqueued, no host wait)
};

// clock64 cycles written for a call that was not made or failed.
inline constexpr unsigned long long kNoLatency = ~0ull;

template <class F>
void launch_each(const RoundArgs& a, F f) {
  note_for_each_thread<F>();
  for_each_thread<<<a.grid, kThreadsPerBlock>>>(a.n, f, a.span);
  HB_CUDA_CHECK_LAUNCH();
}

// f(t, t < n) for t over whole blocks of kThreadsPerBlock, untimed by spans
// (the workloads time their phases with events).
template <class F>
void launch_threads(std::uint64_t n, F f) {
  note_for_each_thread<F>();
  for_each_thread<<<static_cast<unsigned>((n + kThreadsPerBlock - 1) / kThreadsPerBlock), kThreadsPerBlock>>>(n, f, nullptr);
  HB_CUDA_CHECK_LAUNCH();
}

// A round's device counters of what went wrong and its kernel deadline,
// cleared at every round's begin (the workloads' and replay's rounds).
template <class Counts>
class RoundCounters {
 public:
  RoundCounters() : stats_(1), counts_(1) {}
  void begin(std::uint64_t budget_ns) {
    HB_CUDA_CHECK(cudaMemsetAsync(counts_.get(), 0, sizeof(Counts)));
    HB_CUDA_CHECK(cudaMemsetAsync(stats_.get(), 0, sizeof(DeviceStats)));
    set_deadline<<<1, 1>>>(stats_.get(), budget_ns);
    HB_CUDA_CHECK_LAUNCH();
  }
  Counts* counts() const { return counts_.get(); }
  const DeviceStats* stats() const { return stats_.get(); }
  // After the round (the device waited for): what it counted.
  Counts read() const {
    Counts c{};
    HB_CUDA_CHECK(cudaMemcpy(&c, counts_.get(), sizeof c, cudaMemcpyDeviceToHost));
    return c;
  }

 private:
  DeviceBuffer<DeviceStats> stats_;
  DeviceBuffer<Counts> counts_;
};

// Wall seconds since `t0`, on the host: what a round times of its own host-driven work.
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Owner::reset() timed on the host with the device idle before and after
// (Round::reset_seconds).
template <class Owner>
double timed_reset(Owner& owner) {
  HB_CUDA_CHECK(cudaDeviceSynchronize());
  const auto t0 = std::chrono::steady_clock::now();
  owner.reset();
  HB_CUDA_CHECK(cudaDeviceSynchronize());
  return seconds_since(t0);
}

// The timed launches of a batch of rounds, each stamping its own start and end
// (KernelSpan): `phases` spans per round. An event pair around a launch also
// times the front end's work before the kernel starts and after it ends --
// about 2.4 us per pair on an H200, 12 % of a 35 us per_block round in
// Nsight Systems' terms; the kernel's own stamps are what the trace reports.
class SpanTimer {
 public:
  SpanTimer(int max_rounds, int phases)
      : phases_(phases), host_(static_cast<std::size_t>(max_rounds) * phases), spans_(host_.size()) {}
  void begin_batch() { HB_CUDA_CHECK(cudaMemsetAsync(spans_.get(), 0xff, host_.size() * sizeof(KernelSpan))); }
  KernelSpan* at(int round, int phase) const { return spans_.get() + round * phases_ + phase; }
  // After the batch: copies every span back (one transfer).
  void fetch() {
    HB_CUDA_CHECK(cudaMemcpy(host_.data(), spans_.get(), host_.size() * sizeof(KernelSpan), cudaMemcpyDeviceToHost));
  }
  // Seconds from the first block's start to the last block's end; 0 for a launch that never ran.
  double seconds(int round, int phase) const {
    const KernelSpan& k = host_[static_cast<std::size_t>(round) * phases_ + phase];
    const unsigned long long end = ~k.not_end;
    return k.start == ~0ull || end < k.start ? 0.0 : (end - k.start) * 1e-9;
  }

 private:
  int phases_;
  std::vector<KernelSpan> host_;
  DeviceBuffer<KernelSpan> spans_;  // host_.size() spans: declared after host_
};

// Rounds per batch: with a hold (Backend::begin_batch) each round's launches
// wait in the stream's queue, and 32 rounds of under ten entries stay well
// inside it.
inline constexpr int kMaxBatch = 32;

// A pair of events around a span of the stream.
class EventTimer {
 public:
  EventTimer() {
    HB_CUDA_CHECK(cudaEventCreate(&start_));
    HB_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start() { HB_CUDA_CHECK(cudaEventRecord(start_)); }
  void stop() { HB_CUDA_CHECK(cudaEventRecord(stop_)); }
  double seconds() const {
    HB_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    HB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

// Device memory for one runner's table and counters.
class RoundBuffers {
 public:
  RoundBuffers(const Case& c, std::uint64_t table_entries, bool latency = false)
      : table_(table_entries), stats_(1), lat_alloc_(latency ? c.threads : 0), lat_free_(latency ? c.threads : 0) {
    args_.table = table_.get();
    args_.stats = stats_.get();
    args_.lat_alloc = lat_alloc_.get();
    args_.lat_free = lat_free_.get();
    args_.n = c.threads;
    args_.size = c.size;
    args_.align = c.align;
    args_.grid = static_cast<unsigned>((c.threads + kThreadsPerBlock - 1) / kThreadsPerBlock);
  }

  const RoundArgs& args() const { return args_; }
  // Counters accumulate over the rounds of a batch; each round sets its own deadline.
  void begin_batch() { HB_CUDA_CHECK(cudaMemsetAsync(args_.stats, 0, sizeof(DeviceStats))); }
  void begin_round(std::uint64_t budget_ns) {
    set_deadline<<<1, 1>>>(args_.stats, budget_ns);
    HB_CUDA_CHECK_LAUNCH();
  }
  void begin(std::uint64_t budget_ns) {
    begin_batch();
    begin_round(budget_ns);
  }
  DeviceStats read_stats() const {
    DeviceStats s{};
    HB_CUDA_CHECK(cudaMemcpy(&s, args_.stats, sizeof s, cudaMemcpyDeviceToHost));
    return s;
  }
  // The counters every round reports the same way; bytes, frees and times are
  // the runner's to fill.
  static IterationResult result_from(const DeviceStats& s) {
    IterationResult out;
    out.not_started = s.not_started;
    out.misaligned = s.misaligned;
    out.corrupted = s.corrupted;
    out.tally.attempts = s.attempts;
    out.tally.successes = s.successes;
    return out;
  }

 private:
  DeviceBuffer<void*> table_;
  DeviceBuffer<DeviceStats> stats_;
  DeviceBuffer<unsigned long long> lat_alloc_, lat_free_;  // latency families only
  RoundArgs args_;  // the pointers above, as the kernels take them
};

inline std::uint64_t budget_ns(double seconds) { return static_cast<std::uint64_t>(seconds * 1e9); }

// A round that is one timed launch, the allocate phase (alloca, churn), and its
// batch bookkeeping: its buffers, that launch's span in every round of the
// batch, and the round's place in the batch.
class OneLaunchRound : public Round {
 public:
  OneLaunchRound(const Case& c, double budget_s) : buffers_(c, 1), budget_ns_(budget_ns(budget_s)) {}
  void begin_batch() override {
    buffers_.begin_batch();
    spans_.begin_batch();
    slot_ = -1;
  }
  int max_batch() const override { return kMaxBatch; }
  bool enqueues_only() const override { return true; }
  bool has_use_phase() const override { return false; }
  bool has_free_phase() const override { return false; }

 protected:
  void begin_round() {
    ++slot_;
    buffers_.begin_round(budget_ns_);
  }
  // The arguments of this round's launch, stamping its span.
  RoundArgs launch_args() const {
    RoundArgs a = buffers_.args();
    a.span = spans_.at(slot_, 0);
    return a;
  }
  // After the batch: its counters (into `s`), and each round's launch time as
  // round_seconds and in timed_seconds.
  IterationResult read_batch(DeviceStats& s) {
    s = buffers_.read_stats();
    spans_.fetch();
    IterationResult out = RoundBuffers::result_from(s);
    for (int i = 0; i <= slot_; ++i) {
      const double t = spans_.seconds(i, 0);
      out.round_seconds.push_back(t);
      out.timed_seconds += t;
    }
    return out;
  }

 private:
  RoundBuffers buffers_;
  std::uint64_t budget_ns_;
  int slot_ = -1;
  SpanTimer spans_{kMaxBatch, 1};
};

// A round that is one timed launch and then work the host drives between
// launches (capacity's refills, printf's drain and parse): the harness's
// allocate phase runs the launch, collect() waits for it and does the rest.
// No use or free phase; the host reads results between launches, so the
// stream is never held (enqueues_only false).
class TimedLaunchRound : public Round {
 public:
  void allocate() final { launch(); }
  IterationResult collect() final { return finish(); }
  bool has_use_phase() const final { return false; }
  bool has_free_phase() const final { return false; }
  // Public only because CUDA requires it of a function enclosing an extended
  // __device__ lambda.
  virtual void launch() = 0;               // the timed launch
  virtual IterationResult finish() = 0;    // after it: the host's part, and the batch's result
};

// Peak SM clock of the current device, for clock64 cycles -> ns.
double sm_cycles_per_ns();

// Copies a round's pointer table back: the blocks it held (NULL and
// not-started slots left out), in table order. The free launch does not clear
// the table, so after a round it still names the blocks that round had.
std::vector<std::uint64_t> block_addresses(void* const* device_table, std::uint64_t n);

// Copies per-thread cycle counts and converts those of calls that were made.
std::vector<double> latencies_ns(const unsigned long long* device_cycles, std::uint64_t n, double cycles_per_ns);

// A three-phase round's parts beyond its counts, composed at compile time by
// the pattern's flags (ThreePhaseRunner below): each is given the round's
// buffers after a batch and adds what it saw to the batch's result, and each
// brings the reducer of its counters. An observer has
//   static constexpr int max_batch;   // rounds it can hold per batch
//   void collect(const RoundArgs&, IterationResult&) const;
//   static std::unique_ptr<Reducer> reducer();
// None of them runs inside a timed launch: they read back after the batch.

// The four spans of every round (allocate, free, and the use pair): the
// allocation counters' times, and with `times_use` the use launches as a phase.
template <bool times_use>
class PhaseTimes {
 public:
  enum Phase { kAlloc, kFree, kWrite, kCheck, kPhases };
  void begin_batch() { spans_.begin_batch(); }
  KernelSpan* at(int slot, Phase phase) const { return spans_.at(slot, phase); }
  // After the batch of `rounds` rounds: each round's time (round_seconds and
  // timed_seconds) and the phases' seconds in the tally.
  void collect(int rounds, IterationResult& out) {
    spans_.fetch();
    for (int i = 0; i < rounds; ++i) {
      const double a = spans_.seconds(i, kAlloc), f = spans_.seconds(i, kFree);
      double round = a + f;
      out.tally.alloc_seconds += a;
      out.tally.free_seconds += f;
      if constexpr (times_use) {
        const double u = spans_.seconds(i, kWrite) + spans_.seconds(i, kCheck);
        out.tally.use_seconds += u;
        round += u;
      }
      out.round_seconds.push_back(round);
      out.timed_seconds += round;
    }
  }
  static std::unique_ptr<Reducer> reducer() {
    AllocationCounters which;
    which.use = times_use;
    which.peak = true;  // every block of a round is live between its allocating and freeing launches
    return allocation_reducer(which);
  }

 private:
  SpanTimer spans_{kMaxBatch, kPhases};
};

// clock64 cycles per call, per thread (RoundArgs::lat_*): overwritten by every
// round, so one round per batch.
class LatencyObserver {
 public:
  static constexpr int max_batch = 1;
  LatencyObserver() : cycles_per_ns_(sm_cycles_per_ns()) {}
  void collect(const RoundArgs& a, IterationResult& out) const {
    out.observed.put(LatencySamples{latencies_ns(a.lat_alloc, a.n, cycles_per_ns_),
                                    latencies_ns(a.lat_free, a.n, cycles_per_ns_)});
  }
  static std::unique_ptr<Reducer> reducer() { return latency_reducer(); }

 private:
  double cycles_per_ns_;
};

// The last round's blocks, from its table (size_map's stride).
struct StrideObserver {
  static constexpr int max_batch = kMaxBatch;
  void collect(const RoundArgs& a, IterationResult& out) const {
    out.observed.put(BlockAddresses{block_addresses(a.table, a.n)});
  }
  static std::unique_ptr<Reducer> reducer() { return stride_reducer(); }
};

// The observers a pattern's flags ask for, as a tuple type.
template <bool B, class T>
using ObserverIf = std::conditional_t<B, std::tuple<T>, std::tuple<>>;
template <class Pattern>
using ObserversOf = decltype(std::tuple_cat(std::declval<ObserverIf<Pattern::reports_addresses, StrideObserver>>(),
                                            std::declval<ObserverIf<Pattern::has_latency, LatencyObserver>>()));

template <class Pattern, class Api>
class ThreePhaseRunner final : public Round {
  using Times = PhaseTimes<Pattern::times_use>;
  using Observers = ObserversOf<Pattern>;

 public:
  ThreePhaseRunner(const Case& c, double budget_s)
      : owner_(c), buffers_(c, c.threads, Pattern::has_latency), budget_ns_(budget_ns(budget_s)), c_(c) {}

  void begin_batch() override {
    // Per batch, not per runner: another runner of the same pattern (the small
    // warm-up round's) may have pointed a pattern's __device__ state at its own
    // buffers since this one was made.
    Pattern::prepare(buffers_.args());
    buffers_.begin_batch();
    times_.begin_batch();
    slot_ = -1;
  }
  void begin() override {
    ++slot_;
    owner_.reset();
    buffers_.begin_round(budget_ns_);
  }
  void allocate() override { Pattern::allocate(owner_.handle(), timed(Times::kAlloc)); }
  void use() override {
    const RoundArgs& a = buffers_.args();
    const std::uint64_t alignment = c_.align > Api::min_alignment ? c_.align : Api::min_alignment;
    if constexpr (!Pattern::times_use) {
      // Untimed verification of large slices: the same words and counts, a warp to a slice.
      if (a.size >= kWarpSliceBytes) {
        write_slices_by_warp<<<warp_slices_grid(a.n), kThreadsPerBlock>>>(
            a.table, a.n, a.size, Pattern::call_stride, alignment, Pattern::mixed_sizes, a.stats);
        HB_CUDA_CHECK_LAUNCH();
        check_slices_by_warp<<<warp_slices_grid(a.n), kThreadsPerBlock>>>(a.table, a.n, a.size, Pattern::mixed_sizes,
                                                                          a.stats);
        HB_CUDA_CHECK_LAUNCH();
        return;
      }
    }
    write_slices<<<a.grid, kThreadsPerBlock>>>(a.table, a.n, a.size, Pattern::call_stride, alignment,
                                               Pattern::mixed_sizes, a.stats, times_.at(slot_, Times::kWrite));
    HB_CUDA_CHECK_LAUNCH();
    check_slices<<<a.grid, kThreadsPerBlock>>>(a.table, a.n, a.size, Pattern::mixed_sizes, a.stats,
                                               times_.at(slot_, Times::kCheck));
    HB_CUDA_CHECK_LAUNCH();
  }
  void release() override { Pattern::release(owner_.handle(), timed(Times::kFree)); }
  IterationResult collect() override {
    HB_CUDA_CHECK(cudaDeviceSynchronize());
    const DeviceStats s = buffers_.read_stats();
    IterationResult out = RoundBuffers::result_from(s);
    times_.collect(slot_ + 1, out);
    out.tally.bytes = Pattern::mixed_sizes ? s.bytes : s.successes * c_.size * Pattern::call_stride;
    out.tally.frees = s.successes;
    if constexpr (Pattern::times_use) {
      std::uint64_t live_threads = s.successes * Pattern::call_stride;
      if (live_threads > c_.threads * (slot_ + 1)) live_threads = c_.threads * (slot_ + 1);
      // Every byte of every live slice written once and read once.
      out.tally.use_bytes = 2 * live_threads * c_.size;
    }
    std::apply([&](const auto&... o) { (o.collect(buffers_.args(), out), ...); }, observers_);
    return out;
  }
  int max_batch() const override {
    return std::apply([](const auto&... o) { return std::min({kMaxBatch, o.max_batch...}); }, observers_);
  }
  bool enqueues_only() const override { return !alloc::ResetSynchronizes<alloc::Owner<Api>>::value; }
  double reset_seconds() override { return timed_reset(owner_); }
  std::unique_ptr<Reducer> reducer() const override {
    std::vector<std::unique_ptr<Reducer>> parts;
    parts.push_back(Times::reducer());
    std::apply([&](const auto&... o) { (parts.push_back(o.reducer()), ...); }, observers_);
    return combine(std::move(parts));
  }

 private:
  alloc::Owner<Api> owner_;
  RoundBuffers buffers_;
  std::uint64_t budget_ns_;
  Case c_;
  int slot_ = -1;  // this round's place in the batch
  Times times_;
  Observers observers_;

  // The arguments of a timed launch: this round's span for `phase`.
  RoundArgs timed(typename Times::Phase phase) const {
    RoundArgs a = buffers_.args();
    a.span = times_.at(slot_, phase);
    return a;
  }
};

// Runner<Api>(c, budget_s, extra...) for the API the case names, among those
// `dispatch` knows (dispatch(api, f) calls f with that API's handle type).
template <template <class> class Runner, class Dispatch, class... Extra>
std::unique_ptr<Round> make_for_dispatch(const Case& c, double budget_s, Dispatch dispatch, const Extra&... extra) {
  return dispatch(c.api->name, [&](auto api) -> std::unique_ptr<Round> {
    alloc::check_usable(api);
    return std::make_unique<Runner<decltype(api)>>(c, budget_s, extra...);
  });
}

// Runner<Api> for the heap API the case names.
template <template <class> class Runner, class... Extra>
std::unique_ptr<Round> make_for_api(const Case& c, double budget_s, const Extra&... extra) {
  return make_for_dispatch<Runner>(
      c, budget_s, [](std::string_view api, auto&& f) { return alloc::with_heap_api(api, f); }, extra...);
}

template <class Pattern>
struct ThreePhase {
  template <class Api>
  using Runner = ThreePhaseRunner<Pattern, Api>;
};

template <class Pattern>
std::unique_ptr<Round> make_three_phase(const Case& c, double budget_s) {
  return make_for_api<ThreePhase<Pattern>::template Runner>(c, budget_s);
}

// A pattern file's factory: the round of case `c`, one of the file's patterns
// (`pattern`, from its list), for the API the case names.
using PatternFactory = std::unique_ptr<Round> (*)(const PatternTraits& pattern, const Case& c, double budget_s);

// The factory of the file that lists `pattern` (src/device/pattern_registry.cu), or nullptr.
PatternFactory find_pattern_factory(const PatternTraits& pattern);


}  // namespace heapbench::detail
