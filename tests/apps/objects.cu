// make<T> / destroy / make_array of heapbench/app.cuh on the allocator this
// variant is built for (heapbench_add_app, tests/CMakeLists.txt): a class
// hierarchy with virtual functions and two bases, built by one kernel, called
// through its bases by a second, destroyed through a pointer to its *second*
// base (not at the object's start) by a third; arrays of a class with a
// destructor; and the same again, so that the blocks freed are used again.
// Exits 0 when every count and value is right, 1 with the first that is not,
// 77 (CTest: skipped) where no CUDA device answers.
#include <cstdio>
#include <cstdlib>

#include "heapbench/app.cuh"

namespace {

__device__ unsigned long long g_destroyed;  // destructors run, most derived and bases alike
__device__ unsigned long long g_wrong;      // a value that read back wrong

struct Shape {
  __device__ virtual ~Shape() { atomicAdd(&g_destroyed, 1ull); }
  __device__ virtual unsigned area() const = 0;
};
struct Named {
  unsigned id;
  __device__ explicit Named(unsigned i) : id(i) {}
  __device__ virtual ~Named() { atomicAdd(&g_destroyed, 1ull); }
  __device__ virtual unsigned tag() const { return id; }
};
// Named is the second base: a Named* points 16 bytes or more past the object's start.
struct Square final : Shape, Named {
  unsigned side;
  unsigned payload[5];
  __device__ Square(unsigned i, unsigned s) : Named(i), side(s) {
    for (unsigned k = 0; k < 5; ++k) payload[k] = i * 7 + k;
  }
  __device__ ~Square() override { atomicAdd(&g_destroyed, 1ull); }
  __device__ unsigned area() const override { return side * side; }
  __device__ unsigned tag() const override { return id + 1000000u; }
};
struct Counted {
  unsigned value = 42;
  __device__ ~Counted() { atomicAdd(&g_destroyed, 1ull); }
};

__global__ void build(Named** named, Counted** arrays, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Square* s = heapbench::app::make<Square>(i, i % 13);
  named[i] = s;  // converted to the second base
  arrays[i] = heapbench::app::make_array<Counted>(1 + i % 4);
}

__global__ void use(Named* const* named, Counted* const* arrays, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Named* p = named[i];
  if (p == nullptr || arrays[i] == nullptr) {
    atomicAdd(&g_wrong, 1ull);
    return;
  }
  const auto* s = static_cast<const Square*>(p);
  bool ok = p->tag() == i + 1000000u && s->area() == (i % 13) * (i % 13);
  for (unsigned k = 0; k < 5; ++k) ok &= s->payload[k] == i * 7 + k;
  for (unsigned k = 0; k < 1 + i % 4; ++k) ok &= arrays[i][k].value == 42;
  if (!ok) atomicAdd(&g_wrong, 1ull);
}

__global__ void tear_down(Named** named, Counted** arrays, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  heapbench::app::destroy(named[i]);  // through the second base: most_derived() finds the block
  heapbench::app::destroy_array(arrays[i]);
}

int fail(const char* what, cudaError_t e) {
  std::printf("FAILED: %s: %s\n", what, cudaGetErrorString(e));
  return 1;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device\n");
    return 77;
  }
  constexpr unsigned n = 1u << 16;
  const unsigned long long per_round = n * 3ull + (n / 4) * (1 + 2 + 3 + 4);  // Square: 3 destructors; arrays: 1..4
  try {
    heapbench::app::Heap heap(1024ull << 20);  // Ouroboros needs 336 MB of it for its queues
    Named** named = nullptr;
    Counted** arrays = nullptr;
    if (auto e = cudaMalloc(&named, n * sizeof *named); e != cudaSuccess) return fail("cudaMalloc", e);
    if (auto e = cudaMalloc(&arrays, n * sizeof *arrays); e != cudaSuccess) return fail("cudaMalloc", e);
    for (int round = 0; round < 3; ++round) {
      build<<<n / 256, 256>>>(named, arrays, n);
      use<<<n / 256, 256>>>(named, arrays, n);
      tear_down<<<n / 256, 256>>>(named, arrays, n);
      if (auto e = cudaDeviceSynchronize(); e != cudaSuccess) return fail("a kernel", e);
    }
    unsigned long long destroyed = 0, wrong = 0;
    cudaMemcpyFromSymbol(&destroyed, g_destroyed, sizeof destroyed);
    cudaMemcpyFromSymbol(&wrong, g_wrong, sizeof wrong);
    const unsigned long long nulls = heap.nulls();
    std::printf("%s: %u objects x 3 rounds, %llu destructors run (%llu expected), %llu wrong values, %llu NULLs\n",
                std::string(heapbench::app::api_name()).c_str(), n, destroyed, 3 * per_round, wrong, nulls);
    if (nulls != 0 || wrong != 0 || destroyed != 3 * per_round) {
      std::printf("FAILED\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
  return 0;
}
