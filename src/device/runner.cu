// The CUDA backend: picks the pattern's round for a case, the
// cuda::std::aligned_alloc argument-order check, latency conversion.
#include <fmt/format.h>

#include "device/batch_timing.cuh"
#include "device/round.cuh"

namespace heapbench {
namespace alloc {

#if HEAPBENCH_HAVE_CUDA_STD_ALIGNED
__global__ void cuda_std_aligned_probe(void** out) {
  void* p = CudaStdAligned{}.allocate(48, 4096);
  *out = p;
  if (p != nullptr) CudaStdAligned{}.deallocate(p);
}

std::string check_cuda_std_aligned_order() {
  detail::DeviceBuffer<void*> d(1);
  cuda_std_aligned_probe<<<1, 1>>>(d.get());
  HB_CUDA_CHECK_LAUNCH();
  void* p = nullptr;
  HB_CUDA_CHECK(cudaMemcpy(&p, d.get(), sizeof p, cudaMemcpyDeviceToHost));
  if (p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 4096 == 0) return {};
  return fmt::format("cuda::std::aligned_alloc (CCCL {}.{}.{}) does not take its arguments in the order heapbench "
                     "compiled in ({}); rebuild with -DHEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST={}",
                     CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION,
                     HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST ? "align, size" : "size, align",
                     HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST ? 0 : 1);
}
#endif

}  // namespace alloc

namespace detail {

double sm_cycles_per_ns() {
  int device = 0, khz = 0;
  HB_CUDA_CHECK(cudaGetDevice(&device));
  HB_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device));
  return khz * 1e-6;
}

std::vector<double> latencies_ns(const unsigned long long* device_cycles, std::uint64_t n, double cycles_per_ns) {
  std::vector<unsigned long long> cycles(n);
  HB_CUDA_CHECK(cudaMemcpy(cycles.data(), device_cycles, n * sizeof cycles[0], cudaMemcpyDeviceToHost));
  std::vector<double> ns;
  ns.reserve(n);
  for (auto c : cycles) {
    if (c != kNoLatency) ns.push_back(static_cast<double>(c) / cycles_per_ns);
  }
  return ns;
}

std::vector<std::uint64_t> block_addresses(void* const* device_table, std::uint64_t n) {
  std::vector<void*> table(n);
  HB_CUDA_CHECK(cudaMemcpy(table.data(), device_table, n * sizeof(void*), cudaMemcpyDeviceToHost));
  std::vector<std::uint64_t> out;
  out.reserve(n);
  for (void* p : table) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    if (a > 1) out.push_back(a);  // 0: NULL, 1: kNotStarted
  }
  return out;
}

}  // namespace detail

std::unique_ptr<Round> make_cuda_round(const Case& c, double kernel_budget_s) {
  if (c.pattern == nullptr || c.api == nullptr) throw std::invalid_argument("a case without its pattern or API");
  const detail::PatternFactory make = detail::find_pattern_factory(*c.pattern);
  if (make == nullptr) {
    throw std::invalid_argument(fmt::format("pattern '{}' has no factory in this build", c.pattern->name));
  }
  return make(*c.pattern, c, kernel_budget_s);
}

namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : session_(device) {}
  Heap ensure_limit(std::uint64_t bytes) override {
    if (batch_) batch_->release();
    const int before = session_.resets();
    const std::uint64_t reported = session_.ensure_heap(bytes);
    if (session_.resets() != before && batch_) {
      // Its pinned flag and buffers went with the old context: destroying it
      // as it was wrote the freed flag (a segfault at the second heap of a
      // run in one process: --no-isolate, --profile).
      batch_->abandon();
      batch_.reset();
    }
    return {reported, session_.resets() != before};
  }
  void invalidate() override {
    if (batch_) batch_->release();
    batch_.reset();
    session_.invalidate();
  }
  std::uint64_t probe_capacity(std::uint64_t heap_bytes) override { return probe_heap_capacity(heap_bytes); }
  std::unique_ptr<Round> make_round(const Case& c, double kernel_budget_s) override {
    if (batch_) batch_->release();
    return make_cuda_round(c, kernel_budget_s);
  }
  void begin_batch(bool hold) override {
    if (!batch_) batch_ = std::make_unique<detail::BatchControl>();
    batch_->begin(hold);
  }
  BatchTiming end_batch() override { return batch_ ? batch_->end() : BatchTiming{}; }
  void watch_kernels(KernelCost* into) override { detail::g_kernel_watch = into; }
  void synchronize() override { HB_CUDA_CHECK(cudaDeviceSynchronize()); }
  double rated_sm_mhz() const override {
    if (rated_mhz_ == 0) {
      int khz = 0;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, session_.device()) == cudaSuccess) rated_mhz_ = khz * 1e-3;
      (void)cudaGetLastError();
    }
    return rated_mhz_;
  }

 private:
  HeapSession session_;
  std::unique_ptr<detail::BatchControl> batch_;
  mutable double rated_mhz_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(int device) { return std::make_unique<CudaBackend>(device); }

}  // namespace heapbench
