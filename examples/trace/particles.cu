// A small instrumented program for `heapbench replay` (docs/trace.md): a
// particle system whose particles keep their state in blocks from the device
// heap. Launch 0 spawns them (each allocates 32-128 bytes); each of three
// steps grows a third of them (a new, larger block, the old one freed) and
// lets a fifth split off a child particle (a block of its own); the last
// launch frees every block, each particle's by the particle opposite it (a
// block allocated in one launch by one thread, freed in another by another).
// Built with -DHEAPBENCH_TRACE=1 every call is recorded into the trace file
// named on the command line:
//
//   build/examples/heapbench_trace_example particles.hbt [particles]
//   build/heapbench replay particles.hbt --apis=malloc,slab --benchmark_out=replay.json
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "heapbench/trace.cuh"

namespace {

struct Particle {
  unsigned char* state;
  unsigned char* child;
  unsigned bytes;
};

__global__ void spawn(Particle* p, unsigned n) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  p[t].bytes = 32 + (t % 7) * 16;
  p[t].state = static_cast<unsigned char*>(heapbench::trace::malloc(p[t].bytes));
  p[t].child = nullptr;
  if (p[t].state != nullptr) p[t].state[0] = static_cast<unsigned char>(t);
}

__global__ void step(Particle* p, unsigned n, unsigned s) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n || p[t].state == nullptr) return;
  if ((t + s) % 3 == 0) {  // grow: move the state into a larger block
    auto* bigger = static_cast<unsigned char*>(heapbench::trace::malloc(p[t].bytes + 64));
    if (bigger != nullptr) {
      for (unsigned i = 0; i < p[t].bytes; ++i) bigger[i] = p[t].state[i];
      heapbench::trace::free(p[t].state);
      p[t].state = bigger;
      p[t].bytes += 64;
    }
  }
  if (t % 5 == s && p[t].child == nullptr) p[t].child = static_cast<unsigned char*>(heapbench::trace::malloc(48));
}

__global__ void release(Particle* p, unsigned n) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  Particle& q = p[n - 1 - t];  // the particle opposite: another thread's blocks
  heapbench::trace::free(q.state);
  if (q.child != nullptr) heapbench::trace::free(q.child);
}

void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "heapbench_trace_example: %s: %s\n", what, cudaGetErrorString(err));
  std::exit(err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ? 77 : 1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf("usage: heapbench_trace_example TRACE [particles]\n");
    return 0;
  }
  if (argc < 2 || argc > 3 || argv[1][0] == '-') {  // a flag is no trace's name: "--help" wrote a file so named
    std::fprintf(stderr, "usage: heapbench_trace_example TRACE [particles]\n");
    return 2;
  }
  const unsigned n = argc == 3 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 65536;
  if (n == 0 || n > (1u << 24)) {
    std::fprintf(stderr, "heapbench_trace_example: particles must be 1 to 16777216, not '%s'\n", argv[2]);
    return 2;
  }
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 256u << 20), "cudaDeviceSetLimit");
  Particle* p = nullptr;
  check(cudaMalloc(&p, n * sizeof(Particle)), "cudaMalloc");
  const dim3 block(256), grid((n + 255) / 256);
  try {
    heapbench::trace::Recorder rec(argv[1]);
    rec.begin(grid, block);
    spawn<<<grid, block>>>(p, n);
    check(cudaGetLastError(), "spawn");
    rec.end();
    for (unsigned s = 0; s < 3; ++s) {
      rec.begin(grid, block);
      step<<<grid, block>>>(p, n, s);
      check(cudaGetLastError(), "step");
      rec.end();
    }
    rec.begin(grid, block);
    release<<<grid, block>>>(p, n);
    check(cudaGetLastError(), "release");
    rec.end();
    rec.finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  check(cudaFree(p), "cudaFree");
  std::printf("heapbench_trace_example: %u particles, 5 launches recorded into %s\n", n, argv[1]);
  return 0;
}
