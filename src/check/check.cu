// heapbench check on the GPU: the battery's grid (check/check_battery.hpp)
// as CUDA kernels, and the hooks that run one row of one allocator in this
// process (bench/subcommands/check.cpp starts one process per row).
//
// A launch is one kernel of ceil(n / 256) blocks of 256 threads, each thread
// one body call; every launch is checked (cudaGetLastError), and waited for by
// polling the stream against a wall-clock watchdog, so a kernel stuck in an
// allocator that never returns is reported as a hang (check::Hang) instead of
// blocking the row's process forever. The bodies also carry a %globaltimer
// deadline, so a merely slow allocator stops calling and says so.
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "device/allocators.cuh"
#include "heapbench/cuda_check.cuh"
#include "device/device_buffer.cuh"
#include "cases/catalog.hpp"
#include "check/check_battery.hpp"
#include "check/check_hooks.hpp"
#include "device/device.hpp"

namespace heapbench::check::gpu {
namespace {

template <class F>
__global__ void for_each_thread(std::uint64_t n, F f) {
  const std::uint64_t t = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < n) f(t);
}

__global__ void read_globaltimer(std::uint64_t* out) { *out = body::now_ns(); }

constexpr unsigned kThreadsPerBlock = 256;

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class Grid {
 public:
  Grid(double timeout_s, std::function<void(const Hang&)> on_hang)
      : timeout_s_(timeout_s), on_hang_(std::move(on_hang)) {
    // %globaltimer is the bodies' clock: read it once, then follow it with the host's.
    heapbench::detail::DeviceBuffer<std::uint64_t> t(1);
    read_globaltimer<<<1, 1>>>(t.get());
    HB_CUDA_CHECK_LAUNCH();
    HB_CUDA_CHECK(cudaMemcpy(&gt0_, t.get(), sizeof gt0_, cudaMemcpyDeviceToHost));
    host0_ = std::chrono::steady_clock::now();
  }

  template <class T>
  struct Buf {
    std::shared_ptr<heapbench::detail::DeviceBuffer<T>> b;
    std::size_t n = 0;
    T* data() const { return b->get(); }
  };
  template <class T>
  Buf<T> buffer(std::size_t n) {
    auto b = std::make_shared<heapbench::detail::DeviceBuffer<T>>(n);
    if (n) HB_CUDA_CHECK(cudaMemset(b->get(), 0, n * sizeof(T)));
    return {b, n};
  }
  template <class T>
  std::vector<T> to_host(const Buf<T>& b) const {
    std::vector<T> v(b.n);
    if (b.n) HB_CUDA_CHECK(cudaMemcpy(v.data(), b.data(), b.n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
  std::uint64_t deadline_ns(double seconds) const {
    return gt0_ + static_cast<std::uint64_t>((since(host0_) + seconds) * 1e9);
  }

  template <class F>
  double launch(std::uint64_t n, F f, const char* during) {
    if (n == 0) return 0;
    const auto t0 = std::chrono::steady_clock::now();
    for_each_thread<<<static_cast<unsigned>((n + kThreadsPerBlock - 1) / kThreadsPerBlock), kThreadsPerBlock>>>(n, f);
    HB_CUDA_CHECK_LAUNCH();
    while (true) {
      const cudaError_t e = cudaStreamQuery(nullptr);
      if (e == cudaSuccess) break;
      if (e != cudaErrorNotReady) HB_CUDA_CHECK(e);
      if (since(t0) > timeout_s_) {
        const Hang h(timeout_s_, std::string(during) + " kernel still running");
        if (on_hang_) on_hang_(h);  // leaves the process: no cudaFree may wait for the stuck kernel
        throw h;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    HB_CUDA_CHECK(cudaGetLastError());
    return since(t0);
  }

 private:
  double timeout_s_;
  std::function<void(const Hang&)> on_hang_;
  std::uint64_t gt0_ = 0;
  std::chrono::steady_clock::time_point host0_;
};

// CUDA's own calls take free(NULL) (C's rule); an adapter's contract never passes it (docs/allocators.md).
bool takes_free_null(const ApiTraits& t) {
  return &t == &api::kMalloc || &t == &api::kAligned || &t == &api::kCudaStdAligned || &t == &api::kNew ||
         &t == &api::kBump;
}

template <class Api>
CheckApi describe() {
  CheckApi a;
  a.name = std::string(Api::traits.name);
  a.caps = capabilities(Api::traits, Api::min_alignment);
  a.free_null = takes_free_null(Api::traits);
  a.device_heap = Api::traits.heap_backed();
  return a;
}

template <class... Apis>
std::vector<CheckApi> describe_all(alloc::ApiList<Apis...>) {
  return {describe<Apis>()...};
}

RowResult run_row_on_gpu(const CheckApi& api, const RowPlan& asked) {
  HB_CUDA_CHECK(cudaSetDevice(asked.device));
  return alloc::with_heap_api(api.name, [&](auto handle_type) -> RowResult {
    using Api = decltype(handle_type);
    RowPlan plan = asked;
    if (api.device_heap) {
      // Before any kernel of this process: CUDA takes a new limit only then.
      HB_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, plan.heap_bytes));
      std::size_t reported = 0;
      HB_CUDA_CHECK(cudaDeviceGetLimit(&reported, cudaLimitMallocHeapSize));
      plan.heap_bytes = reported;
    }
    alloc::check_usable(handle_type);
    Case c;
    c.pattern = &patterns::per_thread_traits;
    c.api = &Api::traits;
    c.size = 64;
    c.threads = 1;
    c.limit_bytes = asked.heap_bytes;  // an own_arena API's arena: c.arena_bytes()
    alloc::Owner<Api> owner(c);
    Grid g(plan.budget_s + plan.soak_s + 1, plan.on_hang);
    const std::function<void()> reset = [&] {
      owner.reset();
      HB_CUDA_CHECK(cudaDeviceSynchronize());
    };
    return run_row(g, owner.handle(), reset, plan);
  });
}

}  // namespace

CheckHooks cuda_check_hooks() {
  CheckHooks h;
  h.apis = describe_all(alloc::HeapApis{});
  h.run_row = run_row_on_gpu;
  return h;
}

}  // namespace heapbench::check::gpu
