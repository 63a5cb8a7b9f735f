// What recording costs (docs/trace.md), two ways, each timed by CUDA events:
//  - on a kernel of malloc/free pairs, with and without heapbench/trace.cuh's
//    recording: runs alternate, the best of seven each, and the relative change
//    of the kernel's time is printed (CUDA's malloc is slow and contended, so
//    the recording's cost can hide inside its waits: a change near zero, even
//    below it, is what this measures there);
//  - a kernel that only records (the same events, no allocator): its time per
//    event is what recording costs where nothing hides it, the upper bound.
// Prints one JSON line; exits 77 without a GPU. First, a launch of a kernel that
// records nothing, bracketed by the Recorder: end() says so on stderr (as for a
// kernel of another translation unit, docs/trace.md), which trace_test.py reads.
//
//   build/tests/trace_overhead [threads] [pairs per thread]
#define HEAPBENCH_TRACE 1
#include <cstdio>
#include <cstdlib>
#include <string>

#include "heapbench/trace.cuh"

namespace {

enum class Kernel { plain, recorded, record_only };

template <Kernel kKind>
__global__ void pairs(unsigned n, unsigned k) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  for (unsigned i = 0; i < k; ++i) {
    // record_only: an address no allocator gave, never dereferenced.
    void* p = kKind == Kernel::record_only ? reinterpret_cast<void*>(0x10000ull + 64ull * (t * k + i)) : ::malloc(64);
    if (kKind != Kernel::plain) heapbench::trace::detail::record(heapbench::trace::kMalloc, p, 64, 0);
    if (kKind != Kernel::plain) heapbench::trace::detail::record(heapbench::trace::kFree, p, 0, 0);
    if (kKind != Kernel::record_only) ::free(p);
  }
}

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "trace_overhead: %s: %s\n", what, cudaGetErrorString(err));
  std::exit(err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ? 77 : 1);
}

// One timed launch of `kKind` (the recorder's buffer emptied before it).
template <Kernel kKind>
float once(unsigned n, unsigned k, heapbench::trace::Recorder& rec, cudaEvent_t a, cudaEvent_t b) {
  const dim3 block(256), grid((n + 255) / 256);
  if (kKind != Kernel::plain) rec.begin(grid, block);  // plain records nothing: no launch record
  check(cudaEventRecord(a), "cudaEventRecord");
  pairs<kKind><<<grid, block>>>(n, k);
  check(cudaGetLastError(), "launch");
  check(cudaEventRecord(b), "cudaEventRecord");
  check(cudaEventSynchronize(b), "the kernel");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  if (kKind != Kernel::plain) rec.end();
  return ms;
}

struct Times {
  float plain = 1e30f, recorded = 1e30f, record_only = 1e30f;
};

// Best of seven of each, the kinds alternating so that neither gets the warmer GPU;
// a first launch of each, untimed, pays for loading the kernels.
Times measure(unsigned n, unsigned k, heapbench::trace::Recorder& rec) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  Times t;
  for (int r = 0; r < 8; ++r) {
    const float p = once<Kernel::plain>(n, k, rec, a, b);
    const float q = once<Kernel::recorded>(n, k, rec, a, b);
    const float o = once<Kernel::record_only>(n, k, rec, a, b);
    if (r == 0) continue;
    t.plain = p < t.plain ? p : t.plain;
    t.recorded = q < t.recorded ? q : t.recorded;
    t.record_only = o < t.record_only ? o : t.record_only;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned n = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 65536;
  const unsigned k = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 8;
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20), "cudaDeviceSetLimit");
  const unsigned long long events = 2ull * n * k;
  try {
    const std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/trace_overhead.hbt";
    Times t;
    {
      heapbench::trace::Recorder rec(path, events);  // the buffer's writes are part of what is measured
      rec.begin(dim3(1), dim3(1));
      pairs<Kernel::plain><<<1, 1>>>(1, 1);
      check(cudaGetLastError(), "launch");
      rec.end();  // prints "launch 0 recorded no event"
      t = measure(n, k, rec);
    }
    std::remove(path.c_str());
    std::printf("{\"threads\": %u, \"pairs_per_thread\": %u, \"events\": %llu, \"malloc_plain_ms\": %.4f, "
                "\"malloc_recorded_ms\": %.4f, \"malloc_change\": %.4f, \"record_only_ms\": %.4f, "
                "\"record_only_ns_per_event\": %.4f}\n",
                n, k, events, t.plain, t.recorded, t.recorded / t.plain - 1, t.record_only,
                t.record_only * 1e6 / static_cast<double>(events));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
