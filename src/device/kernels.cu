#include "device/kernels.cuh"

#include <algorithm>

#include "heapbench/cuda_check.cuh"

namespace heapbench::detail {

KernelCost* g_kernel_watch = nullptr;

void note_kernel_cost(const void* kernel, KernelCost& into) {
  cudaFuncAttributes attr{};
  HB_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  int blocks = 0, device = 0, per_sm = 0;
  HB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, static_cast<int>(kThreadsPerBlock), 0));
  HB_CUDA_CHECK(cudaGetDevice(&device));
  HB_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  size_t stack = 0;
  HB_CUDA_CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  const double occupancy = per_sm > 0 ? static_cast<double>(blocks) * kThreadsPerBlock / per_sm : 0.0;
  into.regs = std::max(into.regs, attr.numRegs);
  into.local_bytes = std::max<std::uint64_t>(into.local_bytes, attr.localSizeBytes);
  into.stack_bytes = std::max<std::uint64_t>(into.stack_bytes, stack);
  into.occupancy = into.kernels == 0 ? occupancy : std::min(into.occupancy, occupancy);
  ++into.kernels;
}

__global__ void set_deadline(DeviceStats* stats, std::uint64_t budget_ns) {
  stats->deadline_ns = globaltimer_ns() + budget_ns;
}

namespace {

__device__ void write_slice(void* const* table, std::uint64_t n, std::uint64_t slice, unsigned call_stride,
                            std::uint64_t alignment, bool mixed, DeviceStats* stats) {
  const std::uint64_t tid = global_thread_id();
  if (tid >= n) return;
  if (mixed) slice = mixed_size(tid, slice);
  void* p = table[tid];
  const bool caller = tid % call_stride == 0;
  const bool ok = is_block(p);
  const bool misaligned = caller && ok && reinterpret_cast<std::uintptr_t>(p) % alignment != 0;
  warp_add(&stats->attempts, caller && p != kNotStarted);
  warp_add(&stats->successes, caller && ok);
  warp_add(&stats->not_started, caller && p == kNotStarted);
  warp_add(&stats->misaligned, misaligned);
  if (!ok) return;
  if (mixed && caller) atomicAdd(&stats->bytes, static_cast<unsigned long long>(slice));
  auto* words = static_cast<std::uint32_t*>(p);
  const bool word_aligned = reinterpret_cast<std::uintptr_t>(p) % 4 == 0;
  const std::uint64_t nwords = word_aligned ? slice / 4 : 0;
  for (std::uint64_t i = 0; i < nwords; ++i) words[i] = pattern_word(tid, i);
  auto* bytes = static_cast<unsigned char*>(p);
  for (std::uint64_t i = nwords * 4; i < slice; ++i) bytes[i] = static_cast<unsigned char>(pattern_word(tid, i));
}

__device__ void check_slice(void* const* table, std::uint64_t n, std::uint64_t slice, bool mixed, DeviceStats* stats) {
  const std::uint64_t tid = global_thread_id();
  if (tid >= n) return;
  if (mixed) slice = mixed_size(tid, slice);
  void* p = table[tid];
  bool bad = false;
  if (is_block(p)) {
    const auto* words = static_cast<const std::uint32_t*>(p);
    const bool word_aligned = reinterpret_cast<std::uintptr_t>(p) % 4 == 0;
    const std::uint64_t nwords = word_aligned ? slice / 4 : 0;
    for (std::uint64_t i = 0; i < nwords && !bad; ++i) bad = words[i] != pattern_word(tid, i);
    const auto* bytes = static_cast<const unsigned char*>(p);
    for (std::uint64_t i = nwords * 4; i < slice && !bad; ++i) {
      bad = bytes[i] != static_cast<unsigned char>(pattern_word(tid, i));
    }
  }
  warp_add(&stats->corrupted, bad);
}

}  // namespace

// The bodies return early for threads past n; span_end needs every thread.
__global__ void write_slices(void* const* table, std::uint64_t n, std::uint64_t slice, unsigned call_stride,
                             std::uint64_t alignment, bool mixed, DeviceStats* stats, KernelSpan* span) {
  span_begin(span);
  write_slice(table, n, slice, call_stride, alignment, mixed, stats);
  span_end(span);
}

__global__ void check_slices(void* const* table, std::uint64_t n, std::uint64_t slice, bool mixed, DeviceStats* stats,
                             KernelSpan* span) {
  span_begin(span);
  check_slice(table, n, slice, mixed, stats);
  span_end(span);
}

