// heapbench_host_lambda: what an extended __host__ __device__ lambda costs when
// host code calls it. Runs on the CPU only (no GPU needed).
//
// nvcc compiles an extended lambda for the host through a wrapper whose call
// the host compiler sees as an indirect call it cannot inline; a plain host
// lambda is inlined and, in a loop like the one below, vectorised. Each case
// applies one callable to every element of an array and sums the results, the
// shape of a host-side fallback path that shares a __host__ __device__ lambda
// with a kernel.
//
// Cases (Google Benchmark, CPU time):
//   host_lambda/plain               [] (int x) { ... }           inlined
//   host_lambda/host_device         [] __host__ __device__ (int x) { ... }  extended lambda
//   host_lambda/function_pointer    a pointer to a host function, hidden from the optimiser
//   host_lambda/std_function        std::function<int(int)> holding the plain lambda
// Counter: calls_per_s (elements per CPU second; its inverse is the cost of one call).
// Argument: elements per pass (1 Ki and 1 Mi).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

namespace {

int square_plus_one(int x) { return x * x + 1; }

template <class F>
void apply_and_sum(benchmark::State& st, F f) {
  std::vector<int> data(static_cast<std::size_t>(st.range(0)));
  std::iota(data.begin(), data.end(), 0);
  for (auto _ : st) {
    std::int64_t sum = 0;
    for (int x : data) sum += f(x);
    benchmark::DoNotOptimize(sum);
    benchmark::ClobberMemory();
  }
  const double calls = static_cast<double>(st.iterations()) * static_cast<double>(data.size());
  st.counters["calls_per_s"] = benchmark::Counter(calls, benchmark::Counter::kIsRate);
}

void plain(benchmark::State& st) {
  apply_and_sum(st, [](int x) { return x * x + 1; });
}

void host_device(benchmark::State& st) {
  apply_and_sum(st, [] __host__ __device__(int x) { return x * x + 1; });
}

void function_pointer(benchmark::State& st) {
  int (*fp)(int) = square_plus_one;
  benchmark::DoNotOptimize(fp);  // the optimiser may not know where it points
  apply_and_sum(st, fp);
}

void std_function(benchmark::State& st) {
  const std::function<int(int)> f = [](int x) { return x * x + 1; };
  apply_and_sum(st, std::cref(f));
}

}  // namespace

BENCHMARK(plain)->Name("host_lambda/plain")->Arg(1 << 10)->Arg(1 << 20);
BENCHMARK(host_device)->Name("host_lambda/host_device")->Arg(1 << 10)->Arg(1 << 20);
BENCHMARK(function_pointer)->Name("host_lambda/function_pointer")->Arg(1 << 10)->Arg(1 << 20);
BENCHMARK(std_function)->Name("host_lambda/std_function")->Arg(1 << 10)->Arg(1 << 20);

BENCHMARK_MAIN();
