#pragma once
// The one CUDA error check, for heapbench's own code and for an allocator
// adapter's owner (docs/allocators.md): a failed call throws heapbench::CudaError,
// which the harness reports as the case's device error before going on with the
// sweep. Needs the CUDA runtime's header and the standard library only.
#include <cuda_runtime.h>

#include <string>

#include "heapbench/cuda_error.hpp"

namespace heapbench {

// Throws CudaError "<who>: <call>: <CUDA's description>" unless `err` is cudaSuccess:
//   heapbench::check_cuda(cudaMalloc(&arena_, bytes), "my_allocator", "cudaMalloc");
inline void check_cuda(cudaError_t err, const char* who, const char* call) {
  if (err != cudaSuccess) throw CudaError(std::string(who) + ": " + call + ": " + cudaGetErrorString(err));
}

namespace detail {
[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + cudaGetErrorName(err) +
                  " (" + cudaGetErrorString(err) + ")");
}
}  // namespace detail

}  // namespace heapbench

// The call's text, file and line, CUDA's name and description of the error.
#define HB_CUDA_CHECK(call)                                                                               \
  do {                                                                                                     \
    const cudaError_t hb_err_ = (call);                                                                    \
    if (hb_err_ != cudaSuccess) ::heapbench::detail::throw_cuda_error(hb_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<>>> launch: configuration errors surface here, faults at the next sync.
#define HB_CUDA_CHECK_LAUNCH() HB_CUDA_CHECK(cudaGetLastError())
