// heapbench replay TRACE: a recorded trace run again against each allocator.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "app.hpp"
#include "exit_codes.hpp"

namespace heapbench {
namespace {

// `heapbench replay TRACE [flags]`: the main program with --trace=TRACE
// (docs/trace.md), so a replay is an ordinary run: results file, isolation,
// --apis, --heaps, --benchmark_filter. Its app of the tree takes the line
// whole (a prefix command), which the run then parses.
class ReplayCommand final : public ParsedCommand {
 public:
  explicit ReplayCommand(CLI::App& app) {
    app.allow_extras();
    app.prefix_command();
  }

  int run(const CLI::App& app, const DeviceHooks& hooks) override {
    const std::vector<std::string> given = app.remaining();
    const std::string first = given.empty() ? "" : given.front();
    if (first == "-h" || first == "--help") {
      fmt::print("heapbench replay: a recorded trace's launches (heapbench/trace.cuh) run again against each allocator\n\n"
                 "usage: heapbench replay TRACE [--apis=...] [--heaps=...] [--benchmark_out=FILE] [heapbench's flags]\n\n"
                 "The same as heapbench --trace=TRACE: every flag of heapbench --help but --sweep, --patterns, --sizes\n"
                 "and --threads, which the trace sets. docs/trace.md describes the file and what a replay reports.\n\n"
                 "Flags:\n"
                 "  -h,--help                   Print this and exit\n");
      return kExitOk;
    }
    if (first.empty() || first[0] == '-') {
      fmt::print(stderr, "heapbench replay: give the trace file first: heapbench replay TRACE [flags] (see heapbench "
                         "replay --help)\n");
      return kExitUsage;
    }
    std::vector<std::string> args{"heapbench", "--trace=" + first};
    args.insert(args.end(), given.begin() + 1, given.end());
    std::vector<char*> ptrs;
    for (auto& a : args) ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    return run_heapbench(static_cast<int>(args.size()), ptrs.data(), hooks);
  }
};

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(replay, "A recorded trace's allocations (heapbench/trace.cuh) run again against each allocator (docs/trace.md)", heapbench::ReplayCommand)
