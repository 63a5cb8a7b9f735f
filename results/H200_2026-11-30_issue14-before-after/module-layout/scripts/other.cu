// A second module: a kernel with some code, and one with printf.
#include <cstdio>
__global__ void other_kernel(float* out, int n) {
  float x = threadIdx.x;
#pragma unroll 64
  for (int i = 0; i < 512; ++i) x = x * 1.0001f + __sinf(x + i);
  if (out && threadIdx.x < n) out[threadIdx.x] = x;
}
__global__ void other_printf(int n) { if (threadIdx.x < n) printf("%d\n", n); }
void launch_other() { other_kernel<<<1, 32>>>(nullptr, 0); cudaDeviceSynchronize(); }
