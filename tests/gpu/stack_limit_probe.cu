// What alloca does at and past cudaLimitStackSize, measured one configuration
// per process (a fault may leave the context unusable).
//
//   stack_limit_probe STACK_BYTES ALLOCA_BYTES THREADS
//     sets the per-thread stack to STACK_BYTES, launches THREADS threads that
//     each alloca(ALLOCA_BYTES), write a pattern of their own into every word
//     and read it back, and prints one line:
//       stack_asked=.. stack_reported=.. alloca=.. threads=.. set=<error> launch=<error> sync=<error> bad_threads=<n|unknown>
//   stack_limit_probe --largest
//     doubles the stack limit from 1 KiB until cudaDeviceSetLimit refuses and
//     prints the largest accepted value.
//
// Exit 0 when it could report what happened (a fault is a result here), 77
// when there is no CUDA device, 2 on bad arguments.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__global__ void fill_stack(std::uint64_t threads, std::uint64_t bytes, unsigned long long* bad_threads) {
  const std::uint64_t tid = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (tid >= threads) return;
  auto* words = static_cast<volatile std::uint32_t*>(alloca(bytes));
  const std::uint64_t n = bytes / 4;
  for (std::uint64_t i = 0; i < n; ++i) words[i] = static_cast<std::uint32_t>(tid * 2654435761u + i);
  bool bad = false;
  for (std::uint64_t i = 0; i < n && !bad; ++i) bad = words[i] != static_cast<std::uint32_t>(tid * 2654435761u + i);
  if (bad) atomicAdd(bad_threads, 1ull);
}

bool parse(const char* s, std::uint64_t& v) {
  char* end = nullptr;
  v = std::strtoull(s, &end, 10);
  return end != s && *end == '\0' && v > 0;
}

}  // namespace

int main(int argc, char** argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  if (argc == 2 && std::strcmp(argv[1], "--largest") == 0) {
    std::uint64_t ok = 0;
    cudaError_t last = cudaSuccess;
    for (std::uint64_t s = 1024; s <= (1ull << 40); s *= 2) {
      last = cudaDeviceSetLimit(cudaLimitStackSize, s);
      if (last != cudaSuccess) break;
      ok = s;
    }
    std::printf("largest_stack_accepted=%llu next_refused_with=%s\n", static_cast<unsigned long long>(ok),
                cudaGetErrorName(last));
    return 0;
  }
  std::uint64_t stack = 0, bytes = 0, threads = 0;
  if (argc != 4 || !parse(argv[1], stack) || !parse(argv[2], bytes) || !parse(argv[3], threads)) {
    std::fprintf(stderr, "usage: %s STACK_BYTES ALLOCA_BYTES THREADS | --largest\n", argv[0]);
    return 2;
  }
  const cudaError_t set = cudaDeviceSetLimit(cudaLimitStackSize, stack);
  size_t reported = 0;
  cudaDeviceGetLimit(&reported, cudaLimitStackSize);
  unsigned long long* bad = nullptr;
  cudaMalloc(&bad, sizeof *bad);
  cudaMemset(bad, 0, sizeof *bad);
  fill_stack<<<static_cast<unsigned>((threads + 255) / 256), 256>>>(threads, bytes, bad);
  const cudaError_t launch = cudaGetLastError();
  const cudaError_t sync = cudaDeviceSynchronize();
  unsigned long long bad_threads = 0;
  const bool readable = sync == cudaSuccess && cudaMemcpy(&bad_threads, bad, sizeof bad_threads, cudaMemcpyDeviceToHost) == cudaSuccess;
  std::printf("stack_asked=%llu stack_reported=%zu alloca=%llu threads=%llu set=%s launch=%s sync=%s bad_threads=",
              static_cast<unsigned long long>(stack), reported, static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(threads), cudaGetErrorName(set), cudaGetErrorName(launch),
              cudaGetErrorName(sync));
  if (readable) {
    std::printf("%llu\n", bad_threads);
  } else {
    std::printf("unknown\n");
  }
  return 0;
}
