#pragma once
// Registration of every case with Google Benchmark.
#include <string>
#include <nlohmann/json.hpp>
#include <vector>

#include "heapbench/backend.hpp"
#include "heapbench/case.hpp"
#include "heapbench/measure.hpp"

namespace heapbench {

// Google Benchmark appends this to the name of every case timed with
// UseManualTime(); --benchmark_filter sees it too.
inline constexpr const char* kManualTimeSuffix = "/manual_time";

struct RunConfig {
  Backend* backend;
  double kernel_budget_s;
  int fixed_iterations = 0;  // --profile: this many timed rounds per case, no stopping rule
  // A child of isolation: after a case that ends in a DeviceError, the process
  // exits (kExitDeviceError, once that case's error result is written) and the
  // parent runs the group's remaining cases in a new process.
  bool end_on_device_error = false;
  StoppingRule rule;  // --max-noise, --min-rounds, --max-time
};

// The exit status of a child that stopped after a device error.
inline constexpr int kExitDeviceError = 4;

// Set by a case that ended in a DeviceError under end_on_device_error; the
// results file writer exits the process once it has written that case.
bool device_error_ends_process();
void end_process_after_this_case();

// The name Google Benchmark gives a case: case_name(), then "/iterations:N"
// under --profile, then kManualTimeSuffix. --benchmark_filter matches this.
std::string benchmark_name(const Case& c, const RunConfig& cfg);

// Registers the cases in the order given (run order).
void register_cases(const std::vector<Case>& cases, const RunConfig& cfg);

// The axis_values (heapbench/axis_values.hpp) of the registered case whose
// benchmark_name() is `name` (a results entry's run_name), or null if none is.
nlohmann::ordered_json registered_axis_values(const std::string& name);

}  // namespace heapbench
