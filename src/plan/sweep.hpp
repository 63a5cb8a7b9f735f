#pragma once
// The axes of a sweep and the order its cases run in.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cases/axes.hpp"
#include "heapbench/case.hpp"

namespace heapbench {

struct Sweep {
  std::vector<std::string> patterns;
  std::vector<std::string> apis;
  std::vector<std::uint64_t> sizes;
  std::vector<std::uint64_t> aligns;  // used only for APIs that take an alignment
  std::vector<std::uint64_t> heaps;
  // Leaves out points whose demand (heap_footprint: threads x size, each call
  // at least kMinHeapBlock in CUDA's heap) exceeds this fraction of the heap:
  // on an H200 such points spend seconds per kernel in failing mallocs
  // (2^20 x 1 KiB on 64 MiB: 13.5 s). 0 keeps every point.
  double max_demand_fraction = 0.0;
  std::vector<std::string> graphs = {"rmat"};  // rmat, grid, or a --graph file's name
  std::string graph_file;                      // the --graph file (its name is among graphs)
  std::string trace, trace_file;               // replay: the --trace file's name and path
  std::string input_hash;                      // graph_file's or trace_file's content hash as read while parsing
  std::string note;                            // one line the parent prints on stderr ("": none): a trace's unmatched releases
  std::uint64_t replay_device_bytes = 0;       // replay: the device memory its plan takes beside the heap (trace::replay_device_bytes)

  // Any axis a flag sets, by its key (what options.cpp does with every axis
  // flag). The swept rows of the axis table (axes.hpp: threads, size_min,
  // load_pct, writes) are kept by key: each is expanded only for the patterns
  // that take it, and a part that does not set one takes its row's fallback.
  // size, align and the limits (malloc_heap, printf_fifo) go to sizes, aligns
  // and heaps, which have rules of their own in plan_cases (heap-major order,
  // only the sizes a pattern takes, alignments only for an API that takes
  // one); the names of pattern, api and graph to patterns, apis and graphs.
  // Each throws std::logic_error for a key that is no such axis (or of the
  // other kind: names, integers).
  Sweep& set(std::string_view axis, std::vector<std::uint64_t> values);
  std::vector<std::uint64_t> values(const AxisDecl& axis) const;
  std::vector<std::uint64_t> values(std::string_view axis) const;
  Sweep& set_names(std::string_view axis, std::vector<std::string> names);
  const std::vector<std::string>& names(std::string_view axis) const;

 private:
  // The named member that holds `axis` (nullptr: none holds it), for the
  // accessors above: one place maps a key to its member.
  static std::vector<std::uint64_t> Sweep::*integers_of(std::string_view axis);
  static std::vector<std::string> Sweep::*names_of(std::string_view axis);

