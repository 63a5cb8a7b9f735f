#pragma once
// Recording your kernels' allocations for `heapbench replay` (docs/trace.md).
//
// In your kernels, call heapbench::trace::malloc / free (and aligned_malloc,
// new_array / delete_array) where you called malloc / free. Built with
// HEAPBENCH_TRACE=1 (-DHEAPBENCH_TRACE=1, or a define before this include)
// each call also appends one event (launch, block, thread, operation, size,
// alignment, the address returned or freed, %globaltimer) to a device buffer;
// without it they are the plain calls and nothing is recorded. On the host, a
// Recorder brackets each launch and writes the trace file:
//
//   heapbench::trace::Recorder rec("my.hbt");       // a buffer of 2^22 events by default
//   rec.begin(grid, block);
//   my_kernel<<<grid, block>>>(...);
//   rec.end();                                      // waits, appends the launch; returns events dropped
//   rec.finish();                                   // the file appears under its name (also at destruction)
//
// The buffer is a __device__ variable of the translation unit that includes
// this header: begin/end a launch in the .cu file whose kernels record (with
// relocatable device code, one file per recorded kernel set). A kernel of
// another .cu file records into that file's buffer, which no Recorder set up:
// nothing, so end() prints one line for a launch that recorded no event. A launch whose
// events overflow the buffer keeps the first ones and says how many it
// dropped (end() returns it and prints one line); `heapbench replay` refuses a
// trace that dropped events. Recording costs each call an atomic, a clock read
// and a 40-byte store (docs/trace.md gives the overhead).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "heapbench/atomic_file.hpp"
#include "heapbench/trace_format.hpp"

#ifndef HEAPBENCH_TRACE
#define HEAPBENCH_TRACE 0
#endif

namespace heapbench::trace {

namespace detail {

struct DeviceLog {
  Event* events;
  unsigned long long* count;
  unsigned long long capacity;
};

// One per translation unit (internal linkage): the Recorder of this file sets it.
static __device__ DeviceLog g_log;

__device__ inline void record(std::uint32_t op, const void* p, std::uint64_t size, std::uint32_t align) {
  const DeviceLog log = g_log;
  if (log.events == nullptr) return;
  const unsigned long long i = atomicAdd(log.count, 1ull);
  if (i >= log.capacity) return;  // counted, not kept: the launch's dropped events
  std::uint64_t clock;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(clock));
  Event e;
  e.address = reinterpret_cast<std::uintptr_t>(p);
  e.size = size;
  e.clock = clock;
  e.block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  e.thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  e.align = align;
  e.op = op;
  log.events[i] = e;
}

}  // namespace detail

// A release is recorded before the call (its address may be handed out again
// at once), an allocation after it (with what it returned).
__device__ inline void* malloc(std::size_t size) {
  void* p = ::malloc(size);
  if (HEAPBENCH_TRACE) detail::record(kMalloc, p, size, 0);
  return p;
}
__device__ inline void free(void* p) {
  if (HEAPBENCH_TRACE) detail::record(kFree, p, 0, 0);
  ::free(p);
}
__device__ inline void* aligned_malloc(std::size_t size, std::size_t align) {
  void* p = __nv_aligned_device_malloc(size, align);
  if (HEAPBENCH_TRACE) detail::record(kAligned, p, size, static_cast<std::uint32_t>(align));
  return p;
}
template <class T>
__device__ inline T* new_array(std::size_t n) {
  T* p = new T[n];
  if (HEAPBENCH_TRACE) detail::record(kNew, p, n * sizeof(T), 0);
  return p;
}
template <class T>
__device__ inline void delete_array(T* p) {
  if (HEAPBENCH_TRACE) detail::record(kDelete, p, 0, 0);
  delete[] p;
}

