#pragma once
// Host-facing interface of the CUDA side. No CUDA type appears here, so the
// harness (built by the host compiler) and the tests include it freely.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "measure/backend.hpp"
#include "heapbench/case.hpp"
#include "heapbench/cuda_error.hpp"  // CudaError, which the device library throws

namespace heapbench {

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
  std::string pci_bus_id;    // cudaDeviceGetPCIBusId, "0000:41:00.0": how NVML finds the same GPU
};

// "the <MiB> MiB of device <index> (<name>)": the device's memory, as a refusal names it.
inline std::string memory_of(const DeviceInfo& d) {
  return "the " + std::to_string(d.total_memory >> 20) + " MiB of device " + std::to_string(d.index) + " (" + d.name + ")";
}

// Throws NoDeviceError with a one-line reason when `index` is not a usable device.
DeviceInfo probe_device(int index);

// NoDeviceError's line when cudaGetDeviceCount fails with the error of this
// name and text: in words a user acts on ("no NVIDIA driver, or one too old"
// for cudaErrorInsufficientDriver, which is what a machine without a driver
// answers), with the error's name kept for searching. Host code: tested without a GPU.
std::string no_device_reason(std::string_view error_name, std::string_view error_string);

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
  // After a CUDA error: the next ensure_heap() resets even if the size is unchanged.
  // On the H200 a sticky error (an illegal address) left the process unable to
  // create a new context at all (cudaErrorDevicesUnavailable for 30 s and more):
  // ensure_heap() then throws, and keeps throwing at once. Isolation (a new
  // process) is what recovers from that.
  void invalidate() { dirty_ = true; }
  int device() const { return device_; }
  int resets() const { return resets_; }

 private:
  int device_;
  std::uint64_t current_ = 0;  // 0: not set by us yet
  std::uint64_t reported_ = 0;
  bool dirty_ = false;
  int resets_ = 0;
  std::string lost_;  // why the device could not be brought back after a fault; then every call fails at once
};

// Largest number of bytes the device heap hands out as 64 KiB blocks right
// now (fill with malloc until NULL, then free all). Compared before and after a
// case, it shows whether the case left the heap smaller (a leak).
std::uint64_t probe_heap_capacity(std::uint64_t heap_bytes);

// The round of a case on the current device (pattern x API dispatch). Throws
// std::invalid_argument for an unsupported pair, std::runtime_error when an
// API misbehaves before measuring, CudaError for a failed CUDA call.
std::unique_ptr<Round> make_cuda_round(const Case& c, double kernel_budget_s);

// The APIs this device library has a handle type for (heap patterns, then call
// paths), in dispatch order. src/device/api_registry.cu checks at compile time
// that each matches its entry in cases/api_list.hpp.
std::vector<std::string> device_api_names();

// HeapSession + probe_heap_capacity + make_cuda_round behind the Backend seam.
std::unique_ptr<Backend> make_cuda_backend(int device);

}  // namespace heapbench
