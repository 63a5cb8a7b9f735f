// A standalone reproducer for the output workload's warp_aggregated case
// (issue 52; docs/notes/warp-aggregated.md): no heapbench code, only CUDA.
// Each of N threads needs 4..64 bytes; lane 0 of each warp calls malloc once
// for its lanes' 16-byte-padded total, the lanes carve the block by a prefix
// sum over shuffles and write their bytes; a second kernel reads every byte
// back; a third has lane 0 free the block. Repeated for R rounds on one heap.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o repro warp_aggregated_malloc.cu
//   ./repro [threads=1000000] [rounds=200] [heap MiB=1024] [writes=1] [lane bytes=0] [per warp=1]
//
// lane bytes: 0 draws each thread's 4..64 bytes as the output workload does;
// a number gives every thread that many (so each warp asks for 32 x it, padded).
// per warp 0: every thread calls malloc for its own padded bytes and frees its
// own block (the same sizes, not aggregated), the control.
//
// Prints one line per failure (the round and CUDA's error) and a summary;
// exits 1 on a CUDA error or a byte that read back wrong, 0 otherwise.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

__host__ __device__ std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
__constant__ bool g_per_warp = true;
__constant__ std::uint64_t g_fixed;  // every thread's bytes, or 0: drawn from 4..64
__device__ std::uint64_t bytes_of(std::uint64_t t) { return g_fixed != 0 ? g_fixed : 4 + mix64(t * 0x9E3779B97F4A7C15ull + 7) % 61; }
__device__ std::uint64_t padded(std::uint64_t b) { return (b + 15) / 16 * 16; }
__device__ unsigned char byte_of(std::uint64_t t, std::uint64_t i) { return static_cast<unsigned char>(mix64(t * 131 + i)); }

__global__ void produce(void** table, std::uint64_t n, bool writes, unsigned long long* nulls) {
  const std::uint64_t t = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  const bool active = t < n;
  const unsigned lane = threadIdx.x & 31u;
  const std::uint64_t bytes = active ? bytes_of(t) : 0;
  const std::uint64_t mine = active ? padded(bytes) : 0;
  std::uint64_t inclusive = mine;
  for (unsigned d = 1; d < 32; d <<= 1) {
    const std::uint64_t v = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += v;
  }
  const std::uint64_t total = __shfl_sync(0xffffffffu, inclusive, 31);
  unsigned char* base = nullptr;
  if (!g_per_warp) {
    if (!active) return;
    auto* own = static_cast<unsigned char*>(malloc(mine));
    if (own != nullptr && writes) {
      for (std::uint64_t i = 0; i < bytes; ++i) own[i] = byte_of(t, i);
    }
    table[t] = own;
    if (own == nullptr) atomicAdd(nulls, 1ull);
    return;
  }
  if (lane == 0 && active) base = static_cast<unsigned char*>(malloc(total));
  base = reinterpret_cast<unsigned char*>(__shfl_sync(0xffffffffu, reinterpret_cast<unsigned long long>(base), 0));
  if (!active) return;
  unsigned char* p = base != nullptr ? base + (inclusive - mine) : nullptr;
  if (p != nullptr && writes) {
    for (std::uint64_t i = 0; i < bytes; ++i) p[i] = byte_of(t, i);
  }
  table[t] = p;
  if (p == nullptr) atomicAdd(nulls, 1ull);
}

__global__ void verify(void* const* table, std::uint64_t n, bool writes, unsigned long long* wrong) {
  const std::uint64_t t = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (t >= n) return;
  auto* p = static_cast<unsigned char*>(table[t]);
  if (p == nullptr) return;
  const std::uint64_t bytes = bytes_of(t);
  if (!writes) {
    for (std::uint64_t i = 0; i < bytes; ++i) p[i] = byte_of(t, i);
    __threadfence();
  }
  for (std::uint64_t i = 0; i < bytes; ++i) {
    if (p[i] != byte_of(t, i)) {
      atomicAdd(wrong, 1ull);
      return;
    }
  }
}

__global__ void release(void* const* table, std::uint64_t n) {
  const std::uint64_t t = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x;
  if (t < n && (!g_per_warp || (threadIdx.x & 31u) == 0) && table[t] != nullptr) free(table[t]);
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 200;
  const std::uint64_t heap_mib = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1024;
  const bool writes = argc > 4 ? std::atoi(argv[4]) != 0 : true;
  const std::uint64_t fixed = argc > 5 ? std::strtoull(argv[5], nullptr, 10) : 0;
  const bool per_warp = argc > 6 ? std::atoi(argv[6]) != 0 : true;
  cudaMemcpyToSymbol(g_per_warp, &per_warp, sizeof per_warp);
  if (n == 0 || rounds < 1 || heap_mib == 0) {
    std::fprintf(stderr, "usage: %s [threads>0] [rounds>0] [heap MiB>0] [writes 0|1] [lane bytes, 0: 4..64] [per warp 0|1]\n", argv[0]);
    return 2;
  }
  cudaMemcpyToSymbol(g_fixed, &fixed, sizeof fixed);
  cudaError_t e = cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap_mib << 20);
  if (e != cudaSuccess) {
    std::printf("cudaDeviceSetLimit: %s\n", cudaGetErrorString(e));
    return 1;
  }
  void** table = nullptr;
  unsigned long long* counts = nullptr;
  if (cudaMalloc(&table, n * sizeof(void*)) != cudaSuccess || cudaMalloc(&counts, 2 * sizeof(unsigned long long)) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(counts, 0, 2 * sizeof(unsigned long long));
  const unsigned grid = static_cast<unsigned>((n + 255) / 256);
  for (int r = 0; r < rounds; ++r) {
    produce<<<grid, 256>>>(table, n, writes, counts);
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { std::printf("round %d: produce: %s\n", r, cudaGetErrorString(e)); return 1; }
    verify<<<grid, 256>>>(table, n, writes, counts + 1);
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { std::printf("round %d: verify: %s\n", r, cudaGetErrorString(e)); return 1; }
    release<<<grid, 256>>>(table, n);
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { std::printf("round %d: release: %s\n", r, cudaGetErrorString(e)); return 1; }
  }
  unsigned long long c[2] = {0, 0};
  cudaMemcpy(c, counts, sizeof c, cudaMemcpyDeviceToHost);
  std::printf("%llu threads x %d rounds, heap %llu MiB, writes %d, lane bytes %llu, per warp %d: %llu NULLs, %llu outputs read back wrong, no CUDA error\n",
              static_cast<unsigned long long>(n), rounds, static_cast<unsigned long long>(heap_mib), writes ? 1 : 0,
              static_cast<unsigned long long>(fixed), per_warp ? 1 : 0, c[0], c[1]);
  return c[1] != 0 ? 1 : 0;
}