// The host side: the device buffer, one launch record per begin()/end(), and
// the file (written to PATH.partial by heapbench/atomic_file.hpp, never through
// a link, renamed to PATH by finish()). Throws std::runtime_error for a failed
// CUDA call or write. With HEAPBENCH_TRACE=0
// it allocates nothing and writes no file.
class Recorder {
 public:
  explicit Recorder(std::string path, unsigned long long capacity = 1ull << 22)
      : path_(std::move(path)), capacity_(capacity) {
    if (!HEAPBENCH_TRACE) return;
    check(cudaMalloc(&events_, capacity_ * sizeof(Event)), "cudaMalloc of the trace buffer");
    check(cudaMalloc(&count_, sizeof(unsigned long long)), "cudaMalloc of the trace counter");
    const detail::DeviceLog log{events_, count_, capacity_};
    check(cudaMemcpyToSymbol(detail::g_log, &log, sizeof log), "cudaMemcpyToSymbol of the trace buffer");
    try {
      file_ = std::make_unique<AtomicFile>(path_, ".partial");
    } catch (const WriteError& e) {
      throw std::runtime_error(std::string("heapbench::trace: ") + e.what());
    }
    FileHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kVersion;
    h.header_bytes = sizeof(FileHeader);
    h.launch_header_bytes = sizeof(LaunchHeader);
    h.event_bytes = sizeof(Event);
    size_t heap = 0;
    if (cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize) == cudaSuccess) h.heap_bytes = heap;
    int device = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
      std::strncpy(h.device, prop.name, sizeof h.device);
    }
    write(&h, sizeof h);
  }
  ~Recorder() {
    try {
      finish();
    } catch (...) {
    }
    if (events_ != nullptr) cudaFree(events_);
    if (count_ != nullptr) cudaFree(count_);
  }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Before a launch: its shape, and an empty buffer.
  void begin(dim3 grid, dim3 block) {
    if (!HEAPBENCH_TRACE) return;
    grid_ = grid;
    block_ = block;
    check(cudaMemset(count_, 0, sizeof(unsigned long long)), "cudaMemset of the trace counter");
  }
  // After it: waits for the device, appends the launch's record, and returns
  // the events the buffer had no room for (printing one line when there were any,
  // and one when the launch recorded none: its kernels are in another translation unit,
  // or called none of the recording functions).
  unsigned long long end() {
    if (!HEAPBENCH_TRACE) return 0;
    check(cudaDeviceSynchronize(), "the recorded launch");
    unsigned long long made = 0;
    check(cudaMemcpy(&made, count_, sizeof made, cudaMemcpyDeviceToHost), "cudaMemcpy of the trace counter");
    const unsigned long long kept = made < capacity_ ? made : capacity_;
    std::vector<Event> events(kept);
    if (kept > 0) {
      check(cudaMemcpy(events.data(), events_, kept * sizeof(Event), cudaMemcpyDeviceToHost), "cudaMemcpy of the trace");
    }
    LaunchHeader h{kLaunchTag, launches_++, {grid_.x, grid_.y, grid_.z}, {block_.x, block_.y, block_.z}, kept, made - kept};
    write(&h, sizeof h);
    write(events.data(), kept * sizeof(Event));
    if (made == 0) {
      std::fprintf(stderr, "heapbench::trace: launch %u recorded no event: a kernel records only into the buffer "
                           "of the .cu file whose Recorder brackets it (heapbench/trace.cuh, docs/trace.md)\n",
                   h.launch);
    }
    if (made > kept) {
      std::fprintf(stderr, "heapbench::trace: launch %u made %llu events, the buffer holds %llu: %llu dropped "
                           "(give Recorder a larger capacity)\n", h.launch, made, capacity_, made - kept);
    }
    return made - kept;
  }
  // Closes the file and renames it into place; later calls do nothing.
  void finish() {
    if (file_ == nullptr) return;
    const std::unique_ptr<AtomicFile> file = std::move(file_);
    try {
      file->commit();
    } catch (const WriteError& e) {
      throw std::runtime_error(std::string("heapbench::trace: ") + e.what());
    }
  }

 private:
  std::string path_;
  unsigned long long capacity_;
  Event* events_ = nullptr;
  unsigned long long* count_ = nullptr;
  std::unique_ptr<AtomicFile> file_;  // null once finished (or with HEAPBENCH_TRACE=0)
  dim3 grid_, block_;
  std::uint32_t launches_ = 0;

  static void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess) throw std::runtime_error(std::string("heapbench::trace: ") + what + ": " + cudaGetErrorString(err));
  }
  void write(const void* p, std::size_t bytes) {
    if (file_ == nullptr) throw std::runtime_error("heapbench::trace: " + path_ + " is finished: begin a new Recorder");
    try {
      file_->write(p, bytes);
    } catch (const WriteError& e) {
      throw std::runtime_error(std::string("heapbench::trace: ") + e.what());
    }
  }
};

}  // namespace heapbench::trace
