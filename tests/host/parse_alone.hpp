#pragma once
// For the host tests: one command's part of heapbench's CLI::App tree, built
// by the same builder the program's tree uses (RunCommandLine,
// AdviseCommandLine, check::CheckCommandLine) into an app of its own, parsed
// with the same parse_argv. The program has one tree (bench/app.cpp,
// CommandTree); these let a test reach one command's options without the
// program.
#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

#include "advise/advise.hpp"
#include "check/check.hpp"
#include "plan/benchmark_flags.hpp"
#include "plan/options.hpp"

namespace heapbench {

// The run's options. `subcommands` (name, one-line summary): what --help lists
// besides the flags, as the tree's root lists its subcommands.
using SubcommandList = std::vector<std::pair<std::string, std::string>>;
inline Options parse_options(int argc, const char* const* argv, const SubcommandList& subcommands = {},
                             InputReaders readers = {}) {
  CLI::App app;
  RunCommandLine run(std::move(readers));
  run.build(app);
  std::vector<CLI::App*> listed;  // listed by --help only, as the tree's disabled ones
  for (const auto& [name, summary] : subcommands) listed.push_back(app.add_subcommand(name, summary)->disabled());
  parse_argv(app, argc, argv);
  for (CLI::App* sub : listed) sub->disabled(false);  // the usage line names them ("[SUBCOMMAND]")
  return run.options(app, argc, argv);
}

// argv[0] is "advise".
inline AdviseOptions parse_advise_options(int argc, const char* const* argv) {
  CLI::App app;
  app.name("heapbench advise");
  AdviseCommandLine advise;
  advise.build(app);
  parse_argv(app, argc, argv);
  return advise.options(app);
}

namespace check {
// argv[0] is "check".
inline CheckOptions parse_check_options(int argc, const char* const* argv, const std::vector<std::string>& known_apis) {
  CLI::App app;
  app.name("heapbench check");
  CheckCommandLine check;
  check.build(app);
  parse_argv(app, argc, argv);
  return check.options(app, known_apis);
}
}  // namespace check

}  // namespace heapbench
