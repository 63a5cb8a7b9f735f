// Google Benchmark side of the per-thread family (workload and counters:
// src/device/per_thread.cu). One iteration = one alloc kernel + one free
// kernel; its manual time is their GPU time from CUDA events.
#include <benchmark/benchmark.h>

#include "families.hpp"
#include "heapbench/nvtx.hpp"

namespace heapbench {
namespace {

void run_case(benchmark::State& st, const Case& c, const std::string& name, const RunConfig& cfg) {
  nvtx::range case_range{nvtx::attrs(name.c_str(), nvtx::Phase::case_)};
  try {
    const std::uint64_t heap_bytes = cfg.session->ensure_heap(c.heap);
    PerThreadRunner runner(c, cfg.kernel_budget_s);
    {
      // The first launch after a reset pays for module load and heap set-up.
      nvtx::range r{nvtx::attrs("warm-up", nvtx::Phase::warmup)};
      const auto why = runner.run_once().problem(cfg.kernel_budget_s);
      if (!why.empty()) {
        st.SkipWithError(("warm-up: " + why).c_str());
        return;
      }
    }
    Tally total;
    for (auto _ : st) {
      const IterationResult r = runner.run_once();
      if (const auto why = r.problem(cfg.kernel_budget_s); !why.empty()) {
        st.SkipWithError(why.c_str());
        break;
      }
      st.SetIterationTime(r.tally.alloc_seconds + r.tally.free_seconds);
      total += r.tally;
    }
    if (st.error_occurred()) return;
    const Figures f = compute_figures(total);
    st.counters["allocs_per_s"] = f.allocs_per_s;
    st.counters["frees_per_s"] = f.frees_per_s;
    st.counters["bytes_per_s"] = f.bytes_per_s;
    st.counters["fail_rate"] = f.fail_rate;
    st.counters["heap_bytes"] = static_cast<double>(heap_bytes);
  } catch (const CudaError& e) {
    // The context may hold a sticky error: make the next case start from a reset.
    cfg.session->invalidate();
    st.SkipWithError(e.what());
  }
}

}  // namespace

void register_per_thread(const std::vector<Case>& cases, const RunConfig& cfg) {
  for (const Case& c : cases) {
    const std::string name = case_name(c);
    benchmark::RegisterBenchmark(name.c_str(), [c, name, cfg](benchmark::State& st) { run_case(st, c, name, cfg); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace heapbench
