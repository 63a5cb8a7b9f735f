#pragma once
// heapbench's own command line. Google Benchmark's flags (benchmark_flags.hpp)
// are handed to it in order; any other flag is refused here.
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "plan/benchmark_flags.hpp"
#include "plan/input_files.hpp"
#include "measure/measure.hpp"
#include "plan/sweep.hpp"

namespace CLI {
class App;
}

namespace heapbench {

// Bad command line: the message names the flag and the value.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::vector<Sweep> sweeps;         // the --sweep (default, quick, size_map or zoo), with any axis flag applied to every part
  std::string sweep = "default";     // --sweep
  StoppingRule rule;                 // --max-noise, --min-rounds, --max-time
  int device = 0;                    // --device
  double kernel_budget_s = 5.0;      // --kernel-budget-ms: deadline for one allocating kernel
  double case_timeout_s = -1.0;      // --case-timeout: wall seconds a case may run in a child (<0: the default, 0: none)
  std::optional<std::string> out;    // --benchmark_out (heapbench writes it safely, see results_file.hpp)
  bool list_tests = false;           // --benchmark_list_tests (needs no GPU)
  bool profile = false;              // --profile: fixed iterations, for a clean timeline
  bool isolate = false;              // --isolate: each heap group in a child process
  std::vector<int> devices;          // --devices: one child per device, concurrently (-1: all)
  // A child of --isolate/--devices: the file its run comes from (orchestrate/child_plan.hpp); then every
  // field above but `out` is the plan's (src/orchestrate/run_plan.cpp), and `sweeps` is empty.
  std::string child_plan;            // --child-plan
  std::string child_input;           // --child-input: the file its cases read ("": none)
  bool child() const { return !child_plan.empty(); }
  std::vector<std::string> raw_args; // argv[1..]: the context's record of the command line
  int profile_iterations = 3;        // --profile-iterations
  bool help = false;                 // --help / -h
  // With --help: what it prints, from the app that parsed: heapbench's flags,
  // the subcommands of its tree, then Google Benchmark's flags that
  // it passes on and those it refuses.
  std::string help_text;
  bool version = false;              // --version
  std::vector<std::string> benchmark_args;  // argv[0] then everything for Google Benchmark
  BenchmarkFlags benchmark_flags;           // what the Google Benchmark flags heapbench checks say
};

struct RunParsed;

// heapbench's own flags (the run's), built into the root of the program's one
// CLI::App tree (bench/app.cpp, its subcommands beside these flags) and read
// back once it has parsed. The values CLI11 fills live in here, so it outlives
// the parse.
class RunCommandLine {
 public:
  // `readers`: what reads a --trace and a --graph file (plan/input_files.hpp);
  // empty, those flags are refused.
  explicit RunCommandLine(InputReaders readers = {});
  ~RunCommandLine();
  RunCommandLine(const RunCommandLine&) = delete;
  RunCommandLine& operator=(const RunCommandLine&) = delete;
  // heapbench's name, description and flags, into `app`.
  void build(CLI::App& app);
  // After `app` parsed argv (parse_argv): the options. Throws UsageError (one
  // line, naming the bad value) on malformed values: sizes/threads/heaps that
  // are 0, negative, not numbers, heaps that are not whole MiB, alignments
  // that are not powers of two, unknown patterns or APIs, a non-positive
  // budget, a negative device; flags that neither heapbench nor Google
  // Benchmark knows (with the closest known one), refused Google Benchmark
  // flags (with the reason), values Google Benchmark would answer with its
  // usage (benchmark_flags.hpp), stray words. With --help or --version it
  // returns before checking the rest. argv: raw_args, and argv[0] for Google
  // Benchmark.
  Options options(const CLI::App& app, int argc, const char* const* argv) const;

 private:
  std::unique_ptr<RunParsed> p_;
  InputReaders readers_;
};


// --case-timeout in seconds, 0 for none: as given, else kCaseTimeoutBaseS
// plus kCaseTimeoutMaxTimes times --max-time (a case stops measuring after
// --max-time; the rest is its warm-up, set-up and checks, and a slow
// allocator's rounds). --help names the same two numbers.
inline constexpr double kCaseTimeoutBaseS = 120.0;
inline constexpr double kCaseTimeoutMaxTimes = 4.0;
inline double case_timeout_seconds(const Options& o) {
  return o.case_timeout_s >= 0 ? o.case_timeout_s : kCaseTimeoutBaseS + kCaseTimeoutMaxTimes * o.rule.max_time_s;
}

}  // namespace heapbench
