// The planned cases in this process: Google Benchmark runs the registered
// cases; SnapshotReporter rewrites the results file after each one.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>

#include "report/console_reporter.hpp"
#include "report/context.hpp"
#include "orchestrate/exit_codes.hpp"
#include "plan/benchmark_flags.hpp"  // count_matching
#include "report/progress.hpp"
#include "orchestrate/runners.hpp"
#include "report/snapshot_reporter.hpp"

namespace heapbench {
namespace {

// heapbench's display reporters: for --benchmark_format=json the results
// file's document (snapshot_reporter.hpp); for console its table, with the
// colour and layout Google Benchmark would have chosen (its own choice is
// internal). nullptr (csv): Google Benchmark's own.
std::unique_ptr<benchmark::BenchmarkReporter> display_reporter(const BenchmarkFlags& f, const ConsoleLayout& layout) {
  if (f.format == "json") return std::make_unique<JsonReporter>();
  if (f.format != "console") return nullptr;
  bool color = false;
  if (f.color) {
    color = *f.color;
  } else {
    const char* term = std::getenv("TERM");
    color = isatty(STDOUT_FILENO) && term != nullptr && std::string_view(term) != "dumb";
  }
  int options = benchmark::ConsoleReporter::OO_None;
  if (color) options |= benchmark::ConsoleReporter::OO_Color;
  if (f.counters_tabular) options |= benchmark::ConsoleReporter::OO_Tabular;
  return std::make_unique<ConsoleReporter>(static_cast<benchmark::ConsoleReporter::OutputOptions>(options), layout);
}

// A child of isolation: the context and header only in the run's first heap
// group, names as wide as the widest of the whole run (its parent's plan says both).
ConsoleLayout child_layout(const Plan& plan) {
  ConsoleLayout layout;
  if (!plan.options.child()) return layout;
  layout.context_and_header = plan.context_and_header;
  layout.min_name_width = plan.name_width;
  return layout;
}

// The cases with a results file: progress on stderr (in the parent of
// isolated children only), the file rewritten after each case. Returns the
// runs reported.
std::size_t run_into_file(const PlannedRun& run, const RunConfig& cfg, benchmark::BenchmarkReporter* display,
                          ResultsFile& out) {
  const bool child = run.plan.options.child();  // its parent reports progress and the run's timing
  // Progress and the measurement summary: the results file's reporter sees every case.
  const std::size_t selected = count_matching(run.names, run.filter);
  Progress progress(selected * static_cast<std::size_t>(run.plan.bflags.repetitions));
  Done last;  // the runs so far: the closing lines and the context's budget
  auto on_runs = [&](const std::vector<benchmark::BenchmarkReporter::Run>& runs) {
    std::vector<ReportedRun> reported;
    for (const auto& r : runs) {
      const bool aggregate = r.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate;
      reported.push_back({r.run_name.str(), aggregate, r.aggregate_name, r.repetitions, case_timing(r)});
      if (!aggregate && cfg.stop) cfg.stop->reported(r.benchmark_name());
    }
    const Done done = count_done(reported);
    last = done;
    const std::string line = progress.update(done, run.clock.seconds());
    if (!line.empty() && !child) fmt::print(stderr, "{}\n", line);
  };
  std::optional<double> file_wall;  // the wall time the file's context was last given: the closing line's too
  auto before_last_write = [&] {
    if (child) return;
    file_wall = run.clock.seconds();
    for (const auto& [k, v] : timing_context(*file_wall, last)) {
      benchmark::AddCustomContext(k, v);
    }
  };
  SnapshotReporter snapshots(out.path(), on_runs, before_last_write);
  snapshots.carry(out.carried());
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks(display, &snapshots);
  if (!child) {
    print_timing_lines(progress, last, file_wall, run.clock.seconds());
  }
  return ran;
}

}  // namespace

int run_in_process(const PlannedRun& run, const DeviceInfo& device, const RunConfig& cfg, ResultsFile* out) {
  const Options& o = run.plan.options;
  const bool child = o.child();  // its parent reports progress and the run's timing
  add_results_context(device, o, cfg.energy.get());

  std::size_t ran = 0;
  ConsoleLayout layout = child_layout(run.plan);
  layout.only_output = out == nullptr;
  const std::unique_ptr<benchmark::BenchmarkReporter> display = display_reporter(run.plan.bflags, layout);
  try {
    if (out) {
      ran = run_into_file(run, cfg, display.get(), *out);
    } else {
      ran = benchmark::RunSpecifiedBenchmarks(display.get());
    }
    if (const std::string line = convergence_summary(convergence_of_runs()); !child && !line.empty()) {
      fmt::print(stderr, "{}\n", line);
    }
  } catch (const StoppedAfterDeviceError&) {
    // The failed case's error result is in the results file; the parent runs
    // the rest of the group in a new process.
    std::fflush(stdout);
    return kExitDeviceError;
  } catch (const ResultsWriteError& e) {
    if (out) {
      fmt::print(stderr, "heapbench: {}; {} keeps its last complete version\n", e.what(), out->path());
    } else {
      fmt::print(stderr, "heapbench: {}\n", e.what());
    }
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
