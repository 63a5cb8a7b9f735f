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
// The Recorder is heapbench/trace_recorder.hpp's (host C++). The buffer is a
// __device__ variable of each translation unit that includes this header (no
// relocatable device code needed); with HEAPBENCH_TRACE=1 each such file
// registers itself at start-up and a Recorder points every one at its buffer,
// so a launch may be bracketed in any file of the program. end() says in one
// line when a launch begun with its shape recorded no event. A launch whose
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

#include "heapbench/trace_format.hpp"
#include "heapbench/trace_recorder.hpp"  // Recorder, the host side; HEAPBENCH_TRACE defaults to 0

namespace heapbench::trace {

namespace detail {

// One per translation unit (internal linkage); with HEAPBENCH_TRACE=1 the file
// registers the function that sets it, which every Recorder calls
// (heapbench/trace_recorder.hpp).
static __device__ DeviceLog g_log;

#if HEAPBENCH_TRACE
namespace {
void bind_log_this_unit(const DeviceLog& log) {
  const cudaError_t e = cudaMemcpyToSymbol(g_log, &log, sizeof log);
  if (e != cudaSuccess) throw std::runtime_error(std::string("heapbench::trace: binding the trace buffer: ") + cudaGetErrorString(e));
}
[[maybe_unused]] const bool g_log_registered = (log_binders().push_back(&bind_log_this_unit), true);
}  // namespace
#endif

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

}  // namespace heapbench::trace
