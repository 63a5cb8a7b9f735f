// heapbench counters: every counter a results file may hold, and the APIs' traits.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "exit_codes.hpp"
#include "subcommand.hpp"
#include "results/counter_units.hpp"
#include "results/results_file.hpp"  // add_declarations

namespace heapbench {
namespace {

// `heapbench counters`: the counter declarations (counter_units.cpp) and the
// APIs' traits, as every results file carries them; docs/metrics.md's test reads these.
int run_counters(int argc, char** argv, const DeviceHooks&) {
  CLI::App app{"heapbench counters: every counter heapbench writes (name, unit, direction, meaning) and the APIs' traits",
               "heapbench counters"};
  bool json = false;
  app.add_flag("--json", json, "The \"counters\" and \"apis\" blocks of a results file, as JSON");
  if (const auto code = parse_cli(app, "counters", argc, argv)) return *code;
  if (json) {
    nlohmann::ordered_json doc;
    add_declarations(doc);
    fmt::print("{}\n", doc.dump(2));
    return kExitOk;
  }
  constexpr const char* kDirection[] = {"higher is better", "lower is better", "-"};
  for (const CounterDecl& d : counter_declarations()) {
    fmt::print("{:<24} {:<8} {:<17} {}\n", d.name, d.symbol.empty() ? "-" : d.symbol,
               kDirection[static_cast<int>(d.better)], d.description);
  }
  return kExitOk;
}

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(counters, "Every counter a results file may hold: unit, whether higher is better, meaning (--json: as the file's blocks)", heapbench::run_counters)
