#pragma once
// The workloads' counters (docs/metrics.md, "Workloads"): what each round of
// output, graph and hash observed, and the reducers that turn the accepted
// batches into the results file's figures. Plain C++, tested on the host.
#include <cstdint>
#include <memory>

#include "heapbench/reducer.hpp"

namespace heapbench {

// output: outputs_per_s and output_bytes_per_s (outputs, and their bytes,
// obtained per second of round time: produce plus release), fail_rate (outputs
// not obtained / outputs asked for), produce_s and release_s (seconds per
// round), heap_bytes. Reads IterationResult::tally: attempts (outputs asked
// for), successes, bytes, alloc_seconds (produce), free_seconds (release).
std::unique_ptr<Reducer> output_reducer();

// What a round of a phased workload (graph, hash) observed: the seconds of
// each timed phase, the operations each did, and the allocation calls.
struct PhasedRaw {
  static constexpr int kPhases = 3;
  double seconds[kPhases] = {};            // graph: init, update, release; hash: insert, delete, release
  std::uint64_t operations[kPhases] = {};  // graph: edges placed, edge updates, vertices freed; hash: inserts, deletes, frees
  std::uint64_t allocations = 0;           // allocation calls that returned a block
  std::uint64_t frees = 0;
  std::uint64_t rounds = 0;
};

// graph: init_s, update_s, release_s (seconds per round), edges_per_s (edges
// placed by the initialisation per second of it), edge_updates_per_s
// (insertions and deletions per second of the update launches), allocs_per_s
// (allocation calls per second of init and update), heap_bytes.
std::unique_ptr<Reducer> graph_reducer();

// hash: insert_s, delete_s, release_s (seconds per round), inserts_per_s,
// deletes_per_s (per second of their launches), heap_bytes.
std::unique_ptr<Reducer> hash_reducer();

}  // namespace heapbench
