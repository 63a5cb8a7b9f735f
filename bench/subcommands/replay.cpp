// heapbench replay TRACE: a recorded trace run again against each allocator.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "app.hpp"
#include "orchestrate/exit_codes.hpp"
#include "plan/benchmark_flags.hpp"  // help_of

namespace heapbench {
namespace {

// replay's --help, from its app of the tree: its description, how its line
// reads (TRACE, then heapbench's flags, which it passes on), what it is the
// same as (its footer), and its own flags.
class ReplayHelp final : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App*, std::string name) const override {
    return fmt::format("usage: {} TRACE [--apis=...] [--heaps=...] [--benchmark_out=FILE] [heapbench's flags]\n", name);
  }
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    return make_description(app) + "\n" + make_usage(app, name) + "\n" + make_footer(app) + make_groups(app, mode);
  }
};

// `heapbench replay TRACE [flags]`: the main program with --trace=TRACE
// (docs/trace.md), so a replay is an ordinary run: results file, isolation,
// --apis, --heaps, --benchmark_filter. Its app of the tree declares its own
// flag (--help, before TRACE) and takes the rest of the line whole (a prefix
// command), which the main program then parses.
class ReplayCommand final : public ParsedCommand {
 public:
  explicit ReplayCommand(CLI::App& app) {
    app.description("heapbench replay: a recorded trace's launches (heapbench/trace.cuh) run again against each "
                    "allocator");
    app.footer("The same as heapbench --trace=TRACE: every flag of heapbench --help but --sweep, --patterns, --sizes\n"
               "and --threads, which the trace sets. docs/trace.md describes the file and what a replay reports.");
    add_help(app, "Print this and exit")->group("Flags");
    app.formatter(std::make_shared<ReplayHelp>());
    app.allow_extras();
    app.prefix_command();
  }

  int run(const CLI::App& app, const DeviceHooks& hooks) override {
    if (printed_help(app)) return kExitOk;
    const std::vector<std::string> given = app.remaining();
    const std::string first = given.empty() ? "" : given.front();
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

 private:
};

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(replay, "A recorded trace's allocations (heapbench/trace.cuh) run again against each allocator (docs/trace.md)", heapbench::ReplayCommand)
