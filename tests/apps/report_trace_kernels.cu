// The kernels of tests/apps/report_trace.cpp (its recording, issue 51): they
// allocate through heapbench/app.cuh in this translation unit, while the
// Report that records them lives in the .cpp file, which includes no device
// code: the Recorder reaches this file's trace buffer through the registry of
// heapbench/trace_recorder.hpp.
#include "heapbench/app.cuh"
#include "report_trace.hpp"

namespace {

constexpr unsigned kThreads = 8 * 32;  // grow's 2-D launch: grid (4, 2), block (8, 4)

__global__ void grow(void** slots) {
  const unsigned block = blockIdx.x + gridDim.x * blockIdx.y;
  const unsigned t = threadIdx.x + blockDim.x * threadIdx.y + blockDim.x * blockDim.y * block;
  slots[t] = heapbench::app::malloc(32 + t % 64);
}
// Frees the first half's blocks (one kernel of a launch() of two).
__global__ void release_half(void** slots) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < kThreads / 2) heapbench::app::free(slots[t]);
}
// Allocates them again, in a launch of another shape (the other kernel of that launch()).
__global__ void grow_half(void** slots) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < kThreads / 2) slots[t] = heapbench::app::malloc(48);
}
__global__ void nothing() {}
__global__ void release_all(void** slots, unsigned long long* sum) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= kThreads) return;
  if (slots[t] == nullptr) return;
  atomicAdd(sum, 1ull);
  heapbench::app::free(slots[t]);
}

void** g_slots = nullptr;
unsigned long long* g_sum = nullptr;
heapbench::app::Heap* g_heap = nullptr;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

namespace report_trace {

void set_up() {
  g_heap = new heapbench::app::Heap(heapbench::app::heap_bytes_from_env(64ull << 20));
  check(cudaMalloc(&g_slots, kThreads * sizeof(void*)), "cudaMalloc");
  check(cudaMalloc(&g_sum, sizeof *g_sum), "cudaMalloc");
  check(cudaMemset(g_sum, 0, sizeof *g_sum), "cudaMemset");
}
void launch_grow() { grow<<<dim3(4, 2), dim3(8, 4)>>>(g_slots); }
void launch_release_half() { release_half<<<kThreads / 64, 64>>>(g_slots); }
void launch_grow_half() { grow_half<<<kThreads / 128, 128>>>(g_slots); }
void launch_nothing() { nothing<<<1, 32>>>(); }
void launch_release_all() { release_all<<<kThreads / 32, 32>>>(g_slots, g_sum); }
unsigned long long released() {
  unsigned long long n = 0;
  check(cudaMemcpy(&n, g_sum, sizeof n, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return n;
}
unsigned long long nulls() { return g_heap->nulls(); }

}  // namespace report_trace
