// Does where the device heap lands decide malloc's speed? per-thread malloc 64 B x 65,536.
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
void launch_other();
__global__ void alloc_k(void** t, int n, unsigned size) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) t[i] = malloc(size); }
__global__ void free_k(void** t, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) free(t[i]); }
__global__ void touch_k(int) {}
struct R { double rate; uint64_t minaddr, maxaddr; int fails; };
static R round_(void** t, int n, unsigned size, cudaEvent_t a, cudaEvent_t b) {
  CK(cudaEventRecord(a)); alloc_k<<<(n + 255) / 256, 256>>>(t, n, size); CK(cudaEventRecord(b));
  CK(cudaGetLastError()); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b));
  std::vector<uint64_t> h(n); CK(cudaMemcpy(h.data(), t, n * 8, cudaMemcpyDeviceToHost));
  R r{0, ~0ull, 0, 0};
  for (auto v : h) { if (!v) { r.fails++; continue; } r.minaddr = std::min(r.minaddr, v); r.maxaddr = std::max(r.maxaddr, v); }
  r.rate = (n - r.fails) / (ms * 1e-3);
  free_k<<<(n + 255) / 256, 256>>>(t, n); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  return r;
}
int main(int argc, char** argv) {
  // argv: label pad_mb pad_when(before|after|none) other(0|1) heap_mb n size rounds
  const char* label = argv[1]; size_t pad = strtoull(argv[2], 0, 10) << 20; const char* when = argv[3];
  int other = atoi(argv[4]); size_t heap = strtoull(argv[5], 0, 10) << 20; int n = atoi(argv[6]); unsigned size = atoi(argv[7]); int rounds = atoi(argv[8]);
  CK(cudaFree(0));
  size_t f0, tot; CK(cudaMemGetInfo(&f0, &tot));
  void* p = nullptr;
  if (pad && !strcmp(when, "before")) CK(cudaMalloc(&p, pad));
  CK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
  if (pad && !strcmp(when, "after")) CK(cudaMalloc(&p, pad));
  if (other) launch_other();
  void** t; CK(cudaMalloc(&t, n * 8));
  size_t f1; CK(cudaMemGetInfo(&f1, &tot));
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  R w = round_(t, n, size, a, b);  // warm-up: loads the module, creates the heap
  size_t f2; CK(cudaMemGetInfo(&f2, &tot));
  std::vector<double> rates; R last{};
  for (int k = 0; k < rounds; ++k) { last = round_(t, n, size, a, b); rates.push_back(last.rate); }
  std::sort(rates.begin(), rates.end());
  printf("%s pad=%zuMiB when=%s other=%d heap=%zuMiB n=%d size=%u warm=%.3g med=%.3g min=%.3g max=%.3g fails=%d heapmin=0x%llx mod2M=0x%llx mod64M=0x%llx pad=%p table=%p used_before_heap=%zuMiB heap_commit=%zuMiB\n",
         label, pad >> 20, when, other, heap >> 20, n, size, w.rate, rates[rates.size() / 2], rates.front(), rates.back(), last.fails,
         (unsigned long long)last.minaddr, (unsigned long long)(last.minaddr & ((2ull << 20) - 1)), (unsigned long long)(last.minaddr & ((64ull << 20) - 1)),
         p, (void*)t, (f0 - f1) >> 20, (f1 - f2) >> 20);
  return 0;
}
