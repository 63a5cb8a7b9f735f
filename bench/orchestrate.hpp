#pragma once
// --isolate and --devices: heapbench runs copies of itself, one per heap group
// and device, and merges what they write.
#include <cstdint>
#include <string>
#include <vector>

namespace heapbench {

struct ChildPlan {
  int device = 0;
  std::uint64_t heap = 0;              // bytes: the child runs --only-heap=heap
  std::vector<std::string> expected;   // benchmark names it is to run (after the filter)
};

struct ChildrenOutcome {
  std::size_t entries = 0;   // entries in the merged results
  std::size_t deaths = 0;    // children that did not exit by themselves with status 0
  int signal = 0;            // SIGINT/SIGTERM/SIGHUP that stopped the run (passed on to the children), or 0
};

// Runs this program (/proc/self/exe) with `args` plus --device, --only-heap and
// --benchmark_out for each plan entry: the entries of one device one after
// another, the devices at the same time. After each child its results are
// merged into `out_path` (rewritten whole each time), where a child's
// unfinished cases become error results. Children's files live in
// "<out_path>.groups/" until the end. A SIGINT, SIGTERM or SIGHUP is passed on
// to the running children; their finished cases are merged, no further group
// starts, and `signal` says which one came (the caller then dies of it).
ChildrenOutcome run_children(const std::vector<std::string>& args, const std::vector<ChildPlan>& plan,
                             const std::string& out_path, bool tag_devices);

}  // namespace heapbench
