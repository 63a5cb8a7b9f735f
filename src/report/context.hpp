#pragma once
#include <string>

#include "device/device.hpp"
#include "measure/energy.hpp"
#include "plan/options.hpp"

namespace heapbench {
// Records the device and the build in the results file (AddCustomContext), so
// files from different GPUs, drivers and commits can be told apart and compared.
// `energy`: whether and from which NVML device the energy was read (null: not said).
void add_results_context(const DeviceInfo& d, const Options& o, const energy::Meter* energy = nullptr);

// The context key of the command line: a child of isolation records its own,
// which the parent replaces with the run's (run_isolated.cpp).
inline constexpr const char* kCommandLineKey = "heapbench_command_line";
// argv as given (the program, then every argument), each shell-quoted where
// it needs to be: shlex.split() gives argv back, and a shell runs it again.
std::string command_line(const Options& o);
// The variables that bear on a run that are set (kRecordedVariables in
// context.cpp and every HEAPBENCH_* but the internal HEAPBENCH_PARENT_PID),
// "NAME=value" each, shell-quoted, sorted, separated by spaces.
std::string recorded_environment();
}  // namespace heapbench
