// output: variable-size output, the shape of work most kernels that call
// malloc have (a result per thread whose size only the thread knows).
//
// Workload: each of `threads` threads produces output_bytes(t) bytes, drawn
// from [size_min, size] by a seeded hash of t (src/workloads/output_body.hpp),
// by one of these strategies (the case's API):
//  - every heap API and allocator adapter: one allocation per thread, freed by
//    a later launch;
//  - warp_aggregated: lane 0 makes one malloc for its warp's padded total, the
//    lanes carve it by a prefix sum over shuffles, lane 0 frees it;
//  - two_pass and two_pass_async: no allocator in the kernel. A counting
//    launch writes each size, CUB's DeviceScan::ExclusiveSum turns them into
//    offsets, the host reads the total back, one buffer is taken (two_pass:
//    cudaMallocFromPoolAsync from a pool kept across rounds; two_pass_async:
//    cudaMallocAsync from the device's default pool, whose memory goes back
//    at every synchronisation), and a writing launch carves it; the buffer is
//    freed (cudaFreeAsync) in the release phase.
// With writes:1 the producing launch writes every output byte (timed, as an
// application would); with writes:0 it only obtains the outputs and the
// verifier writes them. Either way an untimed launch reads every output back
// (output_body.hpp): a missing, misaligned or overlapping output is an error.
// A round is timed by CUDA events around its produce phase (every launch of
// it, the scan and the host's read of the total included) and its release.
//
// Counters: outputs_per_s (outputs obtained per second of round time),
// output_bytes_per_s, fail_rate (outputs that could not be obtained: NULL),
// produce_s and release_s (seconds per round of each phase), heap_bytes.
#ifdef HEAPBENCH_PATTERN_TRAITS_ONLY  // the traits, read in namespace heapbench::patterns (pattern_traits.hpp)
inline constexpr PatternTraits output_traits =
    PatternTraits{"output", "each thread produces an output of a size only it knows: allocate, carve or count-scan-carve"}
        .with(&PatternTraits::sources, kHeapSources | source_bit(Source::strategy))
        .with_axes("size_min", "writes")
        .in_own_sweep();
inline constexpr PatternList<1> output_patterns = {&output_traits};
#else
#include <cub/device/device_scan.cuh>

#include "device/round.cuh"
#include "workloads/workload_metrics.hpp"
#include "workloads/output_body.hpp"

namespace heapbench::detail {

using workloads::output_bytes;
using workloads::padded;
using workloads::write_output;

// What a strategy's launches read. They count nothing but the outputs they
// could not obtain (rare): one atomic per output on one counter would cost
// the timed launch more than some strategies take; the verifier counts the rest.
struct OutputArgs {
  void** table;                // thread t's output, NULL, or kNotStarted
  std::uint64_t n, lo, hi;
  bool writes;
  const DeviceStats* stats;    // the deadline
  unsigned long long* nulls;   // outputs the strategy could not obtain (NULL)
};

// One allocation per thread from a heap API or an adapter.
template <class Api>
class PerThreadOutput {
 public:
  explicit PerThreadOutput(const Case& c) : owner_(c) {}
  void reset() { owner_.reset(); }
  void produce(const OutputArgs& a) {
    const Api api = owner_.handle();
    const OutputArgs o = a;
    launch_threads(a.n, [=] __device__(std::uint64_t t, bool active) {
      if (!active) return;
      void* p = kNotStarted;
      const std::uint64_t bytes = output_bytes(t, o.lo, o.hi);
      if (before_deadline(o.stats)) {
        p = api.allocate(bytes, workloads::kOutputAlign);
        if (p != nullptr && o.writes) write_output(static_cast<unsigned char*>(p), bytes, t);
      }
      o.table[t] = p;
      if (p == nullptr) atomicAdd(o.nulls, 1ull);
    });
  }
  void release(const OutputArgs& a) {
    const Api api = owner_.handle();
    void* const* table = a.table;
    launch_threads(a.n, [=] __device__(std::uint64_t t, bool active) {
      if (active && is_block(table[t])) api.deallocate(table[t]);
    });
  }
  double reset_seconds() { return timed_reset(owner_); }

