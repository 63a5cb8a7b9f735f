// CaseRunner: picks the pattern's runner for a case; the cuda::std::aligned_alloc
// argument-order check.
#include <fmt/format.h>

#include "round.cuh"

namespace heapbench {
namespace alloc {

__global__ void cuda_std_aligned_probe(void** out) {
  void* p = CudaStdAligned{}.allocate(48, 4096);
  *out = p;
  if (p != nullptr) CudaStdAligned{}.deallocate(p);
}

std::string check_cuda_std_aligned_order() {
  void** d = nullptr;
  HB_CUDA_CHECK(cudaMalloc(&d, sizeof(void*)));
  cuda_std_aligned_probe<<<1, 1>>>(d);
  HB_CUDA_CHECK_LAUNCH();
  void* p = nullptr;
  HB_CUDA_CHECK(cudaMemcpy(&p, d, sizeof p, cudaMemcpyDeviceToHost));
  HB_CUDA_CHECK(cudaFree(d));
  if (p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 4096 == 0) return {};
  return fmt::format("cuda::std::aligned_alloc (CCCL {}.{}.{}) does not take its arguments in the order heapbench "
                     "compiled in ({}); rebuild with -DHEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST={}",
                     CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION,
                     HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST ? "align, size" : "size, align",
                     HEAPBENCH_CUDA_STD_ALIGNED_ALLOC_ALIGN_FIRST ? 0 : 1);
}

}  // namespace alloc

CaseRunner::CaseRunner(const Case& c, double kernel_budget_s) {
  if (c.api == alloc::CudaStdAligned::name) {
    if (auto why = alloc::check_cuda_std_aligned_order(); !why.empty()) throw std::runtime_error(why);
  }
  if (c.pattern == "per_thread") impl_ = detail::make_per_thread(c, kernel_budget_s);
  else if (c.pattern == "per_warp") impl_ = detail::make_per_warp(c, kernel_budget_s);
  else if (c.pattern == "per_block") impl_ = detail::make_per_block(c, kernel_budget_s);
  else if (c.pattern == "cross_kernel" || c.pattern == "cross_kernel_remote_free") impl_ = detail::make_cross_kernel(c, kernel_budget_s);
  else if (c.pattern == "churn") impl_ = detail::make_churn(c, kernel_budget_s);
  else throw std::invalid_argument(fmt::format("unknown pattern '{}'", c.pattern));
}

CaseRunner::~CaseRunner() = default;
IterationResult CaseRunner::run_once() { return impl_->run_once(); }
bool CaseRunner::has_free_phase() const { return impl_->has_free_phase(); }
bool CaseRunner::times_use() const { return impl_->times_use(); }

}  // namespace heapbench
