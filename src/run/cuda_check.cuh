#pragma once
// The one CUDA error check: throws heapbench::CudaError with the call's text,
// file, line and CUDA's own name and description of the error.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include "run/device.hpp"

namespace heapbench::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(fmt::format("{} failed at {}:{}: {} ({})", call, file, line, cudaGetErrorName(err),
                              cudaGetErrorString(err)));
}

}  // namespace heapbench::detail

#define HB_CUDA_CHECK(call)                                                      \
  do {                                                                           \
    const cudaError_t hb_err_ = (call);                                          \
    if (hb_err_ != cudaSuccess) ::heapbench::detail::throw_cuda_error(hb_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<>>> launch: configuration errors surface here, faults at the next sync.
#define HB_CUDA_CHECK_LAUNCH() HB_CUDA_CHECK(cudaGetLastError())
