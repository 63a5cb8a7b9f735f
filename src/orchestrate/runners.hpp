#pragma once
// The two ways heapbench runs the planned cases once Google Benchmark has them
// registered (bench/app.cpp decides which): in this process
// (run_in_process.cpp), or in children of this program, one per heap group and
// device, whose results this process merges (run_isolated.cpp). Each returns
// the run's exit status (exit_codes.hpp).
#include <functional>
#include <string>
#include <vector>

#include "measure/case_loop.hpp"
#include "report/results_file.hpp"
#include "orchestrate/run_plan.hpp"

namespace heapbench {

struct PlannedRun {
  const Plan& plan;
  const std::vector<std::string>& names;  // benchmark_name() of each planned case
  std::string filter;                     // --benchmark_filter, as Google Benchmark read it
  const Stopwatch& clock;                 // since the program started
};

// `out`: --benchmark_out (nullptr: none). Where cfg.stop is set (a child of
// isolation), a device error ends the run once that case's result is written,
// with kExitDeviceError.
int run_in_process(const PlannedRun& run, const DeviceInfo& device, const RunConfig& cfg, ResultsFile* out);

// `out` is required; `devices` the checked ones. On SIGINT/SIGTERM/SIGHUP it
// discards the scratch file and dies of the signal once the children's
// finished cases are merged.
// `gate_line`: ChildrenSettings::gate_line (orchestrate.hpp), or empty.
int run_isolated(const PlannedRun& run, const std::vector<int>& devices, ResultsFile& out,
                 std::function<std::string()> gate_line = {});

}  // namespace heapbench
