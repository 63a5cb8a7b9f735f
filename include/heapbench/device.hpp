#pragma once
// Host-facing interface of the CUDA side. No CUDA type appears here, so the
// harness (bench/, built by the host compiler) and the tests include it freely.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "heapbench/case.hpp"
#include "heapbench/metrics.hpp"

namespace heapbench {

// A failed CUDA call: message has the call's text, file, line and CUDA's error string.
struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// No usable CUDA device (no driver, no GPU, index out of range).
struct NoDeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  int sm_clock_khz = 0;      // peak SM clock the driver reports
  int mem_clock_khz = 0;     // peak memory clock the driver reports
  std::uint64_t total_memory = 0;
  int driver_version = 0;    // cudaDriverGetVersion, e.g. 13000
  int runtime_version = 0;   // cudaRuntimeGetVersion
};

// Throws NoDeviceError with a one-line reason when `index` is not a usable device.
DeviceInfo probe_device(int index);

// Owns cudaLimitMallocHeapSize for one device. CUDA refuses to change the limit
// once a kernel that calls malloc has run (cudaErrorInvalidValue, seen on an H200
// with CUDA 13.0), so a change of size resets the device; a reset destroys every
// allocation, event and stream of the context, so callers create theirs after
// ensure_heap().
class HeapSession {
 public:
  explicit HeapSession(int device);
  HeapSession(const HeapSession&) = delete;
  HeapSession& operator=(const HeapSession&) = delete;

  // Makes the heap limit `bytes` and returns the limit the device reports.
  std::uint64_t ensure_heap(std::uint64_t bytes);
  // After a CUDA error: the next ensure_heap() resets even if the size is unchanged,
  // so a sticky error does not poison later cases.
  void invalidate() { dirty_ = true; }
  int device() const { return device_; }
  int resets() const { return resets_; }

 private:
  int device_;
  std::uint64_t current_ = 0;  // 0: not set by us yet
  std::uint64_t reported_ = 0;
  bool dirty_ = false;
  int resets_ = 0;
};

// Largest number of bytes the device heap hands out as 64 KiB blocks right
// now (fill with malloc until NULL, then free all). Compared before and after a
// case, it shows whether the case left the heap smaller (a leak).
std::uint64_t probe_heap_capacity(std::uint64_t heap_bytes);
inline constexpr std::uint64_t kCapacityProbeBlock = 64 * 1024;

// What one round of a case observed, beyond the tally its figures come from.
struct IterationResult {
  Tally tally;
  double timed_seconds = 0.0;     // GPU time of the timed kernels: the iteration's manual time
  std::uint64_t not_started = 0;  // calls (or churn threads) that found the kernel budget spent
  std::uint64_t misaligned = 0;   // pointers not aligned as the API promises
  std::uint64_t corrupted = 0;    // blocks that did not read back what was written
  std::string fault;              // any other failed check, in words

  // Empty when the round is a valid measurement; otherwise why it is not.
  std::string problem(double kernel_budget_s) const;
};

// Runs rounds of one case (pattern x API x size x align x threads) on the
// current device. Create it after HeapSession::ensure_heap(): a device reset
// invalidates it. Throws std::invalid_argument for an unsupported pair and
// CudaError for a failed CUDA call.
class CaseRunner {
 public:
  CaseRunner(const Case& c, double kernel_budget_s);
  ~CaseRunner();
  CaseRunner(const CaseRunner&) = delete;
  CaseRunner& operator=(const CaseRunner&) = delete;

  IterationResult run_once();
  bool has_free_phase() const;  // alloca frees by returning: no free kernel to time
  bool times_use() const;       // cross_kernel times its use launch as a phase

  struct Impl {
    virtual ~Impl() = default;
    virtual IterationResult run_once() = 0;
    virtual bool has_free_phase() const { return true; }
    virtual bool times_use() const { return false; }
  };

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace heapbench
