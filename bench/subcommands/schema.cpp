// heapbench schema: the JSON Schema of a results file.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app.hpp"
#include "orchestrate/exit_codes.hpp"
#include "subcommand.hpp"
#include "report/results_schema.hpp"
#include "cases/axis_docs.hpp"
#include "plan/benchmark_flags.hpp"  // help_of

namespace heapbench {
namespace {

// `heapbench schema`: the JSON Schema of a results file, made from the counter
// and axis declarations (report/results_schema.hpp); docs/results.schema.json
// is its output (the test results_schema checks it).
class SchemaCommand final : public ParsedCommand {
 public:
  explicit SchemaCommand(CLI::App& app) {
    app.description("heapbench schema: the JSON Schema every results file this program writes validates against "
                    "(docs/results.schema.json), made from its counter and axis declarations");
    add_help(app);
    std::vector<std::string> names(axis_doc_names().begin(), axis_doc_names().end());
    app.add_option("--doc", doc_,
                   fmt::format("In the place of the schema, a list the docs keep made from the axis table, as "
                               "markdown: {} (scripts/regen-docs puts each between its markers in docs/)",
                               fmt::join(names, " or ")))
        ->check(CLI::IsMember(names));
    app.allow_extras(false);
  }

  int run(const CLI::App& app, const DeviceHooks&) override {
    if (printed_help(app)) return kExitOk;
    if (!doc_.empty()) {
      fmt::print("{}", axis_doc(doc_));
      return kExitOk;
    }
    fmt::print("{}\n", results_schema().dump(2));
    return kExitOk;
  }

 private:
  std::string doc_;
};

}  // namespace
}  // namespace heapbench

HEAPBENCH_SUBCOMMAND(schema, "The JSON Schema of a results file, made from the counter and axis declarations "
                     "(docs/results.schema.json)", heapbench::SchemaCommand)
