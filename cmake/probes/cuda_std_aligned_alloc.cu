// Configure-time probe (cmake/toolkit_probes.cmake): compiles only where the
// libcu++ that the CUDA compiler sees has a device cuda::std::aligned_alloc.
// CCCL 2.x declares it as `using ::aligned_alloc;` (glibc's host function), so
// this kernel fails there with "calling a __host__ function from a __global__
// function". The argument order does not matter here: both are size_t.
#include <cuda/std/cstddef>
#include <cuda/std/cstdlib>

__global__ void heapbench_probe_cuda_std_aligned_alloc(void** out, cuda::std::size_t a, cuda::std::size_t b) {
  *out = cuda::std::aligned_alloc(a, b);
  cuda::std::free(*out);
}
