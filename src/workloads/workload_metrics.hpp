#pragma once
// The workloads' counters (docs/metrics.md, "Workloads"): what each round of
// output, graph and hash observed, and the reducers that turn the accepted
// batches into the results file's figures. Plain C++, tested on the host.
#include <cstdint>
#include <memory>
#include <string>

#include "measure/iteration_result.hpp"
#include "measure/reducer.hpp"

namespace heapbench {

// What a round of each workload counted, on the GPU or on the CPU (the
// stand-in device): the timed launches count only what went wrong, the
// verifier the rest. unsigned long long: what CUDA's atomics take.
struct OutputCounts {
  unsigned long long reported_nulls;  // outputs the strategy said it could not obtain
  unsigned long long present, bytes, nulls, not_started, misaligned, corrupted;  // the verifier's
};
struct HashCounts {
  unsigned long long nulls, timed_out, missing;
  unsigned long long faults[2];  // keys looked up wrong after the inserts, after the deletes
  unsigned long long nodes[2];   // nodes in the chains then
  unsigned long long kinds;      // HashFault bits seen (hash_body.hpp)
};
struct GraphCounts {
  unsigned long long nulls, timed_out, wrong_lists;
};
// A graph round's work, known on the host before it runs.
struct GraphShape {
  std::uint64_t vertices = 0, edges = 0, updates = 0, blocks = 0;
};

// A round's result from its counts and phase seconds: the verdict (an error's
// reason in IterationResult::problem) and what the reducers read. The one
// place each workload's checks become words.
IterationResult output_result(const OutputCounts& c, std::uint64_t threads, double produce_s, double release_s);
IterationResult hash_result(const HashCounts& c, std::uint64_t keys, const double (&seconds)[3]);
IterationResult graph_result(const GraphCounts& c, const GraphShape& g, const double (&seconds)[3]);
// "missing, present twice, ..." for HashFault bits.
std::string hash_fault_kinds(unsigned long long kinds);

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
