#pragma once
// What every pattern shares: the generic kernel that runs an extended
// __device__ lambda per thread, the counters, the deadline, and the
// verification launches (write a pattern unique to each owner into every byte,
// read it back in a later launch so overlapping blocks are caught).
#include <cstdint>

#include "device/device_util.cuh"
#include "measure/backend.hpp"  // KernelCost
#include "cases/mixed_sizes.hpp"

namespace heapbench::detail {

inline constexpr unsigned kThreadsPerBlock = 256;

// Written into a table slot by a caller that found the deadline passed; no
// allocator returns an address of 1.
__device__ void* const kNotStarted = reinterpret_cast<void*>(std::uintptr_t{1});

__device__ __forceinline__ bool is_block(const void* p) { return p != nullptr && p != kNotStarted; }

struct DeviceStats {
  unsigned long long attempts;
  unsigned long long successes;
  unsigned long long frees;
  unsigned long long bytes;
  unsigned long long not_started;
  unsigned long long misaligned;
  unsigned long long corrupted;
  std::uint64_t deadline_ns;
};

// When a timed kernel ran, by %globaltimer, as Nsight Systems times a kernel:
// from the first block's start to the last block's end. Stored so that one
// memset of 0xff bytes prepares it and both fields move by atomicMin: `start`
// is the earliest block start, `not_end` the complement of the latest block end.
struct KernelSpan {
  unsigned long long start;
  unsigned long long not_end;
};

__device__ __forceinline__ void span_begin(KernelSpan* span) {
  if (span != nullptr && threadIdx.x == 0) atomicMin(&span->start, static_cast<unsigned long long>(globaltimer_ns()));
}
// Every thread of the block must call it (it waits for the whole block).
__device__ __forceinline__ void span_end(KernelSpan* span) {
  if (span == nullptr) return;
  __syncthreads();
  if (threadIdx.x == 0) atomicMin(&span->not_end, ~static_cast<unsigned long long>(globaltimer_ns()));
}

// One clock read and one load: the only instrumentation in a timed kernel.
__device__ __forceinline__ bool before_deadline(const DeviceStats* s) { return globaltimer_ns() <= s->deadline_ns; }

__global__ void set_deadline(DeviceStats* stats, std::uint64_t budget_ns);

// Every launched thread calls f(tid, tid < n): patterns that use warp shuffles
// or __syncthreads need the threads past n to take part too. Extended-lambda
// rules shape every caller: the lambda is defined in a host function (not in a
// class's private member or an unnamed namespace), captures by value only (no
// references, no implicit `this`), and its type is deduced here, not spelled.
// With `span`, the launch stamps its own start and end (KernelSpan).
// `f` is __grid_constant__: a call that takes the address of what it captured
// (a member function of an allocator's handle that is not inlined) reads it in
// the parameter space, where without it every thread first copied it to its
// local memory (slab: 88 B a thread, issue 55, step 11f). Three blocks of
// kThreadsPerBlock an SM at least (37.5 % occupancy): without the bound slab's
// kernels took 84 registers and ran at 25 % (step 11g).
template <class F>
__global__ void __launch_bounds__(kThreadsPerBlock, 3) for_each_thread(std::uint64_t n, const __grid_constant__ F f, KernelSpan* span) {
  span_begin(span);
  const std::uint64_t tid = global_thread_id();
  f(tid, tid < n);
  span_end(span);
}

// The cost the backend is watching with (Backend::watch_kernels), or nullptr;
// note_kernel_cost adds one kernel's attributes and occupancy at
// kThreadsPerBlock threads per block to it (kernels.cu).
extern KernelCost* g_kernel_watch;
void note_kernel_cost(const void* kernel, KernelCost& into);
template <class F>
void note_for_each_thread() {
  if (g_kernel_watch != nullptr) note_kernel_cost(reinterpret_cast<const void*>(&for_each_thread<F>), *g_kernel_watch);
}

// Verification over a per-thread table of slices of `slice` bytes. Threads
// whose tid is a multiple of call_stride made the allocation call: they count
// attempts, successes and alignment; every thread writes and checks its slice.
// With `mixed`, thread tid's slice is mixed_size(tid, slice) bytes and callers
// add their bytes to stats->bytes.
__global__ void write_slices(void* const* table, std::uint64_t n, std::uint64_t slice, unsigned call_stride,
                             std::uint64_t alignment, bool mixed, DeviceStats* stats, KernelSpan* span);
__global__ void check_slices(void* const* table, std::uint64_t n, std::uint64_t slice, bool mixed, DeviceStats* stats,
                             KernelSpan* span);

// The same writes, checks and counts, a warp to a slice: its lanes take
// consecutive words, so each store and load is one coalesced access instead of
// 32 slices' worth of lines. Same words, same counters; untimed verification
// of slices of at least kWarpSliceBytes only (a pattern that times its use
// keeps the per-thread kernels above: a thread using its own block is what it
// measures). Launched with warp_slices_grid(n) blocks of kThreadsPerBlock.
inline constexpr std::uint64_t kWarpSliceBytes = 256;
unsigned warp_slices_grid(std::uint64_t n);
__global__ void write_slices_by_warp(void* const* table, std::uint64_t n, std::uint64_t slice, unsigned call_stride,
                                     std::uint64_t alignment, bool mixed, DeviceStats* stats);
__global__ void check_slices_by_warp(void* const* table, std::uint64_t n, std::uint64_t slice, bool mixed,
                                     DeviceStats* stats);

}  // namespace heapbench::detail
