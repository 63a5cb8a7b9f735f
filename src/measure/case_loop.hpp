#pragma once
// The cases as Google Benchmark runs them (src/measure/case_loop.cpp): registration, and
// the loop that measures one case through the Backend seam.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <nlohmann/json.hpp>
#include <vector>

#include "measure/backend.hpp"
#include "heapbench/case.hpp"
#include "measure/energy.hpp"
#include "measure/measure.hpp"

namespace heapbench {

// Google Benchmark appends this to the name of every case timed with
// UseManualTime(); --benchmark_filter sees it too.
inline constexpr const char* kManualTimeSuffix = "/manual_time";

// A child of isolation stops after a case that ends in a DeviceError: its
// context may be unusable, and the parent runs the group's remaining cases in
// a new process. Once the results file has that case's error result
// (reported()), the next case to start throws StoppedAfterDeviceError instead
// of running, out of benchmark::RunSpecifiedBenchmarks (Google Benchmark has
// no other way to end a run early) to the runner, which exits with
// kExitDeviceError. Until then (other repetitions, interleaved cases) cases run
// as they would in one process.
class DeviceErrorStop {
 public:
  void failed(const std::string& name);    // the case `name` ended in a DeviceError
  void reported(const std::string& name);  // the results file now has the case `name`
  bool failed() const { return !failed_.empty(); }
  bool due() const { return reported_; }  // no further case may start

 private:
  std::string failed_;  // the first case that ended in a DeviceError
  bool reported_ = false;
};

// Thrown by a case that starts when DeviceErrorStop::due(). Not a
// std::exception, so no handler for those on the way takes it for a failure.
struct StoppedAfterDeviceError {};

struct RunConfig {
  Backend* backend;
  double kernel_budget_s;
  int fixed_iterations = 0;  // --profile: this many timed rounds per case, no stopping rule
  // A child of isolation with a results file: stop after a device error.
  std::shared_ptr<DeviceErrorStop> stop;
  StoppingRule rule;  // --max-noise, --min-rounds, --max-time
  // Read around each case's measured section (opened once the device is known;
  // not reading: no energy counters).
  std::shared_ptr<energy::Meter> energy;
};

// The name Google Benchmark gives a case: case_name(), then "/iterations:N"
// under --profile, then kManualTimeSuffix. --benchmark_filter matches this.
std::string benchmark_name(const Case& c, const RunConfig& cfg);

// Registers the cases in the order given (run order).
void register_cases(const std::vector<Case>& cases, const RunConfig& cfg);

// The Case that register_cases() registered under Google Benchmark's family
// name `family` (case_name(); a reporter's Run::run_name.function_name), or
// nullptr if none was. Recorded at registration: nothing parses a name.
const Case* registered_case(const std::string& family);

// What the measuring loop kept of each run of a case in this process: its
// rounds (RoundSamples, each entry's round_ns), by the family name and the
// repetition (Run::run_name.function_name, Run::repetition_index); nullptr
// for a run that counted no round (an error).
const RoundSamples* round_samples(const std::string& family, std::int64_t repetition);

// Each run of a case in this process that applied the stopping rule (not
// --profile, not an error), in run order: its case name and whether it
// converged; the closing summary counts those that did not.
std::vector<std::pair<std::string, bool>> convergence_of_runs();

}  // namespace heapbench
