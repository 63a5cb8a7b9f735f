#pragma once
// What one run of heapbench is to do, decided before any kernel runs: the
// command line parsed, the cases planned, the devices checked. Every refusal
// here says why on stderr and leaves the results file untouched.
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "plan/benchmark_flags.hpp"
#include "heapbench/case.hpp"
#include "device/device.hpp"
#include "plan/options.hpp"
#include "report/progress.hpp"  // Done: what a run has done, its budget

namespace heapbench {

struct Plan {
  Options options;
  BenchmarkFlags bflags;
  std::vector<Case> cases;  // run order; a child of isolation: those its parent's plan file hands it
  // A child of isolation: whether its console shows the context and header,
  // and its name column's width (its parent's plan file says).
  bool context_and_header = true;
  std::size_t name_width = 0;
  // --isolate or --devices (and neither a child nor --benchmark_list_tests):
  // children run the heap groups and this process merges their results.
  bool isolated = false;
};

// The plan, or the exit status that ends the run first: kExitUsage for a bad
// command line, kExitOk after --help.
// `app` is the tree's root, which parsed argv into `run`.
std::variant<Plan, int> plan_run(const CLI::App& app, const RunCommandLine& run, int argc, char** argv);

// Whether --benchmark_filter selects any of `names`: kExitOk, or kExitUsage
// after saying why.
int check_filter(const std::vector<std::string>& names, const std::string& filter);

struct Devices {
  std::vector<int> indices;  // the devices the run uses, in order
  DeviceInfo last;           // the last one's description (one process runs one device)
};

// The devices the run uses (--device; --devices, all of them for
// --devices=all), each answering and with more memory than every heap asked
// for; or the exit status (kExitNoDevice, kExitUsage) after saying why.
// `probe`: DeviceHooks::probe, which throws NoDeviceError or DeviceError.
std::variant<Devices, int> check_devices(const Plan& plan, const std::function<DeviceInfo(int device)>& probe);

// Seconds since the run began: progress and the measurement summary.
class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// Wall and timed seconds of the run, for the results file's context.
std::vector<std::pair<std::string, std::string>> timing_context(double wall_s, const Done& done);

// The console's closing lines on the run's time (progress' summary, the budget's line), over
// `file_wall_s`: the wall time timing_context last gave the file, so the console's share is the
// file's heapbench_measured_fraction to the point (on a loaded machine the moments between the
// file's last write and these lines moved it by a point); `now_s` where no file was written.
void print_timing_lines(const Progress& progress, const Done& last, std::optional<double> file_wall_s, double now_s);

}  // namespace heapbench
