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

// What one round of a case observed, beyond the tally its figures come from.
struct IterationResult {
  Tally tally;
  double timed_seconds = 0.0;     // GPU time of the timed launches: the iteration's manual time
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

  // Empty when the round is a valid measurement; otherwise why it is not.
  std::string problem(double kernel_budget_s) const;
};

// One round of a case, in the phases the harness names on the timeline.
class Round {
 public:
  virtual ~Round() = default;
  virtual void begin() = 0;               // reset counters, arena and deadline (untimed)
  virtual void allocate() = 0;            // the timed allocating launch
  virtual void use() {}                   // write and read back every byte
  virtual void release() {}               // the timed freeing launch
  virtual IterationResult collect() = 0;  // wait for the GPU, read counters and event times
  virtual bool has_use_phase() const { return true; }   // alloca and churn use inside allocate()
  virtual bool has_free_phase() const { return true; }  // alloca frees by returning
  virtual bool reports_frees() const { return has_free_phase(); }  // churn frees inside allocate()
  virtual bool times_use() const { return false; }      // cross_kernel times its use launch
  virtual bool has_latency() const { return false; }    // *_latency families
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
};

inline constexpr std::uint64_t kCapacityProbeBlock = 64 * 1024;

// Runs one round, each phase inside its NVTX range with `index` (the round's
// number, -1 for the warm-up) as payload (bench/round.cpp).
IterationResult run_round(Round& round, std::int64_t index);

}  // namespace heapbench
