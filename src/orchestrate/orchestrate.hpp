#pragma once
// --isolate and --devices: heapbench runs copies of itself, one per heap group
// and device, and merges what they write.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "heapbench/case.hpp"
#include "orchestrate/child_plan.hpp"

namespace heapbench {

class ResultsMerger;

// The cases of one heap size on one device, run by a child (or, after a
// device error or a timeout, by several in turn), each handed the cases it is
// to run in a plan file (orchestrate/child_plan.hpp).
struct HeapGroup {
  int device = 0;
  std::uint64_t heap = 0;            // bytes: the limit_bytes of its cases
  std::vector<Case> cases;           // in run order (after the filter)
  std::vector<std::string> names;    // each case's benchmark name, as its entry names it
  bool context_and_header = false;   // the run's first heap group: its child prints the console's context and header
};

struct ChildrenSettings {
  bool tag_devices = false;      // --devices: entries get gpu_index and a /device:N suffix
  bool quiet_children = false;   // children's stdout goes to /dev/null (the parent prints the merged JSON)
  // Wall seconds a child may go without finishing a case (from its start, then
  // from its last finished case) before it is killed; 0: no limit.
  double case_timeout_s = 0;
  // Called, with the lock held, whenever the merged results change, before
  // they are written: progress, and context that the run adds.
  std::function<void(ResultsMerger&)> on_change;
  nlohmann::json carried = nlohmann::json::array();  // ResultsFile::carried(): kept in the file until rerun
  std::size_t name_width = 0;    // the children's console name column: the run's widest name
  // The line every child is let through its gate with (gate_line() in the
  // child; "" for none): the energy counter's resolution. Called once, on a
  // thread of its own, while the first children start; empty: no line.
  std::function<std::string()> gate_line;
};

struct ChildrenOutcome {
  std::size_t entries = 0;      // entries in the merged results
  std::size_t runs_merged = 0;  // of them, the ones the children finished (not made up for unfinished cases)
  std::size_t deaths = 0;       // children that did not exit by themselves with status 0 (but timeouts)
  std::size_t timeouts = 0;     // cases that ran past case_timeout_s (each an error result; its child killed)
  int signal = 0;               // SIGINT/SIGTERM/SIGHUP that stopped the run (passed on to the children), or 0
  std::string write_error;      // why the results could not be written (the run stopped), or ""
  nlohmann::json document;      // the merged results
};

// Runs this program (/proc/self/exe) for each group with --child-plan (its
// cases, and `run` with the group's device: how to measure them),
// --benchmark_out and, where its cases read a file, --child-input: the entries of one device one after
// another, the devices at the same time. Each case a child finishes is merged
// into `out_path` (rewritten whole, through a rename) as soon as the child's
// file shows it, so `out_path` holds every finished case while a group runs;
// a child's unfinished cases become error results when it ends. `out_path` is
// written only once a child has finished a case: a run that finishes none
// leaves an earlier file as it was. Children's files and a manifest live in
// "<out_path>.groups/" until the end (a run killed by SIGKILL leaves them for
// the next run to recover: clean_leftovers in orchestrate/merge.hpp). A SIGINT,
// SIGTERM or SIGHUP is passed on to the running children; their finished cases are
// merged, no further group starts, and `signal` says which one came (the
// caller then dies of it). A case that runs past case_timeout_s has its child
// killed; it becomes an error result and the rest of its group run in a new
// child. A failed write stops the run: the running children
// are stopped, `out_path` keeps its last complete version, `write_error` says why.
ChildrenOutcome run_children(const ChildRun& run, const std::vector<HeapGroup>& groups, const std::string& out_path,
                             const ChildrenSettings& settings);


}  // namespace heapbench
