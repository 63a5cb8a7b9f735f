// The busy kernel of energy_probe.cpp, apart from it so that the host code
// (CLI11, nlohmann-json) is compiled once by the host compiler, not twice by nvcc.
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__device__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Arithmetic until `ns` of %globaltimer have passed, in every thread.
__global__ void busy(std::uint64_t ns, float* sink) {
  const std::uint64_t t0 = global_ns();
  float x = static_cast<float>(threadIdx.x);
  while (global_ns() - t0 < ns) {
    for (int i = 0; i < 256; ++i) x = x * 1.000001f + 0.5f;
  }
  if (x == -1.0f) *sink = x;  // never true; keeps the loop
}

}  // namespace

// Launches `blocks` x `threads` of busy for `ns`; the launch's error.
cudaError_t launch_busy(int blocks, int threads, std::uint64_t ns, float* sink) {
  busy<<<blocks, threads>>>(ns, sink);
  return cudaGetLastError();
}
