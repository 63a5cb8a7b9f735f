#pragma once
// Counter math: from raw counts and GPU seconds to the figures in the JSON.
// Definitions (docs/metrics.md): rates are successful operations per second of
// GPU time of the kernel that did them (stamped by the kernel itself). Each counter is
// declared once, in counter_units.cpp.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "measure/reducer.hpp"

namespace heapbench {

// What one timed iteration (or the sum of many) observed.
struct Tally {
  std::uint64_t attempts = 0;   // allocation calls made
  std::uint64_t successes = 0;  // non-NULL returns
  std::uint64_t bytes = 0;      // bytes successfully allocated
  std::uint64_t frees = 0;      // free calls made (one per success)
  double alloc_seconds = 0.0;   // GPU time of the allocating kernels
  double free_seconds = 0.0;    // GPU time of the freeing kernels
  std::uint64_t use_bytes = 0;  // bytes written plus bytes read back by the use kernels
  double use_seconds = 0.0;     // GPU time of the use kernels (where the pattern times them)

  Tally& operator+=(const Tally& o);
};

struct Figures {
  double allocs_per_s = 0.0;
  double frees_per_s = 0.0;
  double bytes_per_s = 0.0;
  double fail_rate = 0.0;
  double use_bytes_per_s = 0.0;
};

// Rates are 0 where no time was measured; fail_rate is 0 with no attempts.
Figures compute_figures(const Tally& t);

// Which of the allocation counters a pattern reports.
struct AllocationCounters {
  bool frees = true;      // frees_per_s: not where frames free by returning (alloca), nor capacity
  bool fail_rate = true;  // not capacity, whose fills run to the first NULL by design
  bool use = false;       // use_bytes_per_s: where the pattern times its use launches (cross_kernel)
  // peak_bytes: where a round holds every block it obtained at once, between its
  // allocating and its freeing launch (the rounds of round.cuh; not churn, whose
  // threads free as they go, nor capacity, which has utilization).
  bool peak = false;
};

// The counters of the heap patterns, from the tally summed over the case's
// batches: allocs_per_s, frees_per_s, bytes_per_s, fail_rate, use_bytes_per_s
// (as AllocationCounters says), heap_bytes, peak_bytes (the bytes one round of a
// batch obtained, batch.tally.bytes / its rounds, the largest over the batches).
// Round's default reducer.
std::unique_ptr<Reducer> allocation_reducer(AllocationCounters which = {});

// Latency families: per-call latency of each successful allocation and of
// each free of a batch, in ns (clock64 cycles over the SM clock).
struct LatencySamples {
  std::vector<double> alloc_ns;
  std::vector<double> free_ns;
};

// lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_max_ns and free_lat_* over the
// samples of every batch (at most kMaxLatencySamples of each kind).
inline constexpr std::size_t kMaxLatencySamples = std::size_t{1} << 24;  // of each kind; 8 bytes each
std::unique_ptr<Reducer> latency_reducer();

// size_map: the addresses of the blocks of a batch's last round.
struct BlockAddresses {
  std::vector<std::uint64_t> addresses;
};

// stride_bytes: the median stride (median_stride) of each batch's blocks,
// averaged over the batches that had two blocks or more.
std::unique_ptr<Reducer> stride_reducer();

// What a capacity round observed, raw: the kernels report counts and
// addresses, the formulas below turn them into figures (docs/metrics.md).
struct CapacityRaw {
  std::uint64_t heap_bytes = 0;          // limit the device reports
  std::uint64_t size = 0;                // bytes per block asked for
  std::vector<std::uint64_t> addresses;  // every block of the first fill, sorted
  std::uint64_t freed_bytes = 0;         // bytes of the blocks freed (every other one by address)
  std::uint64_t refill_bytes[3] = {};    // then obtainable as blocks of 2x, 4x, 8x size
  std::uint64_t recovery_blocks = 0;     // blocks of `size` obtainable after freeing everything
  double recovery_seconds = 0;           // GPU time of that fill
  std::uint64_t random_freed_bytes = 0;  // of the recovered fill, a seeded random half freed
  std::uint64_t random_refill_bytes = 0; // then obtainable as 2x blocks
  bool fill_only = false;                // capacity_fill: the first fill alone, nothing after it measured
};

struct CapacityFigures {
  double utilization = 0;       // bytes held at the first NULL / heap limit
  double overhead_bytes = 0;    // median address stride between neighbouring blocks - size
  double addr_range_ratio = 0;  // (max - min address + size) / (blocks x size)
  double ext_frag[3] = {};      // 1 - refill_bytes[k] / freed_bytes, for 2x, 4x, 8x blocks
  double recovery = 0;          // recovery_blocks / blocks of the first fill
  double recovery_allocs_per_s = 0;  // recovery_blocks / recovery_seconds
  double ext_frag_random = 0;   // 1 - random_refill_bytes / random_freed_bytes
};

CapacityFigures capacity_figures(const CapacityRaw& raw);

// The address range over several rounds of a case: (highest address of any
// round's block + size - lowest address of any round) / (the largest round's
// blocks x size). 1 when every round packs the same blocks; larger when rounds
// wander over the heap.
class AddressSpan {
 public:
  void add(const CapacityRaw& round);
  double ratio() const;

 private:
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
  std::uint64_t blocks_ = 0;
  std::uint64_t size_ = 0;
};

// The capacity figures averaged over the rounds of a case: utilization,
// overhead_bytes, addr_range_ratio, addr_range_ratio_rounds (AddressSpan), and
// unless the rounds were capacity_fill's: ext_frag, ext_frag_4x, ext_frag_8x,
// ext_frag_random, recovery, recovery_allocs_per_s.
std::unique_ptr<Reducer> capacity_reducer();

// The median distance between neighbouring blocks once `addresses` are sorted
// by address: the bytes one block really takes (request, header, rounding to
// its size class). The median ignores the gaps between the allocator's
// regions. 0 for fewer than two blocks. Reorders `addresses`.
double median_stride(std::vector<std::uint64_t>& addresses);

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles (the smallest sample with at least p% of samples at
// or below it). Reorders `samples`. All zero for no samples.
Percentiles percentiles(std::vector<double>& samples);

}  // namespace heapbench
