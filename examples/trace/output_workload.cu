// heapbench's output workload (docs/workloads.md) as a program that records
// itself (docs/trace.md): N threads each malloc an output of a size drawn from
// [4, 64] bytes (or the range given; the same seeded sizes as
// `heapbench --patterns=output`), write it, and a second launch frees it.
// It first times the two launches directly (CUDA events, the best of five,
// nothing recorded), then records one round of them into TRACE, so a replay
// of the trace with malloc can be set beside the direct run:
//
//   build/examples/heapbench_trace_output output.hbt [threads] [min] [max]
//   build/heapbench replay output.hbt --apis=malloc --benchmark_out=replay.json
//
// It prints one JSON line: threads, sizes, and the direct launches' milliseconds.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "heapbench/trace.cuh"
#include "workloads/output_body.hpp"

namespace {

__global__ void produce(void** table, unsigned n, unsigned lo, unsigned hi) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const std::uint64_t bytes = heapbench::workloads::output_bytes(t, lo, hi);
  auto* p = static_cast<unsigned char*>(heapbench::trace::malloc(bytes));
  if (p != nullptr) heapbench::workloads::write_output(p, bytes, t);
  table[t] = p;
}

__global__ void release(void** table, unsigned n) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) heapbench::trace::free(table[t]);
}

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "heapbench_trace_output: %s: %s\n", what, cudaGetErrorString(err));
  std::exit(err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ? 77 : 1);
}

unsigned number(const char* text, unsigned lo, unsigned hi, const char* what) {
  char* end = nullptr;
  const unsigned long v = std::strtoul(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < lo || v > hi) {
    std::fprintf(stderr, "heapbench_trace_output: %s must be %u to %u, not '%s'\n", what, lo, hi, text);
    std::exit(2);
  }
  return static_cast<unsigned>(v);
}

// The best of five direct rounds: produce and release, milliseconds each.
void time_direct(void** table, unsigned n, unsigned lo, unsigned hi, float& produce_ms, float& release_ms) {
  cudaEvent_t e[3];
  for (auto& ev : e) check(cudaEventCreate(&ev), "cudaEventCreate");
  const dim3 block(256), grid((n + 255) / 256);
  produce_ms = release_ms = 1e30f;
  for (int r = 0; r < 5; ++r) {
    check(cudaEventRecord(e[0]), "cudaEventRecord");
    produce<<<grid, block>>>(table, n, lo, hi);
    check(cudaEventRecord(e[1]), "cudaEventRecord");
    release<<<grid, block>>>(table, n);
    check(cudaEventRecord(e[2]), "cudaEventRecord");
    check(cudaEventSynchronize(e[2]), "the direct round");
    float a = 0, b = 0;
    check(cudaEventElapsedTime(&a, e[0], e[1]), "cudaEventElapsedTime");
    check(cudaEventElapsedTime(&b, e[1], e[2]), "cudaEventElapsedTime");
    produce_ms = a < produce_ms ? a : produce_ms;
    release_ms = b < release_ms ? b : release_ms;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: heapbench_trace_output TRACE [threads] [min bytes] [max bytes]\n");
    return 0;
  }
  if (argc < 2 || argc > 5 || argv[1][0] == '-') {  // a flag is no trace's name: "--help" wrote a file so named
    std::fprintf(stderr, "usage: heapbench_trace_output TRACE [threads] [min bytes] [max bytes]\n");
    return 2;
  }
  const unsigned n = argc > 2 ? number(argv[2], 1, 1u << 24, "threads") : 100000;
  const unsigned lo = argc > 3 ? number(argv[3], 1, 1u << 20, "min bytes") : 4;
  const unsigned hi = argc > 4 ? number(argv[4], lo, 1u << 20, "max bytes") : 64;
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1024u << 20), "cudaDeviceSetLimit");
  void** table = nullptr;
  check(cudaMalloc(&table, n * sizeof(void*)), "cudaMalloc");
  float produce_ms = 0, release_ms = 0;
  time_direct(table, n, lo, hi, produce_ms, release_ms);  // before the Recorder: nothing is recorded
  try {
    heapbench::trace::Recorder rec(argv[1], 2ull * n);
    const dim3 block(256), grid((n + 255) / 256);
    rec.begin(grid, block);
    produce<<<grid, block>>>(table, n, lo, hi);
    check(cudaGetLastError(), "produce");
    rec.end();
    rec.begin(grid, block);
    release<<<grid, block>>>(table, n);
    check(cudaGetLastError(), "release");
    rec.end();
    rec.finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  check(cudaFree(table), "cudaFree");
  std::printf("{\"threads\": %u, \"size_min\": %u, \"size\": %u, \"direct_produce_ms\": %.4f, \"direct_release_ms\": %.4f}\n",
              n, lo, hi, produce_ms, release_ms);
  return 0;
}