  std::map<std::string, std::vector<std::uint64_t>, std::less<>> spans_;
};

// The least room CUDA's device heap gives one allocation, whatever it asks
// for: on an H200 a fill with 16 B blocks held 17.3 % of the heap where 64 B
// blocks held 69.2 %, both about 92 B of heap per block
// (results/H200_2026-11-30_default-sweep_19709e3.json, capacity/malloc at 8 MiB).
// So 2^20 threads x 16 B (or 24 B) take as much of a heap as 2^20 x 64 B:
// 64 MiB asked of a 64 MiB heap, which then fills, and failing calls on a
// full heap spent the 5 s kernel budget on every run of the default sweep.
inline constexpr std::uint64_t kMinHeapBlock = 64;

// The bytes a case's allocations take of its heap at once, as
// max_demand_fraction weighs them: threads x size, and for the APIs that
// allocate from CUDA's heap (malloc, aligned, cuda_std_aligned, new) at least
// kMinHeapBlock per allocation call.
std::uint64_t heap_footprint(const Case& c);

// The default sweep, in parts (each a Sweep whose fields are set by name):
//  - spine: per_thread/malloc over the full axes (sizes across the allocator's
//    size classes with odd sizes between them, one warp to 2^20 threads, 8 MiB --
//    CUDA's default -- to 1 GiB heaps);
//  - matrix: every round pattern x API on a smaller grid, with the bump and alloca baselines;
//  - capacity, capacity_large: capacity fills of 8 MiB (every size) and 64 MiB (4 KiB, 64 KiB);
//  - failure_curve: a fixed 8 MiB demand against heaps of 4 to 32 MiB;
//  - capacity_fill: the first fill alone, 64 K threads on 64 MiB;
//  - printf_fifo: printf into FIFOs of 1, 8 and 64 MiB;
//  - stack: alloca against malloc over sizes.
// A new part is one more Sweep here; a new axis one more row of the axis table
// (axes.hpp), whose values a part sets with Sweep::set.
std::vector<Sweep> default_sweep();

// A first look (--sweep=quick): every pattern x API once, at 64 B and 65,536
// threads on a 1 GiB heap (capacity: 64 B blocks, 1024 threads, 8 MiB; printf:
// one 8-byte argument, 1024 threads, CUDA's 8 MiB FIFO).
std::vector<Sweep> quick_sweep();

// The size-class map (--sweep=size_map): the size_map pattern with malloc at
// 256 threads on a 1 GiB heap, over size_map_sizes(): every 16 B from 16 B to
// 8 KiB, then 8 sizes per doubling up to 1 MiB (568 sizes).
std::vector<std::uint64_t> size_map_sizes();
std::vector<Sweep> size_map_sweep();

// The allocator zoo on the survey's grid (--sweep=zoo, docs/zoo.md): every
// built allocator adapter with a handle (the zoo's, the bundled ones, those of
// HEAPBENCH_ALLOCATORS: zoo_apis()) beside malloc and bump as references, at
// the points GPUMemManSurvey measured:
//  - per_thread at 10,000 and 100,000 threads x 16, 32, ..., 8192 B (2 GiB heap);
//  - scaling: per_thread at 2^10 ... 2^20 threads x 16 and 64 B;
//  - per_warp and per_block, cross_kernel and cross_kernel_remote_free at
//    100,000 threads x 16, 64, 256, 1024 and 4096 B;
//  - churn at 64 B and 4 KiB, 65,536 threads;
//  - capacity (utilisation at the first NULL, then the refills: recovery) at
//    1024 threads, every size of the capacity part on 16 MiB and 4 KiB, 64 KiB
//    on 64 MiB.
// The round patterns run on 1 GiB but the first part; 16 MiB is the least heap
// a zoo allocator takes (gallatin: one segment).
std::vector<std::string> zoo_apis();
std::vector<Sweep> zoo_sweep();

// The workloads (--sweep=workloads, docs/workloads.md): what an application
// pays for allocating in a kernel, and what it would pay without:
//  - output: every strategy (each heap API and allocator adapter with one
//    allocation per thread, warp_aggregated, two_pass, two_pass_async) at 10^3
//    ... 10^6 threads x sizes of 4-64 B (1 GiB heap) and 4-4096 B (4 GiB), the
//    producing launch writing its output or not;
//  - graph: R-MAT and grid graphs of 2^16 vertices, initialised from CSR into
//    per-vertex blocks, then batches of edge insertions and deletions;
//  - hash: 10^5 and 10^6 keys at load factors 0.5 and 2, 16-byte values.
std::vector<Sweep> workloads_sweep();

// Cases over one or more sweeps (each part's names turned into traits once;
// unknown names and unsupported pattern x API pairs skipped, duplicates
// dropped), ordered heap-major so a run resets the device once per
// distinct heap size whatever a filter selects.
std::vector<Case> plan_cases(const std::vector<Sweep>& sweeps);

// Sorts any case list into run order (heap-major). Stable for equal keys.
void sort_run_order(std::vector<Case>& cases);

}  // namespace heapbench
