// heapbench schema: the JSON Schema of a results file.
#include <fmt/format.h>

#include "app.hpp"
#include "exit_codes.hpp"
#include "subcommand.hpp"
#include "results/results_schema.hpp"

namespace heapbench {
namespace {

// `heapbench schema`: the JSON Schema of a results file, made from the counter
// and axis declarations (results/results_schema.hpp); docs/results.schema.json
// is its output (the test results_schema checks it).
int run_schema(int argc, char** argv, const DeviceHooks&) {
  CLI::App app{"heapbench schema: the JSON Schema every results file this program writes validates against "
               "(docs/results.schema.json), made from its counter and axis declarations",
               "heapbench schema"};
  if (const auto code = parse_cli(app, "schema", argc, argv)) return *code;
  fmt::print("{}\n", results_schema().dump(2));
  return kExitOk;
}

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(schema, "The JSON Schema of a results file, made from the counter and axis declarations "
                     "(docs/results.schema.json)", heapbench::run_schema)