 private:
  alloc::Owner<Api> owner_;
};

// One malloc per warp for its lanes' padded total, carved by an exclusive
// prefix sum over shuffles; lane 0's output starts the block, and lane 0 frees it.
class WarpAggregatedOutput {
 public:
  explicit WarpAggregatedOutput(const Case&) {}
  void reset() {}
  void produce(const OutputArgs& a) {
    const OutputArgs o = a;
    launch_threads(a.n, [=] __device__(std::uint64_t t, bool active) {
      // Every lane of the warp is here (the grid is whole warps; none returns
      // before the shuffles), so the full mask is exact. Lanes past n ask for 0.
      const unsigned lane = threadIdx.x & 31u;
      const std::uint64_t bytes = active ? output_bytes(t, o.lo, o.hi) : 0;
      const std::uint64_t mine = active ? padded(bytes) : 0;
      std::uint64_t inclusive = mine;
      for (unsigned d = 1; d < 32; d <<= 1) {
        const std::uint64_t v = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += v;
      }
      const std::uint64_t total = __shfl_sync(0xffffffffu, inclusive, 31);
      unsigned char* base = nullptr;
      // Lane 0 is active whenever any lane is (threads past n are the warp's last).
      if (lane == 0 && active) {
        base = before_deadline(o.stats) ? static_cast<unsigned char*>(malloc(total))
                                        : static_cast<unsigned char*>(kNotStarted);
      }
      base = reinterpret_cast<unsigned char*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(base), 0));
      if (!active) return;
      void* p = is_block(base) ? base + (inclusive - mine) : static_cast<void*>(base);
      if (is_block(p) && o.writes) write_output(static_cast<unsigned char*>(p), bytes, t);
      o.table[t] = p;
      if (p == nullptr) atomicAdd(o.nulls, 1ull);
    });
  }
  void release(const OutputArgs& a) {
    void* const* table = a.table;
    launch_threads(a.n, [=] __device__(std::uint64_t t, bool active) {
      if (active && (threadIdx.x & 31u) == 0 && is_block(table[t])) free(table[t]);
    });
  }
  double reset_seconds() { return -1; }
};

// Count, scan, one buffer, carve: the output without an allocator in the kernel.
// kAsync: the buffer from cudaMallocAsync on the device's default pool (release
// threshold 0: its memory goes back at every synchronisation, so every round
// maps it again); else from a pool of this runner's whose memory stays reserved
// across rounds (release threshold: all of it).
template <bool kAsync>
class TwoPassOutput {
 public:
  explicit TwoPassOutput(const Case& c) : sizes_(c.threads), offsets_(c.threads), total_(1), n_(c.threads) {
    HB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes_, sizes_.get(), offsets_.get(), scan_items()));
    scan_temp_ = DeviceBuffer<unsigned char>(scan_bytes_);
    if constexpr (!kAsync) make_pool(c);
  }
  ~TwoPassOutput() {
    if (buffer_ != nullptr) cudaFree(buffer_);  // a round that failed between taking and freeing it
    if (pool_ != nullptr) cudaMemPoolDestroy(pool_);
    (void)cudaGetLastError();
  }
  TwoPassOutput(const TwoPassOutput&) = delete;
  TwoPassOutput& operator=(const TwoPassOutput&) = delete;
  void reset() {}
  void produce(const OutputArgs& a) {
    const OutputArgs o = a;
    std::uint64_t* sizes = sizes_.get();
    launch_threads(a.n, [=] __device__(std::uint64_t t, bool active) {
      if (active) sizes[t] = padded(output_bytes(t, o.lo, o.hi));
    });
    HB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_.get(), scan_bytes_, sizes_.get(), offsets_.get(), scan_items()));
    std::uint64_t* offsets = offsets_.get();
    std::uint64_t* total = total_.get();
    const std::uint64_t last = a.n - 1;
    launch_threads(1, [=] __device__(std::uint64_t, bool active) {
      if (active) *total = offsets[last] + sizes[last];
    });
    std::uint64_t bytes = 0;
    HB_CUDA_CHECK(cudaMemcpy(&bytes, total, sizeof bytes, cudaMemcpyDeviceToHost));  // what the host must ask for
    void* buffer = nullptr;
    if constexpr (kAsync) {
      HB_CUDA_CHECK(cudaMallocAsync(&buffer, bytes, 0));
    } else {
      HB_CUDA_CHECK(cudaMallocFromPoolAsync(&buffer, bytes, pool_, 0));
    }
    buffer_ = buffer;
    auto* base = static_cast<unsigned char*>(buffer);
    launch_threads(a.n, [=] __device__(std::uint64_t t, bool active) {
      if (!active) return;
      unsigned char* p = base + offsets[t];
      if (o.writes) write_output(p, output_bytes(t, o.lo, o.hi), t);
      o.table[t] = p;
    });
  }
  void release(const OutputArgs&) {
    if (buffer_ == nullptr) return;
    HB_CUDA_CHECK(cudaFreeAsync(buffer_, 0));
    buffer_ = nullptr;
  }
  double reset_seconds() { return -1; }

 private:
  DeviceBuffer<std::uint64_t> sizes_, offsets_, total_;
  DeviceBuffer<unsigned char> scan_temp_;
  std::size_t scan_bytes_ = 0;
  std::uint64_t n_;
  cudaMemPool_t pool_ = nullptr;
  void* buffer_ = nullptr;

  int scan_items() const { return static_cast<int>(n_); }
  // A pool that keeps what it reserved: the rounds after the first take their
  // buffer without mapping memory. Warmed here with the case's total, so no
  // timed round pays for the reservation.
  void make_pool(const Case& c) {
    int device = 0;
    HB_CUDA_CHECK(cudaGetDevice(&device));
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    HB_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    std::uint64_t keep = ~std::uint64_t{0};
    HB_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
    std::uint64_t bytes = 0;
    for (std::uint64_t t = 0; t < c.threads; ++t) bytes += padded(output_bytes(t, c.size_min, c.size));
    void* warm = nullptr;
    HB_CUDA_CHECK(cudaMallocFromPoolAsync(&warm, bytes, pool_, 0));
    HB_CUDA_CHECK(cudaFreeAsync(warm, 0));
    HB_CUDA_CHECK(cudaStreamSynchronize(0));
  }
};

