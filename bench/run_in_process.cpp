// The planned cases in this process: Google Benchmark runs the registered
// cases; SnapshotReporter rewrites the results file after each one.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdio>

#include "context.hpp"
#include "exit_codes.hpp"
#include "heapbench/progress.hpp"
#include "runners.hpp"
#include "snapshot_reporter.hpp"

namespace heapbench {

int run_in_process(const PlannedRun& run, const DeviceInfo& device, const RunConfig& cfg, ResultsFile* out) {
  const Options& o = run.plan.options;
  const bool child = o.only_heap != 0;  // its parent reports progress and the run's timing
  add_results_context(device, o);

  std::size_t ran = 0;
  try {
    if (out) {
      // Progress and the measurement summary: the results file's reporter sees every case.
      const std::size_t selected = count_matching(run.names, run.filter);
      Progress progress(selected * static_cast<std::size_t>(run.plan.bflags.repetitions));
      auto on_runs = [&](const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
        std::size_t cases = 0, errors = 0;
        double timed = 0;
        for (const auto& r : runs) {
          if (r.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate) continue;
          ++cases;
          const CaseTiming t = case_timing(r);
          if (!t.counts) ++errors;
          timed += timed_seconds(t);
          if (cfg.stop) cfg.stop->reported(r.benchmark_name());
        }
        const std::string line = progress.update(cases, timed, run.clock.seconds(), errors);
        if (!line.empty() && !child) fmt::print(stderr, "{}\n", line);
      };
      auto before_last_write = [&] {
        if (child) return;
        for (const auto& [k, v] : timing_context(run.clock.seconds(), progress.timed_s())) {
          benchmark::AddCustomContext(k, v);
        }
      };
      SnapshotReporter snapshots(out->path(), on_runs, before_last_write);
      snapshots.carry(out->carried());
      ran = benchmark::RunSpecifiedBenchmarks(nullptr, &snapshots);
      if (!child) fmt::print(stderr, "{}\n", progress.summary(run.clock.seconds()));
    } else {
      ran = benchmark::RunSpecifiedBenchmarks();
    }
  } catch (const StoppedAfterDeviceError&) {
    // The failed case's error result is in the results file; the parent runs
    // the rest of the group in a new process.
    std::fflush(stdout);
    return kExitDeviceError;
  } catch (const ResultsWriteError& e) {
    fmt::print(stderr, "heapbench: {}; {} keeps its last complete version\n", e.what(), out->path());
    return kExitCannotWrite;
  } catch (const std::exception& e) {
    fmt::print(stderr, "heapbench: {}\n", e.what());
    return kExitNoResults;
  }
  benchmark::Shutdown();
  if (cfg.stop && cfg.stop->failed()) return kExitDeviceError;  // in the group's last case: nothing left to run
  return ran == 0 ? kExitNoResults : kExitOk;
}

}  // namespace heapbench
