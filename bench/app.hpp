#pragma once
// heapbench's program, reaching the device through hooks: the real binary
// passes the CUDA ones (bench/main.cpp); tests pass a device that needs no GPU.
#include <memory>
#include <vector>

#include "device_hooks.hpp"

namespace CLI {
class App;
class Option;
}

namespace heapbench {

int run_heapbench(int argc, char** argv, const DeviceHooks& hooks);

// A subcommand's flags, built into its CLI::App of heapbench's tree, which
// live here past the parse; run() reads them.
class ParsedCommand {
 public:
  virtual ~ParsedCommand() = default;
  // After the tree parsed a command line that named this subcommand: its exit
  // status (exit_codes.hpp). `app` is its CLI::App of the tree.
  virtual int run(const CLI::App& app, const DeviceHooks& hooks) = 0;

 protected:
  // -h,--help on the subcommand's app, and, in run(), its help printed from
  // that app when it was given (true: run() returns kExitOk).
  CLI::Option* add_help(CLI::App& app, const char* text = "Print this help message and exit");
  bool printed_help(const CLI::App& app) const;

 private:
  bool help_ = false;
};

// `heapbench NAME ...`: `build` fills NAME's CLI::App of heapbench's tree
// (description, flags) and returns what runs it once the tree has parsed.
struct Subcommand {
  const char* name;
  const char* summary;  // one line, for heapbench --help
  std::unique_ptr<ParsedCommand> (*build)(CLI::App& app);
};
// Every subcommand, in the order --help lists them.
const std::vector<const Subcommand*>& subcommands();

}  // namespace heapbench

// A subcommand is a file of bench/subcommands/, <stem>.cpp, that ends with
//   HEAPBENCH_SUBCOMMAND(<stem>, "one line for --help", <Command>)
// where <Command> is a ParsedCommand whose constructor takes its CLI::App and
// builds its flags into it (subcommand.hpp has what the device ones share),
// and a heapbench_subcommand(<stem>) line in CMakeLists.txt, which lists it in
// subcommands() (through the generated subcommand_list.hpp).
#define HEAPBENCH_SUBCOMMAND(stem, summary, Command)                                                      \
  namespace heapbench::commands {                                                                        \
  extern const Subcommand stem;                                                                          \
  const Subcommand stem{#stem, summary,                                                                  \
                        [](CLI::App& app) -> std::unique_ptr<ParsedCommand> {                           \
                          return std::make_unique<Command>(app);                                         \
                        }};                                                                              \
  }