// Before the verifier reads them back, writes:0's outputs are written here
// (untimed): then a missing or overlapping output shows the same way in both modes.
__global__ void write_outputs(void* const* table, std::uint64_t n, std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t t = global_thread_id();
  if (t < n && is_block(table[t])) write_output(static_cast<unsigned char*>(table[t]), output_bytes(t, lo, hi), t);
}

__global__ void check_outputs(void* const* table, std::uint64_t n, std::uint64_t lo, std::uint64_t hi,
                              OutputCounts* tally) {
  const std::uint64_t t = global_thread_id();
  const workloads::OutputCheck c = t < n ? workloads::check_output(table[t], t, lo, hi) : workloads::OutputCheck{};
  warp_add(&tally->present, c.present);
  warp_add(&tally->bytes, c.present ? static_cast<unsigned>(output_bytes(t, lo, hi)) : 0u);
  warp_add(&tally->nulls, t < n && table[t] == nullptr);
  warp_add(&tally->not_started, c.not_started);
  warp_add(&tally->misaligned, c.misaligned);
  warp_add(&tally->corrupted, c.corrupted);
}

// A round of the output workload with one strategy: produce (timed), verify
// (untimed), release (timed). One round per batch: its events and its checks
// are read back after every round.
template <class Strategy>
class OutputRound final : public Round {
 public:
  OutputRound(const Case& c, double budget_s)
      : strategy_(c), buffers_(c, c.threads), tally_(1), budget_ns_(budget_ns(budget_s)), c_(c),
        writes_(c.axis("writes") != 0) {}
  void begin_batch() override {
    buffers_.begin_batch();
    HB_CUDA_CHECK(cudaMemsetAsync(tally_.get(), 0, sizeof(OutputCounts)));
  }
  void begin() override {
    strategy_.reset();
    buffers_.begin_round(budget_ns_);
  }
  void allocate() override {
    produce_.start();
    strategy_.produce(args());
    produce_.stop();
  }
  void use() override {
    const RoundArgs& a = buffers_.args();
    if (!writes_) write_outputs<<<a.grid, kThreadsPerBlock>>>(a.table, a.n, c_.size_min, c_.size);
    HB_CUDA_CHECK_LAUNCH();
    check_outputs<<<a.grid, kThreadsPerBlock>>>(a.table, a.n, c_.size_min, c_.size, tally_.get());
    HB_CUDA_CHECK_LAUNCH();
  }
  void release() override {
    release_.start();
    strategy_.release(args());
    release_.stop();
  }
  IterationResult collect() override {
    HB_CUDA_CHECK(cudaDeviceSynchronize());
    OutputCounts v{};
    HB_CUDA_CHECK(cudaMemcpy(&v, tally_.get(), sizeof v, cudaMemcpyDeviceToHost));
    return output_result(v, c_.threads, produce_.seconds(), release_.seconds());
  }
  bool enqueues_only() const override { return false; }
  std::unique_ptr<Reducer> reducer() const override { return output_reducer(); }
  double reset_seconds() override { return strategy_.reset_seconds(); }

 private:
  Strategy strategy_;
  RoundBuffers buffers_;
  DeviceBuffer<OutputCounts> tally_;
  EventTimer produce_, release_;
  std::uint64_t budget_ns_;
  Case c_;
  bool writes_;  // the writes axis: the producing launch writes every output byte

  OutputArgs args() const {
    const RoundArgs& a = buffers_.args();
    return {a.table, a.n, c_.size_min, c_.size, writes_, a.stats, &tally_.get()->reported_nulls};
  }
};

template <class Strategy>
std::unique_ptr<Round> make_output_round(const Case& c, double budget_s) {
  return std::make_unique<OutputRound<Strategy>>(c, budget_s);
}

template <class Api>
using PerThreadOutputRound = OutputRound<PerThreadOutput<Api>>;

std::unique_ptr<Round> make_output(const PatternTraits&, const Case& c, double budget_s) {
  const std::string_view api = c.api->name;
  if (api == api::kWarpAggregated.name) return make_output_round<WarpAggregatedOutput>(c, budget_s);
  if (api == api::kTwoPass.name) return make_output_round<TwoPassOutput<false>>(c, budget_s);
  if (api == api::kTwoPassAsync.name) return make_output_round<TwoPassOutput<true>>(c, budget_s);
  return make_for_api<PerThreadOutputRound>(c, budget_s);
}

}  // namespace heapbench::detail
#endif  // HEAPBENCH_PATTERN_TRAITS_ONLY
