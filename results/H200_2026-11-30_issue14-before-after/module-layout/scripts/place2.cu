// Same point as place.cu, clocks held: a 300 ms spin first; per round the SM clock
// measured right after; several contexts per process (cudaDeviceReset between).
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
__global__ void alloc_k(void** t, int n, unsigned size) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) t[i] = malloc(size); }
__global__ void fill_k(void** t, int n, unsigned long long* c) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) { t[i] = malloc(65536); if (t[i]) atomicAdd(c, 1ull); } }
__global__ void free_k(void** t, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) free(t[i]); }
__device__ unsigned long long gt() { unsigned long long t; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t)); return t; }
__global__ void spin_k(unsigned long long ns, double* mhz) {
  unsigned long long t0 = gt(); long long c0 = clock64();
  while (gt() - t0 < ns) {}
  if (mhz && threadIdx.x == 0 && blockIdx.x == 0) *mhz = double(clock64() - c0) / double(gt() - t0) * 1e3;
}
int main(int argc, char** argv) {
  int ctxs = atoi(argv[1]), rounds = atoi(argv[2]); const char* label = argv[3]; int probe = argc > 4 ? atoi(argv[4]) : 0;
  const int n = 65536; const unsigned size = 64;
  for (int c = 0; c < ctxs; ++c) {
    if (c) CK(cudaDeviceReset());
    CK(cudaFree(0));
    CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, size_t(1) << 30));
    double* mhz; CK(cudaMallocManaged(&mhz, 8));
    void** t; CK(cudaMalloc(&t, n * 8));
    spin_k<<<132, 32>>>(300000000ull, nullptr); CK(cudaDeviceSynchronize());
    if (probe) {  // as heapbench: fill the heap with 64 KiB blocks, free them; then a 1024-thread warm-up round
      const int m = (1 << 30) / 65536 + 1; void** pt; unsigned long long* c; CK(cudaMalloc(&pt, m * 8)); CK(cudaMalloc(&c, 8)); CK(cudaMemset(c, 0, 8));
      fill_k<<<(m + 255) / 256, 256>>>(pt, m, c); free_k<<<(m + 255) / 256, 256>>>(pt, m); CK(cudaDeviceSynchronize());
      CK(cudaFree(c)); CK(cudaFree(pt));
      alloc_k<<<4, 256>>>(t, 1024, size); free_k<<<4, 256>>>(t, 1024); CK(cudaDeviceSynchronize());
    }
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<double> rates, clocks;
    for (int k = 0; k < rounds + 1; ++k) {
      CK(cudaEventRecord(a)); alloc_k<<<n / 256, 256>>>(t, n, size); CK(cudaEventRecord(b)); CK(cudaGetLastError());
      CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b));
      spin_k<<<1, 32>>>(1000000ull, mhz); CK(cudaDeviceSynchronize());
      free_k<<<n / 256, 256>>>(t, n); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      if (k) { rates.push_back(n / (ms * 1e-3)); clocks.push_back(*mhz); }
    }
    std::vector<double> s = rates; std::sort(s.begin(), s.end());
    double cmin = *std::min_element(clocks.begin(), clocks.end()), cmax = *std::max_element(clocks.begin(), clocks.end());
    printf("%s probe=%d ctx%d med=%.3g min=%.3g max=%.3g clock=%.0f-%.0f MHz rounds:", label, probe, c, s[s.size() / 2], s.front(), s.back(), cmin, cmax);
    for (double r : rates) printf(" %.2g", r);
    printf("\n");
  }
}
