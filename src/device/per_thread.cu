// per_thread: every thread allocates its own block, uses it, and frees it.
//
// Workload: N threads each call the API once for `size` bytes in one kernel
// (timed with CUDA events), two more launches write a pattern unique to the
// owner into every byte and read it back (untimed: catches overlapping or
// unwritable blocks), and one more kernel frees every block (timed).
//
// Counters (bench/per_thread.cpp puts them in the JSON):
//   allocs_per_s  successful allocations per second of allocating-kernel time
//   frees_per_s   frees per second of freeing-kernel time
//   bytes_per_s   bytes successfully allocated per second of allocating-kernel time
//   fail_rate     NULL returns / allocation attempts
//   heap_bytes    cudaLimitMallocHeapSize as the device reports it
#include <fmt/format.h>

#include <cstdint>

#include "allocators.cuh"
#include "cuda_check.cuh"
#include "device_util.cuh"
#include "heapbench/device.hpp"
#include "heapbench/nvtx.hpp"

namespace heapbench {
namespace {

using detail::global_thread_id;
using detail::pattern_word;
using detail::warp_add;

constexpr unsigned kBlock = 256;

// Written into a table slot by a thread that found the deadline passed; no
// allocator returns an address of 1.
__device__ void* const kNotStarted = reinterpret_cast<void*>(std::uintptr_t{1});

struct DeviceStats {
  unsigned long long successes;
  unsigned long long not_started;
  unsigned long long misaligned;
  unsigned long long corrupted;
  std::uint64_t deadline_ns;
};

__global__ void set_deadline(DeviceStats* stats, std::uint64_t budget_ns) {
  stats->deadline_ns = detail::globaltimer_ns() + budget_ns;
}

template <class Api>
__global__ void alloc_kernel(void** table, std::uint64_t n, std::size_t size, const DeviceStats* stats) {
  const std::uint64_t tid = global_thread_id();
  if (tid >= n) return;
  // The only instrumentation in the timed kernel: one clock read and one load,
  // so a pathological case stops starting new mallocs at the budget.
  if (detail::globaltimer_ns() > stats->deadline_ns) {
    table[tid] = kNotStarted;
    return;
  }
  table[tid] = Api::allocate(size);
}

template <class Api>
__global__ void write_kernel(void* const* table, std::uint64_t n, std::size_t size, DeviceStats* stats) {
  const std::uint64_t tid = global_thread_id();
  if (tid >= n) return;
  void* p = table[tid];
  const bool not_started = p == kNotStarted;
  const bool ok = p != nullptr && !not_started;
  const bool misaligned = ok && reinterpret_cast<std::uintptr_t>(p) % Api::alignment != 0;
  warp_add(&stats->successes, ok);
  warp_add(&stats->not_started, not_started);
  warp_add(&stats->misaligned, misaligned);
  if (!ok || misaligned) return;
  auto* words = static_cast<std::uint32_t*>(p);
  const std::size_t nwords = size / 4;
  for (std::size_t i = 0; i < nwords; ++i) words[i] = pattern_word(tid, i);
  auto* bytes = static_cast<unsigned char*>(p);
  for (std::size_t i = nwords * 4; i < size; ++i) bytes[i] = static_cast<unsigned char>(pattern_word(tid, i));
}

template <class Api>
__global__ void check_kernel(void* const* table, std::uint64_t n, std::size_t size, DeviceStats* stats) {
  const std::uint64_t tid = global_thread_id();
  if (tid >= n) return;
  void* p = table[tid];
  const bool ok = p != nullptr && p != kNotStarted && reinterpret_cast<std::uintptr_t>(p) % Api::alignment == 0;
  bool bad = false;
  if (ok) {
    const auto* words = static_cast<const std::uint32_t*>(p);
    const std::size_t nwords = size / 4;
    for (std::size_t i = 0; i < nwords && !bad; ++i) bad = words[i] != pattern_word(tid, i);
    const auto* bytes = static_cast<const unsigned char*>(p);
    for (std::size_t i = nwords * 4; i < size && !bad; ++i) {
      bad = bytes[i] != static_cast<unsigned char>(pattern_word(tid, i));
    }
  }
  warp_add(&stats->corrupted, bad);
}

template <class Api>
__global__ void free_kernel(void* const* table, std::uint64_t n) {
  const std::uint64_t tid = global_thread_id();
  if (tid >= n) return;
  void* p = table[tid];
  if (p != nullptr && p != kNotStarted) Api::deallocate(p);
}

struct Kernels {
  void (*alloc)(void**, std::uint64_t, std::size_t, const DeviceStats*);
  void (*write)(void* const*, std::uint64_t, std::size_t, DeviceStats*);
  void (*check)(void* const*, std::uint64_t, std::size_t, DeviceStats*);
  void (*free)(void* const*, std::uint64_t);
};

template <class Api>
constexpr Kernels kernels_for() {
  return {alloc_kernel<Api>, write_kernel<Api>, check_kernel<Api>, free_kernel<Api>};
}

Kernels select_kernels(const std::string& api) {
  if (api == alloc::Malloc::name) return kernels_for<alloc::Malloc>();
  throw std::invalid_argument(fmt::format("per_thread: unknown api '{}'", api));
}

}  // namespace

bool per_thread_supports(const std::string& api) { return api == alloc::Malloc::name; }

struct PerThreadRunner::Impl {
  Case c;
  std::uint64_t budget_ns;
  Kernels k;
  void** table = nullptr;
  DeviceStats* stats = nullptr;
  cudaEvent_t ev[4] = {};
  unsigned grid = 0;

