#pragma once
// What a child of --isolate/--devices runs, handed to it by its parent: the
// cases of one heap group (each as its axis_values, made from the axis table)
// and how its console output fits the run's. The child does not plan the sweep
// again from the command line; it takes these cases, in this order.
#include <cstddef>
#include <string>
#include <vector>

#include "heapbench/case.hpp"
#include "run/sweep.hpp"

namespace heapbench {

struct ChildPlan {
  std::vector<Case> cases;          // in run order
  bool context_and_header = true;   // the console's context and table header: the run's first heap group only
  std::size_t name_width = 0;       // the console's name column, as wide as the whole run's widest name
};

// Writes `plan` to `path` (write_atomically; ResultsWriteError on failure).
void write_child_plan(const std::string& path, const ChildPlan& plan);

// Reads a plan write_child_plan wrote. The files its graph and trace cases
// read are the child's own --graph and --trace (in `sweeps`, by the names the
// cases carry), never a path from the file; their content hashes are the
// plan's (the parent's read), so a file replaced since is an error for those
// cases. Throws std::runtime_error naming the file and what is wrong with it.
ChildPlan read_child_plan(const std::string& path, const std::vector<Sweep>& sweeps);

}  // namespace heapbench
