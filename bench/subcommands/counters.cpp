// heapbench counters: every counter a results file may hold, and the APIs' traits.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "orchestrate/exit_codes.hpp"
#include "subcommand.hpp"
#include "report/counter_units.hpp"
#include "plan/benchmark_flags.hpp"  // help_of
#include "report/results_file.hpp"  // add_declarations

namespace heapbench {
namespace {

// `heapbench counters`: the counter declarations (counter_units.cpp) and the
// APIs' traits, as every results file carries them; docs/metrics.md's test reads these.
class CountersCommand final : public ParsedCommand {
 public:
  explicit CountersCommand(CLI::App& app) {
    app.description("heapbench counters: every counter heapbench writes (name, unit, direction, meaning) and the APIs' "
                     "traits");
    add_help(app);
    app.add_flag("--json", json_, "The \"counters\" and \"apis\" blocks of a results file, as JSON");
    app.allow_extras(false);
  }

  int run(const CLI::App& app, const DeviceHooks&) override {
    if (printed_help(app)) return kExitOk;
    if (json_) {
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

 private:
  bool json_ = false;
};

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(counters, "Every counter a results file may hold: unit, whether higher is better, meaning (--json: as the file's blocks)", heapbench::CountersCommand)