  ~Impl() {
    // Destructors must not throw; a failure here surfaces at the next checked call.
    for (auto e : ev) if (e) cudaEventDestroy(e);
    if (stats) cudaFree(stats);
    if (table) cudaFree(table);
    (void)cudaGetLastError();  // don't leave a failed free for the next launch check to report
  }
};

PerThreadRunner::PerThreadRunner(const Case& c, double kernel_budget_s) : impl_(std::make_unique<Impl>()) {
  impl_->c = c;
  impl_->budget_ns = static_cast<std::uint64_t>(kernel_budget_s * 1e9);
  impl_->k = select_kernels(c.api);
  impl_->grid = static_cast<unsigned>((c.threads + kBlock - 1) / kBlock);
  HB_CUDA_CHECK(cudaMalloc(&impl_->table, c.threads * sizeof(void*)));
  HB_CUDA_CHECK(cudaMalloc(&impl_->stats, sizeof(DeviceStats)));
  for (auto& e : impl_->ev) HB_CUDA_CHECK(cudaEventCreate(&e));
}

PerThreadRunner::~PerThreadRunner() = default;

IterationResult PerThreadRunner::run_once() {
  Impl& m = *impl_;
  const auto n = m.c.threads;
  const auto size = static_cast<std::size_t>(m.c.size);
  HB_CUDA_CHECK(cudaMemset(m.stats, 0, sizeof(DeviceStats)));
  {
    nvtx::range r{nvtx::attrs("alloc kernel", nvtx::Phase::alloc)};
    set_deadline<<<1, 1>>>(m.stats, m.budget_ns);
    HB_CUDA_CHECK_LAUNCH();
    HB_CUDA_CHECK(cudaEventRecord(m.ev[0]));
    m.k.alloc<<<m.grid, kBlock>>>(m.table, n, size, m.stats);
    HB_CUDA_CHECK_LAUNCH();
    HB_CUDA_CHECK(cudaEventRecord(m.ev[1]));
    HB_CUDA_CHECK(cudaEventSynchronize(m.ev[1]));
  }
  {
    nvtx::range r{nvtx::attrs("use kernel", nvtx::Phase::use)};
    m.k.write<<<m.grid, kBlock>>>(m.table, n, size, m.stats);
    HB_CUDA_CHECK_LAUNCH();
    m.k.check<<<m.grid, kBlock>>>(m.table, n, size, m.stats);
    HB_CUDA_CHECK_LAUNCH();
    HB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  {
    nvtx::range r{nvtx::attrs("free kernel", nvtx::Phase::free_)};
    HB_CUDA_CHECK(cudaEventRecord(m.ev[2]));
    m.k.free<<<m.grid, kBlock>>>(m.table, n);
    HB_CUDA_CHECK_LAUNCH();
    HB_CUDA_CHECK(cudaEventRecord(m.ev[3]));
    HB_CUDA_CHECK(cudaEventSynchronize(m.ev[3]));
  }
  DeviceStats s{};
  {
    nvtx::range r{nvtx::attrs("verify", nvtx::Phase::verify)};
    HB_CUDA_CHECK(cudaMemcpy(&s, m.stats, sizeof s, cudaMemcpyDeviceToHost));
  }
  float alloc_ms = 0, free_ms = 0;
  HB_CUDA_CHECK(cudaEventElapsedTime(&alloc_ms, m.ev[0], m.ev[1]));
  HB_CUDA_CHECK(cudaEventElapsedTime(&free_ms, m.ev[2], m.ev[3]));

  IterationResult r;
  r.not_started = s.not_started;
  r.misaligned = s.misaligned;
  r.corrupted = s.corrupted;
  r.tally.attempts = n - s.not_started;
  r.tally.successes = s.successes;
  r.tally.bytes = s.successes * m.c.size;
  r.tally.frees = s.successes;
  r.tally.alloc_seconds = alloc_ms * 1e-3;
  r.tally.free_seconds = free_ms * 1e-3;
  return r;
}

}  // namespace heapbench
