#include "heapbench/options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "heapbench/parse.hpp"

namespace heapbench {
namespace {

struct Parsed {
  std::string sizes, threads, heaps;
  double max_demand_fraction = -1.0;  // <0: not given
  int device = 0;
  double kernel_budget_ms = 5000.0;
  std::string out;
  bool list_tests = false;
  bool help = false;
};

void add_flags(CLI::App& app, Parsed& p) {
  app.set_help_flag();  // --help is ours: it prints these flags and then Google Benchmark's.
  app.add_flag("-h,--help", p.help, "Print heapbench's and Google Benchmark's flags and exit");
  app.add_option("--sizes", p.sizes, "Bytes per allocation, comma-separated, K/M/G suffixes (e.g. 16,1K,4K)");
  app.add_option("--threads", p.threads, "Concurrently allocating threads (e.g. 32,100000,1M)");
  app.add_option("--heaps", p.heaps, "cudaLimitMallocHeapSize values, whole MiB (e.g. 8M,1G)");
  app.add_option("--max-demand-fraction", p.max_demand_fraction,
                 "Skip points whose threads x size exceeds this fraction of the heap "
                 "(default 0.5 for the built-in sweep, 0 = keep all when an axis is given)");
  app.add_option("--device", p.device, "CUDA device index (default 0)");
  app.add_option("--kernel-budget-ms", p.kernel_budget_ms,
                 "Deadline for one allocating kernel; threads that find it passed do not allocate "
                 "and the case is reported as an error (default 5000)");
  app.add_option("--benchmark_out", p.out,
                 "Results file (Google Benchmark JSON); an existing file is replaced only by a run that produced results");
  app.add_flag("--benchmark_list_tests{true}", p.list_tests, "List the cases and exit (needs no GPU)");
  app.allow_extras();
}

std::vector<std::uint64_t> axis(const std::string& flag, const std::string& text) {
  try {
    return parse_quantity_list(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("{}={}: {}", flag, text, e.what()));
  }
}

}  // namespace

Options parse_options(int argc, const char* const* argv) {
  CLI::App app{"heapbench: throughput and limits of CUDA's device heap", "heapbench"};
  Parsed p;
  add_flags(app, p);
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 takes them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }

  Options o;
  o.help = p.help;
  o.list_tests = p.list_tests;
  o.sweep = default_sweep();
  bool axis_given = false;
  if (!p.sizes.empty() || app.count("--sizes")) { o.sweep.sizes = axis("--sizes", p.sizes); axis_given = true; }
  if (!p.threads.empty() || app.count("--threads")) { o.sweep.threads = axis("--threads", p.threads); axis_given = true; }
  if (!p.heaps.empty() || app.count("--heaps")) { o.sweep.heaps = axis("--heaps", p.heaps); axis_given = true; }
  for (auto t : o.sweep.threads) {
    if (t > kMaxThreads) throw UsageError(fmt::format("--threads: {} is more than the {} heapbench supports", t, kMaxThreads));
  }
  for (auto h : o.sweep.heaps) {
    if (h % kMiB != 0) throw UsageError(fmt::format("--heaps: {} bytes is not a whole number of MiB", h));
  }
  if (axis_given) o.sweep.max_demand_fraction = 0.0;
  if (app.count("--max-demand-fraction")) {
    if (!(p.max_demand_fraction >= 0.0)) {
      throw UsageError(fmt::format("--max-demand-fraction={}: must be >= 0", p.max_demand_fraction));
    }
    o.sweep.max_demand_fraction = p.max_demand_fraction;
  }
  if (p.device < 0) throw UsageError(fmt::format("--device={}: must be >= 0", p.device));
  o.device = p.device;
  if (!(p.kernel_budget_ms > 0.0)) throw UsageError(fmt::format("--kernel-budget-ms={}: must be > 0", p.kernel_budget_ms));
  o.kernel_budget_s = p.kernel_budget_ms / 1000.0;
  if (app.count("--benchmark_out")) {
    if (p.out.empty()) throw UsageError("--benchmark_out: empty path");
    o.out = p.out;
  }

  o.benchmark_args.emplace_back(argc > 0 ? argv[0] : "heapbench");
  // Google Benchmark's default of 0.5 s per case would make a default sweep take
  // many minutes of wall time (each iteration also launches untimed verification
  // kernels); a user's own --benchmark_min_time comes later and wins.
  o.benchmark_args.emplace_back("--benchmark_min_time=0.1");
  if (o.list_tests) o.benchmark_args.emplace_back("--benchmark_list_tests=true");
  for (const auto& extra : app.remaining()) o.benchmark_args.push_back(extra);
  return o;
}

std::string options_help() {
  CLI::App app{"heapbench: throughput and limits of CUDA's device heap", "heapbench"};
  Parsed p;
  add_flags(app, p);
  return app.help();
}

}  // namespace heapbench
