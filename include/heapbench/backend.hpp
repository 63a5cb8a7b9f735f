#pragma once
// The seam between the harness and the GPU. The harness (bench/) runs cases
// through a Backend and brackets every phase of a Round with NVTX ranges; the
// CUDA backend (src/device/) implements both with kernels. Nothing here needs a
// CUDA header, so a test can drive the harness with a backend of its own.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "heapbench/case.hpp"
#include "heapbench/metrics.hpp"
#include "heapbench/printf_fifo.hpp"

namespace heapbench {

// A failed device call. The device context may hold a sticky error, so the
// harness calls Backend::invalidate() before the next case.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What one batch of rounds of a case observed (Round::collect), beyond the
// tally its figures come from; counts are summed over the batch.
struct IterationResult {
  Tally tally;
  double timed_seconds = 0.0;     // GPU time of the timed launches, summed over the batch
  // GPU time of the timed launches of each round of the batch, in order (empty:
  // one round of timed_seconds).
  std::vector<double> round_seconds;
  std::uint64_t not_started = 0;  // calls (or churn threads) that found the kernel budget spent
  std::uint64_t misaligned = 0;   // pointers not aligned as the API promises
  std::uint64_t corrupted = 0;    // blocks that did not read back what was written
  std::string fault;              // any other failed check, in words
  // Latency families only: per-call latency of each successful allocation and of
  // each free, in ns (clock64 cycles over the SM clock).
  std::vector<double> alloc_latency_ns;
  std::vector<double> free_latency_ns;
  // Capacity family only: the raw observations its figures come from.
  std::optional<CapacityRaw> capacity;
  // printf family only: calls, return values, lines captured.
  std::optional<PrintfRaw> printf_raw;
  // size_map only: the addresses of the blocks of the batch's last round.
  std::vector<std::uint64_t> block_addresses;

  // Empty when the round is a valid measurement; otherwise why it is not.
  std::string problem(double kernel_budget_s) const;
};

// One round of a case, in the phases the harness names on the timeline. The
// harness enqueues up to max_batch() rounds (begin, allocate, use, release
// each), then collect() waits once and reports them all.
class Round {
 public:
  virtual ~Round() = default;
  virtual void begin_batch() {}           // zero the counters a batch accumulates (untimed)
  virtual void begin() = 0;               // per round: reset arena and deadline (untimed)
  virtual void allocate() = 0;            // the timed allocating launch
  virtual void use() {}                   // write and read back every byte
  virtual void release() {}               // the timed freeing launch
  virtual IterationResult collect() = 0;  // wait for the GPU, read counters and event times of the batch
  virtual bool has_use_phase() const { return true; }   // alloca and churn use inside allocate()
  virtual bool has_free_phase() const { return true; }  // alloca frees by returning
  virtual bool reports_frees() const { return has_free_phase(); }  // churn frees inside allocate()
  virtual bool times_use() const { return false; }      // cross_kernel times its use launch
  virtual bool has_latency() const { return false; }    // *_latency families
  // Rounds that can be enqueued before one collect() (per-round buffers, such as
  // latency samples, limit it to 1).
  virtual int max_batch() const { return 1; }
  // The phases only enqueue work (no host synchronisation inside them), so the
  // backend may hold the stream while a batch is enqueued (Backend::begin_batch).
  // capacity and printf read results between their launches: false.
  virtual bool enqueues_only() const { return false; }
  // The families without a small warm-up round (capacity: a fill with fewer
  // threads takes longer, not less).
  virtual bool small_warmup() const { return true; }
};

// What the backend saw around a batch of rounds.
struct BatchTiming {
  double sm_clock_mhz = 0;  // mean SM clock over the batch (0: not measured)
  bool hold_broke = false;  // the hold timed out before the batch was enqueued: launch gaps are in its times
};

class Backend {
 public:
  virtual ~Backend() = default;
  struct Heap {
    std::uint64_t reported = 0;  // the limit the device reports after setting it
    bool reset = false;          // the device was reset to change it
  };
  virtual Heap ensure_heap(std::uint64_t bytes) = 0;
  // After a failed call: the next ensure_heap() starts from a fresh context.
  virtual void invalidate() = 0;
  // Bytes the heap hands out as kCapacityProbeBlock blocks right now.
  virtual std::uint64_t probe_capacity(std::uint64_t heap_bytes) = 0;
  // Create after ensure_heap(): a reset invalidates a round's device memory.
  virtual std::unique_ptr<Round> make_round(const Case& c, double kernel_budget_s) = 0;
  // Around a batch of rounds: with `hold`, the stream waits behind a blocking
  // launch until end_batch(), so the batch's launches run back to back and an
  // event pair times its kernel, not the host's launch latency (nvbench's
  // "blocking kernel"). Both stamp the SM clock. end_batch() waits for the GPU.
  virtual void begin_batch(bool /*hold*/) {}
  virtual BatchTiming end_batch() { return {}; }
  // The SM clock the device is rated for (its peak), MHz; 0 unknown.
  virtual double rated_sm_mhz() const { return 0; }
};

inline constexpr std::uint64_t kCapacityProbeBlock = 64 * 1024;

}  // namespace heapbench
