#include "kernels.cuh"

#include <algorithm>

#include "cuda_check.cuh"

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

}  // namespace heapbench::detail
