#pragma once
// The seam between the harness and the GPU. The measuring loop
// (measure/case_loop.cpp) runs cases through a Backend and brackets every
// phase of a Round with NVTX ranges (measure/round_phases.cpp); the CUDA
// backend (device/runner.cu) implements both with kernels, and the program
// hands it down (RunConfig::backend). Nothing here needs a CUDA header, so a
// test can drive the harness with a backend of its own.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "heapbench/case.hpp"
#include "heapbench/cuda_error.hpp"  // DeviceError: a failed device call
#include "measure/iteration_result.hpp"
#include "measure/metrics.hpp"
#include "measure/reducer.hpp"

namespace heapbench {

// What calling an allocator costs the kernels that call it: over every kernel
// heapbench launched in a round's allocate phase (for_each_thread's; a
// library's own kernels, such as CUB's scan, are not seen), the most registers
// and local memory per thread and the least occupancy (resident threads per SM
// at 256 threads per block / the SM's most), and the per-thread stack CUDA
// reserved then (cudaLimitStackSize). docs/metrics.md, "What calling malloc costs".
struct KernelCost {
  int kernels = 0;  // kernels seen; 0: nothing recorded
  int regs = 0;
  std::uint64_t local_bytes = 0;
  std::uint64_t stack_bytes = 0;
  double occupancy = 1.0;
};

// One round of a case, in the phases the harness names on the timeline. The
// harness enqueues up to max_batch() rounds (begin, allocate, use, release
// each), then collect() waits once and reports them all; the batches it keeps
// as measurements go to the reducer the round made, which writes the pattern's
// counters (reducer.hpp).
class Round {
 public:
  virtual ~Round() = default;
  virtual void begin_batch() {}           // zero the counters a batch accumulates (untimed)
  virtual void begin() = 0;               // per round: reset arena and deadline (untimed)
  virtual void allocate() = 0;            // the timed launch: allocating (printf's: printing)
  virtual void use() {}                   // write and read back every byte
  virtual void release() {}               // the timed freeing launch
  // Wait for the GPU, then any untimed work the host drives between launches
  // (capacity's refills, printf's drain), and read the batch's counters and times.
  virtual IterationResult collect() = 0;
  virtual bool has_use_phase() const { return true; }   // alloca and churn use inside allocate()
  virtual bool has_free_phase() const { return true; }  // alloca frees by returning
  // A new one per case: accumulates the case's accepted batches and writes the
  // pattern's counters. Default: the allocation counters (allocation_reducer).
  virtual std::unique_ptr<Reducer> reducer() const { return allocation_reducer(); }
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
  // Seconds of one reset of the allocator's state between rounds (its owner's
  // reset(), the device waited for before and after); negative where the round
  // has no allocator state to reset. Called once per case, between rounds.
  virtual double reset_seconds() { return -1; }
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
  // The case's limit (Case::limit_bytes): sets the heap to `bytes`, resetting
  // the device when it changes. For printf the limit is its FIFO, which like
  // the heap can change only after a reset: the round sets the FIFO itself.
  virtual Heap ensure_limit(std::uint64_t bytes) = 0;
  // After a failed call: the next ensure_limit() starts from a fresh context.
  virtual void invalidate() = 0;
  // Bytes the heap hands out as kCapacityProbeBlock blocks right now.
  virtual std::uint64_t probe_capacity(std::uint64_t heap_bytes) = 0;
  // Create after ensure_limit(): a reset invalidates a round's device memory.
  virtual std::unique_ptr<Round> make_round(const Case& c, double kernel_budget_s) = 0;
  // Around a batch of rounds: with `hold`, the stream waits behind a blocking
  // launch until end_batch(), so the batch's launches run back to back and an
  // event pair times its kernel, not the host's launch latency (nvbench's
  // "blocking kernel"). Both stamp the SM clock. end_batch() waits for the GPU.
  virtual void begin_batch(bool /*hold*/) {}
  virtual BatchTiming end_batch() { return {}; }
  // The SM clock the device is rated for (its peak), MHz; 0 unknown.
  virtual double rated_sm_mhz() const { return 0; }
  // While `into` is set, every kernel heapbench launches adds its cost to it
  // (KernelCost); nullptr stops. A backend without kernels records nothing.
  virtual void watch_kernels(KernelCost* /*into*/) {}
  // Waits for everything enqueued (a set-up's device work, to time it).
  virtual void synchronize() {}
};

inline constexpr std::uint64_t kCapacityProbeBlock = 64 * 1024;

}  // namespace heapbench