namespace {
constexpr unsigned kLanes = 32;
// Warps in flight: enough to fill an H200 (132 SMs x 64 warps) a few times
// over; each takes every warps-th slice.
constexpr std::uint64_t kMaxSliceWarps = 32768;

// write_slice's counters for one warp's slices, kept in registers until the end.
struct WarpSliceCounts {
  unsigned attempts = 0, successes = 0, not_started = 0, misaligned = 0;
  unsigned long long bytes = 0;
};

// The same tallies write_slice makes; every lane keeps them, only lane 0's are added.
__device__ __forceinline__ void count_slice(WarpSliceCounts& c, const void* p, std::uint64_t s, bool caller,
                                            std::uint64_t alignment, bool mixed) {
  const bool ok = is_block(p);
  c.attempts += caller && p != kNotStarted;
  c.successes += caller && ok;
  c.not_started += caller && p == kNotStarted;
  c.misaligned += caller && ok && reinterpret_cast<std::uintptr_t>(p) % alignment != 0;
  if (ok && mixed && caller) c.bytes += s;
}

// The warp's lanes stride through the slice together: whole words where p
// allows them, then the bytes left over.
__device__ __forceinline__ void fill_slice_by_warp(void* p, std::uint64_t owner, std::uint64_t s, unsigned lane) {
  auto* words = static_cast<std::uint32_t*>(p);
  const std::uint64_t nwords = reinterpret_cast<std::uintptr_t>(p) % 4 == 0 ? s / 4 : 0;
  for (std::uint64_t i = lane; i < nwords; i += kLanes) words[i] = pattern_word(owner, i);
  auto* bytes = static_cast<unsigned char*>(p);
  for (std::uint64_t i = nwords * 4 + lane; i < s; i += kLanes) bytes[i] = static_cast<unsigned char>(pattern_word(owner, i));
}

// Every lane calls warp_add; only lane 0 brings its counts.
__device__ __forceinline__ void add_warp_counts(DeviceStats* stats, const WarpSliceCounts& c, unsigned lane) {
  const bool counts = lane == 0;
  warp_add(&stats->attempts, counts ? c.attempts : 0);
  warp_add(&stats->successes, counts ? c.successes : 0);
  warp_add(&stats->not_started, counts ? c.not_started : 0);
  warp_add(&stats->misaligned, counts ? c.misaligned : 0);
  if (counts && c.bytes != 0) atomicAdd(&stats->bytes, c.bytes);
}
}  // namespace

unsigned warp_slices_grid(std::uint64_t n) {
  const std::uint64_t warps = n < kMaxSliceWarps ? n : kMaxSliceWarps;
  return static_cast<unsigned>((warps * kLanes + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

// Lane 0 of each warp counts its slices in registers; one warp_add per counter
// per warp at the end (write_slice's counts, not one atomic per slice).
__global__ void write_slices_by_warp(void* const* table, std::uint64_t n, std::uint64_t slice, unsigned call_stride,
                                     std::uint64_t alignment, bool mixed, DeviceStats* stats) {
  const unsigned lane = threadIdx.x % kLanes;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * blockDim.x / kLanes;
  WarpSliceCounts counts;
  for (std::uint64_t owner = global_thread_id() / kLanes; owner < n; owner += warps) {  // the same for the whole warp
    const std::uint64_t s = mixed ? mixed_size(owner, slice) : slice;
    void* p = table[owner];
    count_slice(counts, p, s, owner % call_stride == 0, alignment, mixed);
    if (is_block(p)) fill_slice_by_warp(p, owner, s, lane);
  }
  add_warp_counts(stats, counts, lane);
}

__global__ void check_slices_by_warp(void* const* table, std::uint64_t n, std::uint64_t slice, bool mixed,
                                     DeviceStats* stats) {
  const unsigned lane = threadIdx.x % kLanes;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * blockDim.x / kLanes;
  unsigned corrupted = 0;
  for (std::uint64_t owner = global_thread_id() / kLanes; owner < n; owner += warps) {  // the same for the whole warp
    const std::uint64_t s = mixed ? mixed_size(owner, slice) : slice;
    const void* p = table[owner];
    if (!is_block(p)) continue;
    bool bad = false;
    const auto* words = static_cast<const std::uint32_t*>(p);
    const std::uint64_t nwords = reinterpret_cast<std::uintptr_t>(p) % 4 == 0 ? s / 4 : 0;
    for (std::uint64_t i = lane; i < nwords && !bad; i += kLanes) bad = words[i] != pattern_word(owner, i);
    const auto* bytes = static_cast<const unsigned char*>(p);
    for (std::uint64_t i = nwords * 4 + lane; i < s && !bad; i += kLanes) {
      bad = bytes[i] != static_cast<unsigned char>(pattern_word(owner, i));
    }
    corrupted += __any_sync(0xffffffffu, bad) ? 1 : 0;
  }
  warp_add(&stats->corrupted, lane == 0 ? corrupted : 0);
}

}  // namespace heapbench::detail
