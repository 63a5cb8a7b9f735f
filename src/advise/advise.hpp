#pragma once
// Heap-size advice (`heapbench advise`): the workload as a user knows it, the
// heapbench case that runs it, and the search for the smallest
// cudaLimitMallocHeapSize at which every allocation of it succeeds. Pure host
// code; the flow that runs the probes on a device is bench/subcommands/advise.cpp.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heapbench/case.hpp"

namespace CLI {
class App;
}

namespace heapbench {

// Bytes per allocation as a user describes them:
//   "1000", "4K"        fixed
//   "16-256"            uniform over [16, 256]
//   "64:3,1K:1"         a list of sizes with weights (here 3/4 of calls ask 64 B)
struct SizeDistribution {
  enum class Kind { fixed, uniform, weighted };
  Kind kind = Kind::fixed;
  std::uint64_t lo = 0, hi = 0;                               // fixed: lo == hi
  std::vector<std::pair<std::uint64_t, double>> weighted;     // size, weight (> 0)

  double mean_bytes() const;
  std::string text() const;  // the form it was given in, normalised ("16-256")
};

// Throws std::invalid_argument naming what does not parse.
SizeDistribution parse_size_distribution(const std::string& text);

struct Workload {
  std::uint64_t threads = 0;
  SizeDistribution size;            // bytes per thread (per_warp: lane 0 asks 32x, per_block: thread 0 asks 256x)
  std::string pattern = "per_thread";
  std::string api = "malloc";
  std::uint64_t align = 16;         // aligned APIs only
  // --trace: a recorded program (docs/trace.md) instead, replayed on each heap:
  // pattern "replay", threads and size its largest launch and request, its
  // demand the most bytes it held live.
  std::string trace_file, trace;
  std::string trace_hash;  // trace_file's content hash as read here: every round is pinned to it
  std::uint64_t trace_peak_bytes = 0;
  std::uint64_t trace_device_bytes = 0;  // the device memory its replay plan takes beside the heap (trace::replay_device_bytes)
};

// The case that runs the workload on a heap of `heap` bytes: per_thread,
// per_warp or per_block at a fixed size; per_thread_mixed for a uniform range
// starting at 16 B (its seeded distribution). Throws std::invalid_argument for
// what no heapbench pattern runs (a weighted list, a range not starting at 16 B
// or min(16, hi), a distribution with per_warp/per_block, an unknown
// pattern/API pair).
Case workload_case(const Workload& w, std::uint64_t heap);

// Bytes the workload asks for in one round (what its case requests, exactly).
std::uint64_t workload_demand(const Workload& w);
// The same; nullopt where it does not fit in 64 bits (AdviseCommandLine::options refuses such a workload).
std::optional<std::uint64_t> checked_workload_demand(const Workload& w);

// What one run of the workload on one heap size saw.
struct HeapProbe {
  std::uint64_t heap_mib = 0;
  std::uint64_t heap_bytes = 0;     // as the device reports it
  std::uint64_t attempts = 0;       // allocation calls made (summed over rounds)
  std::uint64_t successes = 0;
  std::uint64_t bytes = 0;          // bytes obtained
  std::uint64_t not_started = 0;    // calls that found the kernel budget spent
  double seconds = 0;               // wall time of the probe, reset included
  int rounds = 0;

  bool all_succeeded() const { return not_started == 0 && attempts > 0 && successes == attempts; }
  double fail_rate() const {
    return attempts == 0 ? 0.0 : static_cast<double>(attempts - successes) / static_cast<double>(attempts);
  }
};

struct HeapSearch {
  std::optional<std::uint64_t> min_mib;  // smallest heap (MiB) seen to hold every allocation; none up to max
  std::optional<std::uint64_t> max_failing_mib;  // largest heap seen to fail (bisection's lower end)
  std::vector<HeapProbe> probes;         // in the order they ran
};

// The smallest heap, in whole MiB (what --heaps and cudaDeviceSetLimit take
// here), for which `run` reports every allocation successful. Assumes more
// heap never makes an allocation fail. Below the demand nothing can succeed,
// so that is not run; from twice the demand the heap doubles until a run
// succeeds (at most `max_mib`), then bisects until the bracket is at most
// max(1 MiB, `tolerance` x its upper end). No heap size runs twice.
HeapSearch find_min_heap(std::uint64_t demand_bytes, std::uint64_t max_mib, double tolerance,
                         const std::function<HeapProbe(std::uint64_t heap_mib)>& run);

// The heap to set: `min_mib` x (1 + margin), rounded up to whole MiB.
std::uint64_t advised_mib(std::uint64_t min_mib, double margin);

// The line to paste before the first kernel that calls malloc.
std::string set_limit_code(std::uint64_t mib);

// What `heapbench advise` was asked (AdviseCommandLine).
struct AdviseOptions {
  Workload workload;
  int device = 0;
  double margin = 0.10;           // --margin, fraction
  double tolerance = 0.02;        // --tolerance, fraction
  int rounds = 1;                 // --rounds per heap size
  double kernel_budget_s = 20.0;  // --kernel-budget-ms
  std::uint64_t max_heap = 0;     // --max-heap (0: 3/4 of the device's memory)
  std::optional<std::string> out; // --out: the advice as JSON
  bool help = false;
  std::string help_text;          // with --help: what it prints, from the app that parsed
};

struct AdviseParsed;

// heapbench advise's flags, built into its subcommand's CLI::App of
// heapbench's tree (bench/subcommands/advise.cpp) and read back once the tree
// has parsed; the values CLI11 fills live in here.
class AdviseCommandLine {
 public:
  AdviseCommandLine();
  ~AdviseCommandLine();
  AdviseCommandLine(const AdviseCommandLine&) = delete;
  AdviseCommandLine& operator=(const AdviseCommandLine&) = delete;
  // The description and flags, into `app` (named by the caller).
  void build(CLI::App& app);
  // After `app` parsed (argv[0] "advise"): the options. Throws UsageError
  // (options.hpp) naming the bad value: no --threads, no --size, zero threads,
  // a distribution that does not parse, one no pattern runs, margins out of range.
  AdviseOptions options(const CLI::App& app) const;

 private:
  std::unique_ptr<AdviseOptions> o_;
  std::unique_ptr<AdviseParsed> p_;
};

}  // namespace heapbench
