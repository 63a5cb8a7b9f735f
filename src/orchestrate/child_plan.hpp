#pragma once
// What a child of --isolate/--devices runs, handed to it by its parent: the
// cases of one heap group (each as its axis_values, made from the axis table),
// how to measure them (the run's stopping rule, kernel budget, device and
// Google Benchmark's flags) and how its console output fits the run's. The
// child never parses its parent's command line: its own is --child-plan, its
// --benchmark_out and, where its cases read a file, --child-input (a path is
// never taken from the plan).
#include <cstddef>
#include <string>
#include <vector>

#include "heapbench/case.hpp"
#include "plan/options.hpp"

namespace heapbench {

// How the parent's run measures, as its parser read it: the child's own.
struct ChildRun {
  int device = 0;
  StoppingRule rule;
  double kernel_budget_s = 5.0;
  int profile_iterations = 0;                // --profile: its fixed rounds a case (0: measured to the stopping rule)
  std::string sweep = "default";             // the sweep's name, for the child's context
  std::vector<std::string> benchmark_args;   // argv[0] then Google Benchmark's flags, as the parent hands them on
  BenchmarkFlags benchmark_flags;            // what the ones heapbench checks say, as the parent's parser read them
  std::vector<std::string> parent_args;      // the parent's argv[1..]: the child's context records it, never parses it
};

// The run's measuring settings as the parent's parser read them (the device is
// each child's own, set by the parent), and the child's Options taking them
// back: the two directions side by side, so a setting is never carried one way only.
ChildRun child_run_of(const Options& o);
void take_child_run(ChildRun r, Options& o);

struct ChildPlan {
  std::vector<Case> cases;          // in run order
  bool context_and_header = true;   // the console's context and table header: the run's first heap group only
  std::size_t name_width = 0;       // the console's name column, as wide as the whole run's widest name
  ChildRun run;
};

// Writes `plan` to `path` (write_atomically; ResultsWriteError on failure).
void write_child_plan(const std::string& path, const ChildPlan& plan);

// The file the plan's cases read (their --trace or --graph file, "": none):
// the parent hands it to the child on its command line (--child-input).
std::string child_input_of(const ChildPlan& plan);

// Reads a plan write_child_plan wrote. The cases that read a file read
// `input`, the child's --child-input, never a path from the plan file; their
// content hash is the plan's (the parent's read), so a file replaced since is
// an error for those cases. Throws std::runtime_error naming the file and
// what is wrong with it (also a plan whose cases read a file given no
// `input`, or an `input` whose name is not theirs).
ChildPlan read_child_plan(const std::string& path, const std::string& input);

}  // namespace heapbench
