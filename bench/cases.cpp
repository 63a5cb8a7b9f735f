// Google Benchmark side of every pattern (workloads and counters: the header
// comment of each src/device/<pattern>.cu). One iteration = one round of the
// pattern; its manual time is the GPU time of the round's timed launches, from
// CUDA events.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "families.hpp"
#include "heapbench/nvtx.hpp"
#include "heapbench/parse.hpp"

namespace heapbench {
namespace {

// A case that leaves the heap smaller than it found it would poison every later
// case on the same heap. The probe fills with 64 KiB blocks; allow two blocks of
// slack for where the allocator places them.
std::string capacity_problem(std::uint64_t before, std::uint64_t after) {
  if (after + 2 * kCapacityProbeBlock >= before) return {};
  return fmt::format("the heap held {} fewer bytes of 64 KiB blocks after the case ({} -> {}): blocks were not freed",
                     before - after, format_quantity(before), format_quantity(after));
}

void run_case(benchmark::State& st, const Case& c, const std::string& name, const RunConfig& cfg) {
  nvtx::range case_range{nvtx::attrs(name.c_str(), nvtx::Phase::case_)};
  try {
    const std::uint64_t heap_bytes = cfg.session->ensure_heap(c.heap);
    CaseRunner runner(c, cfg.kernel_budget_s);
    const std::uint64_t capacity_before = probe_heap_capacity(heap_bytes);
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
      st.SetIterationTime(r.timed_seconds);
      total += r.tally;
    }
    if (st.error_occurred()) return;
    if (const auto why = capacity_problem(capacity_before, probe_heap_capacity(heap_bytes)); !why.empty()) {
      st.SkipWithError(why.c_str());
      return;
    }
    const Figures f = compute_figures(total);
    st.counters["allocs_per_s"] = f.allocs_per_s;
    if (runner.has_free_phase()) st.counters["frees_per_s"] = f.frees_per_s;
    st.counters["bytes_per_s"] = f.bytes_per_s;
    st.counters["fail_rate"] = f.fail_rate;
    st.counters["heap_bytes"] = static_cast<double>(heap_bytes);
    if (runner.times_use()) st.counters["use_bytes_per_s"] = f.use_bytes_per_s;
  } catch (const CudaError& e) {
    // The context may hold a sticky error: make the next case start from a reset.
    cfg.session->invalidate();
    st.SkipWithError(e.what());
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());
  }
}

}  // namespace

void register_cases(const std::vector<Case>& cases, const RunConfig& cfg) {
  for (const Case& c : cases) {
    const std::string name = case_name(c);
    benchmark::RegisterBenchmark(name.c_str(), [c, name, cfg](benchmark::State& st) { run_case(st, c, name, cfg); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace heapbench
